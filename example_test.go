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

func Example() {
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

	lock := client.GetLock("product:42")
	if err := lock.Lock(ctx); err != nil {
		panic(err)
	}
	defer lock.Unlock(ctx)

	work, cancel := lock.Context(ctx) // cancelled if the lease is lost
	defer cancel()
	_ = work
	// The token grows with every acquisition of the name (it starts from
	// the server clock in microseconds).
	fmt.Println("fenced:", lock.Token() > 0)
	// Output: fenced: true
}

// A handle excludes other acquisitions, its own too; a nested acquisition
// re-enters through the hold's context.
func ExampleClient_GetLock() {
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

	a := client.GetLock("report")
	b := client.GetLock("report")
	okA, _ := a.TryLock(ctx, 0, 0)
	hold, cancel := a.Context(ctx)
	defer cancel()
	again, _ := a.TryLock(hold, 0, 0)
	okB, _ := b.TryLock(ctx, 0, 0)
	n, _ := a.HoldCount(ctx)
	fmt.Println(okA, again, okB, n)

	err = b.Unlock(ctx)
	fmt.Println(errors.Is(err, redisson.ErrNotHeld))
	// Output:
	// true true false 2
	// true
}

// Many readers at once, one writer at a time; the writer may read too and
// downgrade by releasing the write lock.
func ExampleReadWriteLock() {
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

	cache := client.GetReadWriteLock("catalog")
	if err := cache.WriteLock().Lock(ctx); err != nil {
		panic(err)
	}
	// ... rebuild the catalog, then keep reading it while others may read too
	// (the writer reads through its write hold's context):
	wctx, cancel := cache.WriteLock().Context(ctx)
	defer cancel()
	_ = cache.ReadLock().Lock(wctx)
	_ = cache.WriteLock().Unlock(ctx) // downgrade

	reader := client.GetReadWriteLock("catalog").ReadLock()
	ok, _ := reader.TryLock(ctx, 0, 0)
	fmt.Println("another reader got in:", ok)
	_ = reader.Unlock(ctx)
	_ = cache.ReadLock().Unlock(ctx)
	// Output: another reader got in: true
}

// A fair lock is granted in request order across processes.
func ExampleClient_GetFairLock() {
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

	lock := client.GetFairLock("payments")
	if err := lock.Lock(ctx); err != nil {
		panic(err)
	}
	n, _ := lock.QueueLength(ctx)
	fmt.Println("waiting behind me:", n)
	_ = lock.Unlock(ctx)
	// Output: waiting behind me: 0
}

// A MultiLock holds all its locks or none; a RedLock holds a majority of
// locks on independent masters.
func ExampleNewMultiLock() {
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

	transfer := redisson.NewMultiLock(client.GetLock("account:1"), client.GetLock("account:2"))
	ok, err := transfer.TryLock(ctx, time.Second, 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(ok, transfer.Held())
	_ = transfer.Unlock(ctx)
	// Output: true 2
}

// A RedLock takes one lock per independent Redis master and holds when a
// majority of them granted it in time: it survives the loss of a minority of
// the masters, and of their data.
func ExampleNewRedLock() {
	var addrs []string // in production: the addresses of your independent masters
	for range 3 {
		mr, err := miniredis.Run()
		if err != nil {
			panic(err)
		}
		defer mr.Close()
		addrs = append(addrs, mr.Addr())
	}
	ctx := context.Background()

	var locks []*redisson.Lock
	for _, addr := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		client, err := redisson.New(rdb, nil)
		if err != nil {
			panic(err)
		}
		defer client.Close()
		locks = append(locks, client.GetLock("payout:7"))
	}

	lock := redisson.NewRedLock(locks...)
	// Wait up to 5s (each master gets a share of it, so a slow one is still
	// counted on a busy machine), hold for 30s.
	ok, err := lock.TryLock(ctx, 5*time.Second, 30*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println("held:", ok, "on", lock.Held(), "masters, quorum", lock.Quorum())
	if err := lock.Unlock(ctx); err != nil {
		panic(err)
	}
	// Output: held: true on 3 masters, quorum 2
}
