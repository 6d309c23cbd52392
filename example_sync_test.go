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

// A semaphore of 3 permits caps the calls in flight to a downstream service
// across every process. TrySetPermits sizes the pool once; a process that
// finds it already sized leaves it alone.
func ExampleClient_GetSemaphore() {
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

	pool := client.GetSemaphore("inventory-api")
	created, err := pool.TrySetPermits(ctx, 3)
	if err != nil {
		panic(err)
	}
	fmt.Println("pool created:", created)

	if err := pool.Acquire(ctx, 1); err != nil { // waits while all 3 are in use
		panic(err)
	}
	free, _ := pool.AvailablePermits(ctx)
	fmt.Println("calling the service, permits left:", free)

	// Any process may release; permits have no owner.
	if err := pool.Release(ctx, 1); err != nil {
		panic(err)
	}
	free, _ = pool.AvailablePermits(ctx)
	fmt.Println("done, permits left:", free)
	// Output:
	// pool created: true
	// calling the service, permits left: 2
	// done, permits left: 3
}

// Every instance of a service calls TrySetPermits at start-up with the
// pool's size: the first sets it, the others find it set and leave it
// alone, even once permits are in use. Without it the semaphore has 0
// permits and Acquire would wait for ever.
func ExampleSemaphore_TrySetPermits() {
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

	startInstance := func() *redisson.Semaphore {
		pool := client.GetSemaphore("report-workers")
		if _, err := pool.TrySetPermits(ctx, 4); err != nil {
			panic(err)
		}
		return pool
	}
	first := startInstance()
	if err := first.Acquire(ctx, 1); err != nil {
		panic(err)
	}
	startInstance() // a second instance starts while a permit is in use
	free, _ := first.AvailablePermits(ctx)
	fmt.Println("permits left:", free)
	// Output:
	// permits left: 3
}

// TryAcquire with no wait makes a single attempt: a caller that finds the
// pool exhausted can shed the request instead of queueing.
func ExampleSemaphore_TryAcquire() {
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

	pool := client.GetSemaphore("report-export")
	if _, err := pool.TrySetPermits(ctx, 1); err != nil {
		panic(err)
	}
	if err := pool.Acquire(ctx, 1); err != nil { // the only permit
		panic(err)
	}

	ok, err := pool.TryAcquire(ctx, 1, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("second export may start:", ok)

	if err := pool.Release(ctx, 1); err != nil {
		panic(err)
	}
	ok, err = pool.TryAcquire(ctx, 1, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("after the first one finished:", ok)
	_ = pool.Release(ctx, 1)
	// Output:
	// second export may start: false
	// after the first one finished: true
}

// A coordinator waits for 3 workers, which may run in other processes: each
// counts the latch down when done, and Await returns once it reaches zero.
func ExampleClient_GetCountDownLatch() {
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

	const workers = 3
	done := client.GetCountDownLatch("batch:17")
	if _, err := done.TrySetCount(ctx, workers); err != nil {
		panic(err)
	}

	errs := make(chan error, workers)
	for range workers {
		go func() {
			// ... process a share of the batch, then:
			errs <- done.CountDown(ctx)
		}()
	}

	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := done.Await(wait); err != nil {
		panic(err)
	}
	for range workers {
		if err := <-errs; err != nil {
			panic(err)
		}
	}
	n, err := done.Count(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("all workers done, count:", n)
	// Output: all workers done, count: 0
}

// Permits of a PermitExpirableSemaphore carry an id and may carry a lease:
// a holder that crashes gives its permit back when the lease ends. Only the
// id releases a permit, and only once.
func ExampleClient_GetPermitExpirableSemaphore() {
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

	slots := client.GetPermitExpirableSemaphore("gpu-slots")
	if _, err := slots.TrySetPermits(ctx, 2); err != nil {
		panic(err)
	}

	id, err := slots.Acquire(ctx, time.Minute) // back in the pool after a minute at most
	if err != nil {
		panic(err)
	}
	free, _ := slots.AvailablePermits(ctx)
	fmt.Println("permit id:", len(id), "hex digits; free slots:", free)

	if err := slots.Release(ctx, id); err != nil {
		panic(err)
	}
	free, _ = slots.AvailablePermits(ctx)
	fmt.Println("released; free slots:", free)

	err = slots.Release(ctx, id)
	fmt.Println("second release is unknown:", errors.Is(err, redisson.ErrUnknownPermit))
	// Output:
	// permit id: 32 hex digits; free slots: 1
	// released; free slots: 2
	// second release is unknown: true
}
