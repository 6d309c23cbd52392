package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A SetCache gives each member its own TTL; an expired member is never
// returned nor counted, whether or not it has been deleted yet. Java's
// RSetCache of the same name sees the same members and expiries.
func ExampleGetSetCache() {
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

	seen := redisson.GetSetCache[string](client, "seen-requests")
	if _, err := seen.AddWithTTL(ctx, "req-1", 100*time.Millisecond); err != nil {
		panic(err)
	}
	if _, err := seen.Add(ctx, "req-2"); err != nil { // no expiry
		panic(err)
	}
	again, _ := seen.AddWithTTL(ctx, "req-1", 100*time.Millisecond)
	fmt.Println("req-1 new again:", again)
	n, _ := seen.Size(ctx)
	fmt.Println(n)

	time.Sleep(200 * time.Millisecond)
	ok, _ := seen.Contains(ctx, "req-1")
	fmt.Println("req-1 after its TTL:", ok)
	all, _ := seen.ReadAll(ctx)
	fmt.Println(all)
	// Output:
	// req-1 new again: false
	// 2
	// req-1 after its TTL: false
	// [req-2]
}
