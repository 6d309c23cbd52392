package redisson

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestGetFromRedisBypassesCache: GetFromRedis returns what Redis holds now
// although the local cache holds another value (changed behind its back,
// with no invalidation), and neither fills nor reads the cache.
func TestGetFromRedisBypassesCache(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	lc := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{})
	defer lc.Close()
	if _, err := lc.FastPut(ctx, "k", "old"); err != nil {
		t.Fatal(err)
	}
	if v, ok, _ := lc.Get(ctx, "k"); !ok || v != "old" {
		t.Fatalf("Get = %q, %v; want old", v, ok)
	}
	enc, _ := lc.m.encodeKey("k")
	val, _ := lc.m.encode("new")
	if err := rdb.HSet(ctx, name, string(enc), val).Err(); err != nil { // no message: the cache keeps old
		t.Fatal(err)
	}
	before := lc.CacheStats()
	v, ok, err := lc.GetFromRedis(ctx, "k")
	if err != nil || !ok || v != "new" {
		t.Fatalf("GetFromRedis = %q, %v, %v; want new", v, ok, err)
	}
	if v, _, _ := lc.Get(ctx, "k"); v != "old" {
		t.Fatalf("Get after GetFromRedis = %q, want the cached old (GetFromRedis must not touch the cache)", v)
	}
	if st := lc.CacheStats(); st.Hits != before.Hits+1 || st.Misses != before.Misses {
		t.Fatalf("stats %+v after %+v: GetFromRedis counted as a cache read", st, before)
	}
	if _, ok, err := lc.GetFromRedis(ctx, "absent"); ok || err != nil {
		t.Fatalf("GetFromRedis(absent) = %v, %v", ok, err)
	}
}

// TestPreload: Preload caches the given keys, PreloadCache up to count
// entries of the map (all for 0); the reads after are local hits.
func TestPreload(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	writer := GetLocalCachedMap[string, int](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer writer.Close()
	entries := map[string]int{}
	for i := range 250 {
		entries[strconv.Itoa(i)] = i
	}
	if err := writer.PutAll(ctx, entries); err != nil {
		t.Fatal(err)
	}
	c := newClient(t, rdb, nil)
	lc := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{})
	defer lc.Close()
	if err := lc.Preload(ctx, "1", "2", "absent"); err != nil {
		t.Fatal(err)
	}
	if n := lc.CachedSize(); n != 2 {
		t.Fatalf("CachedSize after Preload = %d, want 2", n)
	}
	if _, err := lc.PreloadCache(ctx, -1); !errors.Is(err, ErrNegativeCount) {
		t.Fatalf("PreloadCache(-1): %v, want ErrNegativeCount", err)
	}
	if n, err := lc.PreloadCache(ctx, 120); err != nil || n != 120 {
		t.Fatalf("PreloadCache(120) = %d, %v", n, err)
	}
	if n, err := lc.PreloadCache(ctx, 0); err != nil || n != 250 {
		t.Fatalf("PreloadCache(0) = %d, %v; want 250", n, err)
	}
	if n := lc.CachedSize(); n != 250 {
		t.Fatalf("CachedSize = %d, want 250", n)
	}
	before := lc.CacheStats()
	for k, want := range entries {
		if v, ok, err := lc.Get(ctx, k); err != nil || !ok || v != want {
			t.Fatalf("Get(%s) = %d, %v, %v", k, v, ok, err)
		}
	}
	if st := lc.CacheStats(); st.Hits-before.Hits != 250 || st.Misses != before.Misses {
		t.Fatalf("after preloading, %d hits and %d misses; want 250, 0", st.Hits-before.Hits, st.Misses-before.Misses)
	}
	// A write elsewhere invalidates a preloaded entry as any other.
	if _, err := writer.FastPut(ctx, "7", 700); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if v, _, _ := lc.Get(ctx, "7"); v == 700 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("preloaded entry not invalidated within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestCacheReport: the report gives the settings and the state.
func TestCacheReport(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	s := newSOT()
	lc := GetLocalCachedMap[string, string](c, name,
		LocalCacheOptions{CacheSize: 10, EvictionPolicy: EvictionLRU, TimeToLive: time.Minute, SyncStrategy: SyncUpdate},
		WithWriteBehind(s.writer(), WriteBehind{Delay: time.Hour}))
	defer lc.Close()
	if r := lc.CacheReport(); r.Live || r.WriteMode != "write-behind" || r.CacheSize != 10 {
		t.Fatalf("report before use %+v", r)
	}
	if err := lc.Preload(ctx); err != nil { // no keys: waits for the subscription
		t.Fatal(err)
	}
	if _, err := lc.FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	r := lc.CacheReport()
	want := CacheReport{Name: name, CacheSize: 10, EvictionPolicy: EvictionLRU, TimeToLive: time.Minute,
		SyncStrategy: SyncUpdate, Live: true, WriteMode: "write-behind"}
	st := r.Stats
	r.Stats = CacheStats{}
	if r != want || st.Size != 1 || st.WriteQueue != 1 {
		t.Fatalf("report %+v (stats %+v), want %+v with 1 entry, 1 queued", r, st, want)
	}
}
