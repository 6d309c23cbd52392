package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// newRedis returns a go-redis client on an embedded miniredis, so that the
// examples run anywhere. Use a real server in production.
func newRedis() (*redis.Client, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	return rdb, func() { rdb.Close(); m.Close() }
}

func Example() {
	rdb, stop := newRedis()
	defer stop()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()

	lock := client.GetLock("updateOrder")
	ok, err := lock.TryLock(ctx, 100*time.Second, 10*time.Second) // wait up to 100s, hold for 10s
	if err != nil {
		panic(err)
	}
	if ok {
		defer lock.Unlock(ctx)
		fmt.Println("holding", lock.Name())
	}
	// Output: holding updateOrder
}

// A lock taken without a lease is renewed by the watchdog until Unlock.
// Context gives a context that ends if the lock is lost, and Token a fencing
// token for the resource the lock protects.
func ExampleLock_Lock() {
	rdb, stop := newRedis()
	defer stop()
	client, _ := redisson.New(rdb, nil)
	defer client.Close()
	ctx := context.Background()

	lock := client.GetLock("product:42")
	if err := lock.Lock(ctx); err != nil {
		panic(err)
	}
	defer lock.Unlock(ctx)

	work, cancel := lock.Context(ctx) // cancelled if the lease is lost
	defer cancel()
	_ = work
	fmt.Println("token", lock.Token())
	// Output: token 1
}

// Each GetLock returns a new owner; the same handle re-enters.
func ExampleClient_GetLock() {
	rdb, stop := newRedis()
	defer stop()
	client, _ := redisson.New(rdb, nil)
	defer client.Close()
	ctx := context.Background()

	a := client.GetLock("report")
	b := client.GetLock("report")
	okA, _ := a.TryLock(ctx, 0, 0)
	again, _ := a.TryLock(ctx, 0, 0)
	okB, _ := b.TryLock(ctx, 0, 0)
	n, _ := a.HoldCount(ctx)
	fmt.Println(okA, again, okB, n)

	err := b.Unlock(ctx)
	fmt.Println(errors.Is(err, redisson.ErrNotHeld))
	// Output:
	// true true false 2
	// true
}
