package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A MapCache gives each entry its own TTL and max idle time; an expired
// entry is never returned, whether or not it has been deleted yet. Java's
// RMapCache of the same name sees the same entries and expiries.
func ExampleGetMapCache() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close() // also stops the client's eviction pass
	ctx := context.Background()

	sessions := redisson.GetMapCache[string, string](client, "sessions")
	// Gone a second from now, or after 10 minutes without a read.
	if _, _, err := sessions.PutWithTTL(ctx, "alice", "token-1", time.Second, 10*time.Minute); err != nil {
		panic(err)
	}
	if _, err := sessions.FastPut(ctx, "bob", "token-2"); err != nil { // no expiry
		panic(err)
	}
	v, ok, _ := sessions.Get(ctx, "alice")
	fmt.Println(v, ok)

	time.Sleep(1200 * time.Millisecond)
	_, ok, _ = sessions.Get(ctx, "alice")
	fmt.Println("alice after her TTL:", ok)
	all, _ := sessions.ReadAll(ctx)
	fmt.Println(all)
	// Output:
	// token-1 true
	// alice after her TTL: false
	// map[bob:token-2]
}

// Entry listeners hear every client's writes, Java's included, through the
// client's shared pub/sub connection.
func ExampleMapCache_OnUpdated() {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()

	prices := redisson.GetMapCache[string, int64](client, "prices")
	updates := make(chan redisson.MapCacheEvent[string, int64], 1)
	unsubscribe, err := prices.OnUpdated(ctx, func(ev redisson.MapCacheEvent[string, int64]) { updates <- ev })
	if err != nil {
		panic(err)
	}
	defer unsubscribe()

	prices.Put(ctx, "tea", 3)
	prices.Put(ctx, "tea", 4)
	ev := <-updates
	fmt.Println(ev.Key, ev.OldValue, "->", ev.Value)
	// Output:
	// tea 3 -> 4
}
