package redisson_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A bucket cached on the client: Get is served from memory after the first
// read, and Redis itself reports every write of the key (CLIENT TRACKING),
// whoever makes it, so that redis-cli's SET is seen too. This example runs
// on an embedded Redis without CLIENT TRACKING, where every Get reads from
// Redis (the cache never serves what Redis could not keep fresh); on Redis
// 6 or later the second Get is a hit.
func ExampleWithClientSideCaching() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, &redisson.Options{
		ClientSideCaching: redisson.ClientSideCaching{MaxEntries: 100_000, Prefixes: []string{"config:"}},
		Logger:            slog.New(slog.DiscardHandler), // the embedded Redis refuses CLIENT TRACKING
	})
	if err != nil {
		panic(err)
	}
	defer client.Close()

	flags := redisson.GetBucket[string](client, "config:flags", redisson.WithClientSideCaching())
	if err := flags.Set(ctx, "dark-mode"); err != nil {
		panic(err)
	}
	v, _, _ := flags.Get(ctx) // one read from Redis, then from memory
	fmt.Println(v)
	v, _, _ = flags.Get(ctx)
	fmt.Println(v)

	rdb.Set(ctx, "config:flags", "\xa9beta-mode", 0) // another writer (msgpack string)
	v, _, _ = flags.Get(ctx)                         // once Redis's invalidation arrived (well under 1ms): the new value
	fmt.Println(v)
	// Output:
	// dark-mode
	// dark-mode
	// beta-mode
}
