package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// mcRefreshSource is a test's source of truth: a value, the loader's calls,
// and whether reloads (every call after the first) fail or take a while.
type mcRefreshSource struct {
	mu      sync.Mutex
	value   string
	loads   atomic.Int64
	fail    bool
	reload  time.Duration // how long a reload takes
	reloads chan struct{} // told when a reload starts
	starts  []time.Time   // when each call started
	ended   time.Time     // when the first reload returned
}

func (s *mcRefreshSource) load(ctx context.Context, key string) (string, error) {
	s.mu.Lock()
	s.starts = append(s.starts, time.Now())
	s.mu.Unlock()
	if s.loads.Add(1) > 1 {
		select {
		case s.reloads <- struct{}{}:
		default:
		}
		time.Sleep(s.reload)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loads.Load() > 1 && s.ended.IsZero() {
		defer func() { s.ended = time.Now() }()
	}
	if s.fail && s.loads.Load() > 1 {
		return "", errors.New("source down")
	}
	return s.value, nil
}

func (s *mcRefreshSource) set(v string, fail bool) {
	s.mu.Lock()
	s.value, s.fail = v, fail
	s.mu.Unlock()
}

// mcRefreshInstances opens the MapCache name on n clients (n instances of
// a deployment) with the source's loader.
func mcRefreshInstances(t *testing.T, name string, n int, src *mcRefreshSource, rt ReadThrough[string, string]) []*MapCache[string, string] {
	rdb := sharedRedis(t)
	rt.Load = src.load
	var mcs []*MapCache[string, string]
	for range n {
		mcs = append(mcs, GetMapCache[string, string](newClient(t, rdb, nil), name, WithReadThrough(rt)))
	}
	return mcs
}

// TestMapCacheRefreshAfter: on three instances, reads of an entry whose
// time to live is down to TTL - RefreshAfter return the old value while
// the reload runs (many concurrent reads on every instance), one instance
// reloads it (one reload across the deployment, counted), the reloaded
// entry has a fresh TTL, and every instance then reads the new value.
func TestMapCacheRefreshAfter(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	src := &mcRefreshSource{value: "v1", reload: 300 * time.Millisecond, reloads: make(chan struct{}, 1)}
	mcs := mcRefreshInstances(t, name, 3, src, ReadThrough[string, string]{TTL: 10 * time.Second, RefreshAfter: 200 * time.Millisecond})
	if v, _, err := mcs[0].Get(ctx, "k"); err != nil || v != "v1" {
		t.Fatalf("Get = %q, %v; want v1", v, err)
	}
	for i, mc := range mcs { // young: served, no reload
		if v, _, err := mc.Get(ctx, "k"); err != nil || v != "v1" {
			t.Fatalf("instance %d: Get = %q, %v; want v1", i, v, err)
		}
	}
	if n := src.loads.Load(); n != 1 {
		t.Fatalf("loader called %d times before RefreshAfter, want 1", n)
	}
	src.set("v2", false)
	time.Sleep(300 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 3*50)
	for i, mc := range mcs {
		for range 50 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v, ok, err := mc.Get(ctx, "k"); err != nil || !ok || v != "v1" && v != "v2" {
					errs <- fmt.Errorf("instance %d: stale read = %q, %v, %v", i, v, ok, err)
				}
			}()
		}
	}
	select {
	case <-src.reloads:
	case <-time.After(10 * time.Second):
		t.Fatal("no reload started after RefreshAfter")
	}
	// The reload is running (it takes 300ms): every read now serves v1.
	for i, mc := range mcs {
		if v, _, err := mc.Get(ctx, "k"); err != nil || v != "v1" {
			t.Fatalf("instance %d: read during the reload = %q, %v; want v1 at once", i, v, err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, mc := range mcs {
		waitFor(t, "the reloaded value", func() bool { v, _, _ := mc.Get(ctx, "k"); return v == "v2" })
	}
	// The reloaded entry is due again RefreshAfter after the reload
	// stored it (after the loader returned): a slow machine may reach
	// that while the instances read, so only the calls that started
	// before then count.
	src.mu.Lock()
	early := 0
	for _, at := range src.starts {
		if at.Before(src.ended.Add(200 * time.Millisecond)) {
			early++
		}
	}
	src.mu.Unlock()
	if early != 2 {
		t.Fatalf("loader called %d times before the reloaded entry could be due, want 2 (the first load, one reload across 3 instances)", early)
	}
	var refreshes uint64
	for _, mc := range mcs {
		refreshes += mc.CacheStats().Refreshes
	}
	if n := src.loads.Load(); refreshes < 1 || refreshes > uint64(n-1) {
		t.Fatalf("Refreshes = %d over the instances, want 1 to %d (one per reload)", refreshes, n-1)
	}
	k, _ := mcs[0].m.encodeKey("k")
	expiry, err := rdb.ZScore(ctx, mcs[0].keys[1], string(k)).Result()
	if left := time.Until(time.UnixMilli(int64(expiry))); err != nil || left < 9*time.Second {
		t.Fatalf("time to live after the reload = %v, %v; want a fresh TTL near 10s", left, err)
	}
}

// TestMapCacheRefreshAfterFailing: a failing reload keeps the old value
// served (no error) until the entry expires, caches nothing, and asks the
// source at most once per LoadTimeout; after the expiry a read misses and
// gets the loader's error, and the key stays absent.
func TestMapCacheRefreshAfterFailing(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	src := &mcRefreshSource{value: "v1", reloads: make(chan struct{}, 1)}
	const ttl, loadTimeout = 1500 * time.Millisecond, 500 * time.Millisecond
	mcs := mcRefreshInstances(t, name, 3, src, ReadThrough[string, string]{TTL: ttl, RefreshAfter: 100 * time.Millisecond,
		LoadTimeout: loadTimeout})
	began := time.Now()
	if v, _, err := mcs[0].Get(ctx, "k"); err != nil || v != "v1" {
		t.Fatalf("Get = %q, %v; want v1", v, err)
	}
	src.set("v2", true)
	k, _ := mcs[0].m.encodeKey("k")
	entry, err := rdb.HGet(ctx, name, string(k)).Result()
	if err != nil {
		t.Fatal(err)
	}
	reads := 0
	for time.Since(began) < ttl-300*time.Millisecond {
		for i, mc := range mcs {
			if v, ok, err := mc.Get(ctx, "k"); err != nil || !ok || v != "v1" {
				t.Fatalf("instance %d, %v after the load: Get = %q, %v, %v; want the old v1", i, time.Since(began), v, ok, err)
			}
			reads++
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got, err := rdb.HGet(ctx, name, string(k)).Result(); err != nil || got != entry {
		t.Fatalf("entry after failed reloads = %q, %v; want it unchanged", got, err)
	}
	// The first load, and at most one failed reload per LoadTimeout (the
	// lease a failure keeps) plus one.
	n := src.loads.Load()
	if max := 2 + int64(ttl/loadTimeout); n < 2 || n > max {
		t.Fatalf("loader called %d times in %d reads over %v, want 2 to %d", n, reads, time.Since(began), max)
	}
	waitFor(t, "the entry's expiry", func() bool {
		_, ok, err := mcs[1].Get(ctx, "k")
		return !ok && err != nil
	})
	if ok, err := rdb.HExists(ctx, name, string(k)).Result(); err != nil || ok {
		t.Fatalf("a failed load left the key present (%v, %v)", ok, err)
	}
}
