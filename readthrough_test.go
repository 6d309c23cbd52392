package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// readThroughMaps builds, for each kind of map, n instances of one map on n
// clients with the loader rt, and returns their Get.
func readThroughMaps(t *testing.T, rdb redis.UniversalClient, n int, rt ReadThrough[string, string]) map[string][]func(context.Context, string) (string, bool, error) {
	out := map[string][]func(context.Context, string) (string, bool, error){}
	lcName, mcName := uniqueName(t, rdb), uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), lcName, mcName) })
	for i := 0; i < n; i++ {
		c := newClient(t, rdb, nil)
		lc := GetLocalCachedMap[string, string](c, lcName, LocalCacheOptions{}, WithReadThrough(rt))
		t.Cleanup(func() { lc.Close() })
		out["local cached map"] = append(out["local cached map"], lc.Get)
		mc := GetMapCache[string, string](c, mcName, WithReadThrough(rt))
		out["map cache"] = append(out["map cache"], mc.Get)
	}
	return out
}

// TestReadThroughOneLoadPerKey: concurrent misses of one key on three
// clients call the loader once; every caller gets its value, and later
// reads do not load again.
func TestReadThroughOneLoadPerKey(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	var calls atomic.Int64
	rt := ReadThrough[string, string]{Load: func(ctx context.Context, key string) (string, error) {
		calls.Add(1)
		time.Sleep(50 * time.Millisecond)
		return "v:" + key, nil
	}}
	for kind, gets := range readThroughMaps(t, rdb, 3, rt) {
		calls.Store(0)
		var wg sync.WaitGroup
		errs := make(chan error, 300)
		for i := 0; i < 300; i++ {
			wg.Add(1)
			go func(get func(context.Context, string) (string, bool, error)) {
				defer wg.Done()
				v, ok, err := get(ctx, "k")
				if err != nil || !ok || v != "v:k" {
					errs <- fmt.Errorf("%s: Get(k) = %q, %v, %v; want v:k", kind, v, ok, err)
				}
			}(gets[i%3])
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if got := calls.Load(); got != 1 {
			t.Fatalf("%s: loader called %d times, want 1", kind, got)
		}
		for _, get := range gets {
			if v, ok, err := get(ctx, "k"); err != nil || !ok || v != "v:k" {
				t.Fatalf("%s: Get(k) again = %q, %v, %v", kind, v, ok, err)
			}
		}
		if got := calls.Load(); got != 1 {
			t.Fatalf("%s: loader called %d times after re-reads, want 1", kind, got)
		}
	}
}

// TestReadThroughFailureNotCached: a failed load returns its error to its
// callers and stores nothing; the next Get loads again and succeeds. A
// panicking loader is ErrLoaderPanicked.
func TestReadThroughFailureNotCached(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	boom := errors.New("source down")
	var mode atomic.Int32 // 0 fail, 1 panic, 2 succeed
	rt := ReadThrough[string, string]{Load: func(ctx context.Context, key string) (string, error) {
		switch mode.Load() {
		case 0:
			return "", boom
		case 1:
			panic("loader bug")
		}
		return "ok", nil
	}}
	for kind, gets := range readThroughMaps(t, rdb, 2, rt) {
		mode.Store(0)
		if _, _, err := gets[0](ctx, "k"); !errors.Is(err, boom) {
			t.Fatalf("%s: Get with a failing loader: err %v, want %v", kind, err, boom)
		}
		mode.Store(1)
		if _, _, err := gets[1](ctx, "k"); !errors.Is(err, ErrLoaderPanicked) {
			t.Fatalf("%s: Get with a panicking loader: err %v, want ErrLoaderPanicked", kind, err)
		}
		mode.Store(2)
		if v, ok, err := gets[1](ctx, "k"); err != nil || !ok || v != "ok" {
			t.Fatalf("%s: Get after the failures = %q, %v, %v; want ok", kind, v, ok, err)
		}
	}
}

// TestReadThroughNotFound: a loader's ErrKeyNotFound is an absent key, no
// error; with NotFoundTTL the absence is remembered (no load) until it
// expires or the key is written.
func TestReadThroughNotFound(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	var calls atomic.Int64
	rt := ReadThrough[string, string]{NotFoundTTL: 300 * time.Millisecond,
		Load: func(ctx context.Context, key string) (string, error) {
			calls.Add(1)
			return "", fmt.Errorf("no row: %w", ErrKeyNotFound)
		}}
	for kind, gets := range readThroughMaps(t, rdb, 2, rt) {
		calls.Store(0)
		for i := 0; i < 5; i++ {
			if v, ok, err := gets[i%2](ctx, "none"); err != nil || ok || v != "" {
				t.Fatalf("%s: Get(none) = %q, %v, %v; want absent", kind, v, ok, err)
			}
		}
		if got := calls.Load(); got != 1 {
			t.Fatalf("%s: loader called %d times within NotFoundTTL, want 1", kind, got)
		}
		eventually(t, 10*time.Second, kind+": loads again once the absence expired", func() bool {
			_, _, _ = gets[0](ctx, "none")
			return calls.Load() >= 2
		})
	}
}

// TestReadThroughHangingLoader: a loader that hangs (ignoring its context)
// never keeps a caller past its context, caches nothing, and a waiter on
// another client takes the load over once the lease (LoadTimeout) ends.
func TestReadThroughHangingLoader(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	release := make(chan struct{})
	defer close(release)
	var calls atomic.Int64
	rt := ReadThrough[string, string]{LoadTimeout: 500 * time.Millisecond,
		Load: func(ctx context.Context, key string) (string, error) {
			if calls.Add(1) == 1 {
				<-release // hangs, whatever its context
				return "late", nil
			}
			return "fresh", nil
		}}
	for kind, gets := range readThroughMaps(t, rdb, 2, rt) {
		calls.Store(0)
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		start := time.Now()
		_, _, err := gets[0](short, "k")
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: Get with a hanging loader: err %v, want DeadlineExceeded", kind, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("%s: Get returned %v after its 100ms context", kind, d)
		}
		// The other client waits out the lease, then loads itself.
		if v, ok, err := gets[1](ctx, "k"); err != nil || !ok || v != "fresh" {
			t.Fatalf("%s: Get on another client = %q, %v, %v; want fresh", kind, v, ok, err)
		}
	}
}

