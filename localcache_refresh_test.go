package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestRefreshAfter: on three instances, reads of an entry older than
// RefreshAfter return the old value at once, one instance reloads it in
// the background (one load across the deployment, counted), and every
// instance then reads the new value.
func TestRefreshAfter(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	var mu sync.Mutex
	source := "v1"
	var loads atomic.Int64
	var starts []time.Time // when each load started
	var ended time.Time    // when the first refresh's load returned
	rt := WithReadThrough(ReadThrough[string, string]{RefreshAfter: 100 * time.Millisecond,
		Load: func(ctx context.Context, key string) (string, error) {
			mu.Lock()
			starts = append(starts, time.Now())
			mu.Unlock()
			if loads.Add(1) > 1 {
				time.Sleep(300 * time.Millisecond) // the lease is held while the others read
			}
			mu.Lock()
			defer mu.Unlock()
			if loads.Load() > 1 && ended.IsZero() {
				ended = time.Now()
			}
			return source, nil
		}})
	var lcs []*LocalCachedMap[string, string]
	for range 3 {
		lc := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{}, rt)
		t.Cleanup(func() { lc.Close() })
		if err := lc.Preload(ctx); err != nil { // subscribed: reads are cached
			t.Fatal(err)
		}
		lcs = append(lcs, lc)
	}
	for _, lc := range lcs {
		if v, _, err := lc.Get(ctx, "k"); err != nil || v != "v1" {
			t.Fatalf("Get = %q, %v; want v1", v, err)
		}
	}
	for _, lc := range lcs { // cached everywhere
		waitFor(t, "refresh", func() bool { _, info, _ := lc.GetWithInfo(ctx, "k"); return info.Cached })
	}
	mu.Lock()
	source = "v2"
	mu.Unlock()
	time.Sleep(150 * time.Millisecond)
	for i, lc := range lcs {
		v, info, err := lc.GetWithInfo(ctx, "k")
		if err != nil || v != "v1" || !info.Cached {
			t.Fatalf("instance %d: stale read = %q, %+v, %v; want the cached v1 at once", i, v, info, err)
		}
	}
	for _, lc := range lcs {
		waitFor(t, "refresh", func() bool { v, _, _ := lc.Get(ctx, "k"); return v == "v2" })
	}
	// The refreshed value is due again RefreshAfter after the refresh's
	// load returned: a slow machine may reach that while the instances
	// read, so only the loads that started before then count.
	mu.Lock()
	early := 0
	for _, at := range starts {
		if at.Before(ended.Add(100 * time.Millisecond)) {
			early++
		}
	}
	mu.Unlock()
	if early != 2 {
		t.Fatalf("loader called %d times before the refreshed value could be due, want 2 (the first load, one refresh across 3 instances)", early)
	}
	var refreshes uint64
	for _, lc := range lcs {
		refreshes += lc.CacheStats().Refreshes
	}
	if n := loads.Load(); refreshes < 1 || refreshes > uint64(n-1) {
		t.Fatalf("Refreshes = %d over the instances, want 1 to %d (one per refresh)", refreshes, n-1)
	}
}

// TestRefreshAfterYieldsToWrites: a value written while a refresh loads
// is not replaced by the refresh's older answer.
func TestRefreshAfterYieldsToWrites(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	var loads atomic.Int64
	lc := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{},
		WithReadThrough(ReadThrough[string, string]{RefreshAfter: 50 * time.Millisecond,
			Load: func(ctx context.Context, key string) (string, error) {
				if loads.Add(1) > 1 {
					started <- struct{}{}
					<-release
					return "from refresh", nil
				}
				return "first", nil
			}}))
	defer lc.Close()
	if err := lc.Preload(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if v, _, _ := lc.Get(ctx, "k"); v != "first" {
		t.Fatalf("Get = %q, want first", v)
	}
	<-started
	other := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer other.Close()
	if _, err := other.FastPut(ctx, "k", "written"); err != nil {
		t.Fatal(err)
	}
	close(release)
	waitFor(t, "refresh", func() bool {
		lc.refresh.mu.Lock()
		defer lc.refresh.mu.Unlock()
		return lc.CacheStats().Refreshes == 1 && len(lc.refresh.keys) == 0
	})
	if v, _, err := lc.GetFromRedis(ctx, "k"); err != nil || v != "written" {
		t.Fatalf("after the refresh, Redis has %q (%v), want the write's value", v, err)
	}
}

// TestRefreshAfterOptions: RefreshAfter negative, or on a MapCache without
// a TTL above it, is ErrInvalidOption.
func TestRefreshAfterOptions(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	load := func(context.Context, string) (string, error) { return "", nil }
	lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{},
		WithReadThrough(ReadThrough[string, string]{Load: load, RefreshAfter: -1}))
	if _, _, err := lc.Get(ctx, "k"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("LocalCachedMap with RefreshAfter -1: %v, want ErrInvalidOption", err)
	}
	for _, ttl := range []time.Duration{0, time.Second, 500 * time.Millisecond} {
		mc := GetMapCache[string, string](c, name, WithReadThrough(ReadThrough[string, string]{Load: load, TTL: ttl, RefreshAfter: time.Second}))
		if _, _, err := mc.Get(ctx, "k"); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("MapCache with RefreshAfter 1s, TTL %v: %v, want ErrInvalidOption", ttl, err)
		}
	}
}
