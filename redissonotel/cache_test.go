package redissonotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	"go.opentelemetry.io/otel/attribute"
)

// The caches' series: hits, misses, loads and their errors, and the size
// of a LocalCachedMap with a loader, read from Stats.Cache; the load's
// duration is the operation "cache.load".
func TestCacheSeries(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	defer tm.obs.RegisterClient(c)()
	ctx := context.Background()
	fail := errors.New("source down")
	m := redisson.GetLocalCachedMap[string, string](c, uniqueName(t), redisson.LocalCacheOptions{},
		redisson.WithReadThrough(redisson.ReadThrough[string, string]{Load: func(_ context.Context, key string) (string, error) {
			if key == "bad" {
				return "", fail
			}
			return "v", nil
		}}))
	defer m.Close()
	defer m.Delete(ctx)
	if _, _, err := m.Get(ctx, "k"); err != nil { // a miss, a load
		t.Fatal(err)
	}
	if _, _, err := m.Get(ctx, "bad"); !errors.Is(err, fail) { // a miss, a failed load
		t.Fatalf("Get(bad) err %v, want %v", err, fail)
	}
	for i := 0; i < 3; i++ {
		if _, _, err := m.Get(ctx, "k"); err != nil { // hits (once the subscription is confirmed)
			t.Fatal(err)
		}
	}
	st := c.Stats().Cache
	rm := tm.collect(t)
	for name, want := range map[string]int64{
		redissonotel.MetricCacheHits:       int64(st.Hits),
		redissonotel.MetricCacheMisses:     int64(st.Misses),
		redissonotel.MetricCacheLoads:      2,
		redissonotel.MetricCacheLoadErrors: 1,
	} {
		if n, ok := counter(rm, name); !ok || n != want {
			t.Errorf("%s = %d (present %v), want %d", name, n, ok, want)
		}
	}
	if st.Misses < 2 {
		t.Errorf("Stats.Cache.Misses = %d, want at least 2", st.Misses)
	}
	if n, ok := gauge(rm, redissonotel.MetricCacheSize); !ok || n != int64(st.Size) {
		t.Errorf("%s = %d (present %v), want %d", redissonotel.MetricCacheSize, n, ok, st.Size)
	}
	if n, _ := histogram(rm, redissonotel.MetricOperationDuration, attribute.String("redisson.operation", "cache.load")); n != 2 {
		t.Errorf("%s{cache.load} count %d, want 2", redissonotel.MetricOperationDuration, n)
	}
}

// The Writers' series: keys written, failed calls, and the write-behind
// queue's length, read from Stats.Cache; each Writer call is the operation
// "cache.write".
func TestCacheWriteSeries(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	defer tm.obs.RegisterClient(c)()
	ctx := context.Background()
	fails := 1
	w := redisson.Writer[string, string]{
		Write: func(context.Context, map[string]string) error {
			if fails > 0 {
				fails--
				return errors.New("source down")
			}
			return nil
		},
		Delete: func(context.Context, []string) error { return nil },
	}
	through := redisson.GetLocalCachedMap[string, string](c, uniqueName(t), redisson.LocalCacheOptions{},
		redisson.WithWriteThrough(w))
	defer through.Close()
	defer through.Delete(ctx)
	if _, err := through.FastPut(ctx, "a", "1"); !errors.Is(err, redisson.ErrWriterFailed) {
		t.Fatalf("first FastPut: %v, want ErrWriterFailed", err)
	}
	if _, err := through.FastPut(ctx, "a", "2"); err != nil {
		t.Fatal(err)
	}
	behind := redisson.GetMapCache[string, string](c, uniqueName(t), redisson.WithWriteBehind(w, redisson.WriteBehind{Delay: time.Hour}))
	defer behind.Delete(ctx)
	for _, k := range []string{"x", "y", "z"} {
		if _, err := behind.FastPut(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	rm := tm.collect(t)
	for name, want := range map[string]int64{
		redissonotel.MetricCacheWrites:      1,
		redissonotel.MetricCacheWriteErrors: 1,
	} {
		if n, ok := counter(rm, name); !ok || n != want {
			t.Errorf("%s = %d (present %v), want %d", name, n, ok, want)
		}
	}
	if n, ok := gauge(rm, redissonotel.MetricCacheWriteQueue); !ok || n != 3 {
		t.Errorf("%s = %d (present %v), want 3", redissonotel.MetricCacheWriteQueue, n, ok)
	}
	if n, _ := histogram(rm, redissonotel.MetricOperationDuration, attribute.String("redisson.operation", "cache.write")); n != 2 {
		t.Errorf("%s{cache.write} count %d, want 2", redissonotel.MetricOperationDuration, n)
	}
}
