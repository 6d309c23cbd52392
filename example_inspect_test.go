package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// An admin page shows who holds a lock, for how long, and how often it
// was taken, without taking it. A free lock is not an error.
func ExampleClient_InspectLock() {
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
	defer client.Close()
	ctx := context.Background()

	lock := client.GetLock("orders:42")
	if err := lock.Lock(ctx); err != nil {
		panic(err)
	}
	info, err := client.InspectLock(ctx, "orders:42")
	if err != nil {
		panic(err)
	}
	owner := info.Owners[0]
	fmt.Println("held:", info.Held)
	fmt.Println("by this client:", owner.ClientID == client.ID(), "holds:", owner.Holds)
	fmt.Println("lease left:", info.Lease > 0)

	if err := lock.Unlock(ctx); err != nil {
		panic(err)
	}
	info, err = client.InspectLock(ctx, "orders:42")
	fmt.Println("after Unlock, held:", info.Held, err)
	// Output:
	// held: true
	// by this client: true holds: 1
	// lease left: true
	// after Unlock, held: false <nil>
}

// ListObjects walks the keyspace with SCAN, a batch at a time, and names the
// object behind each key; the other Inspect calls read one of them.
func ExampleClient_ListObjects() {
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

	if _, err := client.GetSemaphore("shop:api-pool").TrySetPermits(ctx, 3); err != nil {
		panic(err)
	}
	if _, _, err := redisson.GetMap[string, int64](client, "shop:stock").Put(ctx, "apple", 12); err != nil {
		panic(err)
	}
	it := client.ListObjects("shop:*", 100)
	var found []string
	for o := range it.All(ctx) {
		found = append(found, fmt.Sprintf("%s=%s", o.Key, o.Kind))
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	sem, err := client.InspectSemaphore(ctx, "shop:api-pool")
	if err != nil {
		panic(err)
	}
	_, err = client.InspectMap(ctx, "shop:gone", nil, 0, 10)
	fmt.Println(len(found), strings.Contains(strings.Join(found, " "), "shop:stock=map"))
	fmt.Println("permits:", sem.Permits)
	fmt.Println("missing map:", errors.Is(err, redisson.ErrNotFound))
	// Output:
	// 2 true
	// permits: 3
	// missing map: true
}

// A dashboard shows a bounded queue's backlog and free capacity, and the
// elements any client holds in flight.
func ExampleClient_InspectQueue() {
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

	q := redisson.GetBoundedBlockingQueue[string](client, "jobs")
	if _, err := q.TrySetCapacity(ctx, 10); err != nil {
		panic(err)
	}
	for _, job := range []string{"resize:1", "resize:2"} {
		if _, err := q.Offer(ctx, job); err != nil {
			panic(err)
		}
	}
	info, err := client.InspectQueue(ctx, "jobs", nil)
	if err != nil {
		panic(err)
	}
	fmt.Println("waiting:", info.Length, "head:", info.Head)
	fmt.Println("free:", info.Free, "of", info.Capacity, "in flight:", len(info.InFlight))
	// Output:
	// waiting: 2 head: resize:1
	// free: 8 of 10 in flight: 0
}
