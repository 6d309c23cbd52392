package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A LocalCachedMap serves repeated reads from memory; a write on another
// client (Go or Java) invalidates the copy over the map's channel.
func ExampleGetLocalCachedMap() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	open := func() (*redisson.Client, func()) {
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		c, err := redisson.New(rdb, nil)
		if err != nil {
			panic(err)
		}
		return c, func() { c.Close(); rdb.Close() }
	}
	writer, closeWriter := open()
	defer closeWriter()
	reader, closeReader := open()
	defer closeReader()

	opts := redisson.LocalCacheOptions{CacheSize: 10_000, EvictionPolicy: redisson.EvictionLRU, TimeToLive: time.Hour}
	prices := redisson.GetLocalCachedMap[string, int](writer, "prices", opts)
	defer prices.Close()
	cached := redisson.GetLocalCachedMap[string, int](reader, "prices", opts)
	defer cached.Close()

	if _, err := prices.FastPut(ctx, "tea", 3); err != nil {
		panic(err)
	}
	v, _, _ := cached.Get(ctx, "tea") // one HGET, then cached
	fmt.Println("tea", v)

	if _, err := prices.FastPut(ctx, "tea", 4); err != nil {
		panic(err)
	}
	for deadline := time.Now().Add(5 * time.Second); v != 4 && time.Now().Before(deadline); {
		v, _, _ = cached.Get(ctx, "tea") // the old price until the invalidation arrives
		time.Sleep(time.Millisecond)
	}
	fmt.Println("tea", v)
	// Output:
	// tea 3
	// tea 4
}