// TestReadThroughBadOptions: a loader of other types, a nil Load or a
// negative duration make Get return ErrInvalidOption, with nothing sent.
func TestReadThroughBadOptions(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	load := func(context.Context, string) (string, error) { return "", nil }
	cases := map[string]ObjectOption{
		"types":       WithReadThrough(ReadThrough[int, string]{Load: func(context.Context, int) (string, error) { return "", nil }}),
		"nil load":    WithReadThrough(ReadThrough[string, string]{}),
		"timeout":     WithReadThrough(ReadThrough[string, string]{Load: load, LoadTimeout: -1}),
		"not found":   WithReadThrough(ReadThrough[string, string]{Load: load, NotFoundTTL: -1}),
		"ttl":         WithReadThrough(ReadThrough[string, string]{Load: load, TTL: -1}),
		"ttl on a lc": WithReadThrough(ReadThrough[string, string]{Load: load, TTL: time.Second}),
	}
	for what, opt := range cases {
		name := uniqueName(t, rdb)
		lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}, opt)
		if _, _, err := lc.Get(ctx, "k"); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: LocalCachedMap.Get err %v, want ErrInvalidOption", what, err)
		}
		lc.Close()
		if what == "ttl on a lc" {
			continue
		}
		mc := GetMapCache[string, string](c, name, opt)
		if _, _, err := mc.Get(ctx, "k"); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("%s: MapCache.Get err %v, want ErrInvalidOption", what, err)
		}
		if n, err := rdb.Exists(ctx, name).Result(); err != nil || n != 0 {
			t.Errorf("%s: the map exists after a refused call", what)
		}
	}
}

// TestReadThroughGetAll: GetAll loads its missing keys with one LoadAll
// call, stores them, and reports the keys LoadAll did not return as absent.
func TestReadThroughGetAll(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	var calls, one atomic.Int64
	rt := ReadThrough[string, string]{
		Load: func(ctx context.Context, key string) (string, error) { one.Add(1); return "one:" + key, nil },
		LoadAll: func(ctx context.Context, keys []string) (map[string]string, error) {
			calls.Add(1)
			out := map[string]string{}
			for _, k := range keys {
				if k != "none" {
					out[k] = "all:" + k
				}
			}
			return out, nil
		}}
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	m := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{}, WithReadThrough(rt))
	defer m.Close()
	if _, err := m.FastPut(ctx, "a", "stored"); err != nil {
		t.Fatal(err)
	}
	got, err := m.GetAll(ctx, "a", "b", "c", "none")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"a": "stored", "b": "all:b", "c": "all:c"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("GetAll = %v, want %v", got, want)
	}
	if calls.Load() != 1 || one.Load() != 0 {
		t.Fatalf("LoadAll called %d times, Load %d; want 1 and 0", calls.Load(), one.Load())
	}
	if v, err := rdb.HLen(ctx, name).Result(); err != nil || v != 3 {
		t.Fatalf("the map holds %d entries (%v), want 3: the loaded ones stored", v, err)
	}
}

// TestReadThroughMapCacheHandlesShareOneLoader: MapCache handles made per
// request (GetMapCache does no I/O) share one loader per name: one
// subscription, one set of counts.
func TestReadThroughMapCacheHandlesShareOneLoader(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	rt := WithReadThrough(ReadThrough[string, string]{Load: func(ctx context.Context, key string) (string, error) {
		return "v", nil
	}})
	for i := 0; i < 50; i++ {
		if _, _, err := GetMapCache[string, string](c, name, rt).Get(ctx, fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	if ch := c.Stats().Channels; ch > 2 {
		t.Fatalf("%d channels after 50 handles of one name, want the load channel once", ch)
	}
	if st := GetMapCache[string, string](c, name, rt).CacheStats(); st.Loads != 50 || st.Misses != 50 {
		t.Fatalf("CacheStats = %+v, want 50 loads and misses on the shared loader", st)
	}
	if st := c.Stats().Cache; st.Loads != 50 {
		t.Fatalf("Stats.Cache = %+v, want 50 loads", st)
	}
}
