package redisson

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestCacheStatsCounts: a LocalCachedMap counts its hits and misses, the
// entries its CacheSize evicts, and the invalidations other instances
// send; Stats.Cache adds the handles up and keeps a closed handle's counts.
func TestCacheStatsCounts(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	c := newClient(t, rdb, nil)
	reader := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{CacheSize: 2, EvictionPolicy: EvictionLRU})
	writer := GetLocalCachedMap[string, int](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer writer.Close()
	waitLive(t, reader)
	waitLive(t, writer)
	base := reader.CacheStats() // waitLive's reads
	for i := 0; i < 5; i++ {
		if _, err := writer.FastPut(ctx, fmt.Sprint("k", i), i); err != nil {
			t.Fatal(err)
		}
	}
	// The writer's messages reach the reader asynchronously: let them all
	// arrive before the reads, or a late one would drop a value just cached.
	eventually(t, 10*time.Second, "the writes' messages are received", func() bool {
		return reader.CacheStats().Invalidations-base.Invalidations >= 5
	})
	for i := 0; i < 5; i++ { // 5 misses, each cached: 3 evicted by the size of 2
		if _, _, err := reader.Get(ctx, fmt.Sprint("k", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := reader.Get(ctx, "k4"); err != nil { // a hit
		t.Fatal(err)
	}
	if _, err := writer.FastPut(ctx, "k4", 40); err != nil { // an invalidation for the reader
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the invalidation is counted", func() bool { return reader.CacheStats().Invalidations-base.Invalidations >= 6 })
	st := reader.CacheStats()
	if st.Hits-base.Hits != 1 || st.Misses-base.Misses != 5 || st.Evictions != 3 || st.Size > 2 {
		t.Fatalf("CacheStats = %+v; want 1 hit and 5 misses more than after waitLive, 3 evictions, size at most 2", st)
	}
	if got := c.Stats().Cache; got.Hits != st.Hits || got.Misses != st.Misses || got.Evictions != 3 {
		t.Fatalf("Stats.Cache = %+v; want the reader's counts", got)
	}
	reader.Close()
	if got := c.Stats().Cache; got.Hits != st.Hits || got.Evictions != 3 || got.Size != 0 {
		t.Fatalf("Stats.Cache after Close = %+v; want the counts kept, size 0", got)
	}
}
