package redisson_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A write-behind LocalCachedMap answers writes from Redis and hands them to
// the source of truth later, in batches, coalesced per key; Close (and
// Client.Close) writes the queue out first, so a graceful shutdown loses
// nothing. A crash loses what was queued (the map in Redis has it).
func ExampleWithWriteBehind() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	var mu sync.Mutex
	db := map[string]int{} // UPDATE stock SET n = $2 WHERE sku = $1
	batches := 0
	stock := redisson.GetLocalCachedMap[string, int](c, "stock", redisson.LocalCacheOptions{},
		redisson.WithWriteBehind(redisson.Writer[string, int]{
			Write: func(ctx context.Context, entries map[string]int) error {
				mu.Lock()
				defer mu.Unlock()
				batches++
				maps.Copy(db, entries)
				return nil // an error is retried with a back-off
			},
			Delete: func(ctx context.Context, skus []string) error {
				mu.Lock()
				defer mu.Unlock()
				for _, s := range skus {
					delete(db, s)
				}
				return nil
			},
		}, redisson.WriteBehind{BatchSize: 100, Delay: 5 * time.Second, QueueSize: 10000}))
	for n := 10; n > 0; n-- { // ten writes of one key: the source gets the last
		if _, err := stock.FastPut(ctx, "sku-1", n); err != nil {
			panic(err)
		}
	}
	if _, err := stock.FastPut(ctx, "sku-2", 7); err != nil {
		panic(err)
	}
	fmt.Println("queued:", stock.CacheStats().WriteQueue)
	if err := stock.Close(); err != nil { // writes the queue out
		panic(err)
	}
	fmt.Println("source:", slices.Sorted(maps.Keys(db)), db["sku-1"], db["sku-2"], "in", batches, "batch")
	// Output:
	// queued: 2
	// source: [sku-1 sku-2] 1 7 in 1 batch
}

// A write-through MapCache writes the source of truth in the call: the
// call returns once both are written. When the source refuses, the error
// says so and the key leaves the map, so that no reader gets a value the
// source does not have.
func ExampleWithWriteThrough() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	refuse := false
	db := map[string]string{}
	sessions := redisson.GetMapCache[string, string](c, "sessions", redisson.WithWriteThrough(redisson.Writer[string, string]{
		Write: func(ctx context.Context, entries map[string]string) error {
			if refuse {
				return fmt.Errorf("database is read-only")
			}
			maps.Copy(db, entries)
			return nil
		},
		Delete: func(ctx context.Context, ids []string) error {
			for _, id := range ids {
				delete(db, id)
			}
			return nil
		},
	}))
	_, _, err = sessions.PutWithTTL(ctx, "s1", "ada", time.Hour, 0)
	fmt.Println("put:", err, "source:", db["s1"])
	refuse = true
	_, _, err = sessions.Put(ctx, "s1", "bob")
	_, inMap, _ := sessions.Get(ctx, "s1")
	fmt.Println(err, "- in the map:", inMap, "- source:", db["s1"])
	// Output:
	// put: <nil> source: ada
	// redisson: map cache "sessions": map writer failed: database is read-only - in the map: false - source: ada
}

// GetFromRedis reads past the near cache, Preload and PreloadCache fill it
// ahead of the reads, and CacheReport describes this instance's cache.
func ExampleLocalCachedMap_GetFromRedis() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	prices := redisson.GetLocalCachedMap[string, int](c, "prices", redisson.LocalCacheOptions{CacheSize: 1000,
		EvictionPolicy: redisson.EvictionLRU})
	defer prices.Close()
	if err := prices.PutAll(ctx, map[string]int{"a": 1, "b": 2, "c": 3}); err != nil {
		panic(err)
	}
	n, err := prices.PreloadCache(ctx, 0) // every entry, paged with HSCAN
	fmt.Println("preloaded:", n, err)
	v, ok, err := prices.GetFromRedis(ctx, "a") // Redis now, not the cached copy
	fmt.Println("a:", v, ok, err)
	r := prices.CacheReport()
	fmt.Println("live:", r.Live, "entries:", r.Stats.Size, "of", r.CacheSize, r.EvictionPolicy == redisson.EvictionLRU)
	// Output:
	// preloaded: 3 <nil>
	// a: 1 true <nil>
	// live: true entries: 3 of 1000 true
}
