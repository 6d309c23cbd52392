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

// A hold can end without Unlock: its lease ran out, the watchdog could not
// renew it, or the client closed. Then Done closes, Err says why, and the
// context from Context is cancelled with that cause. Work under the lock
// runs with that context, so it stops as soon as another owner may hold the
// lock. (Here a short explicit lease runs out on purpose.)
func ExampleLock_Context() {
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

	lock := client.GetLock("export:9")
	if err := lock.LockLease(ctx, 200*time.Millisecond); err != nil {
		panic(err)
	}
	work, cancel := lock.Context(ctx) // cancelled when the hold ends
	defer cancel()

	select {
	case <-work.Done(): // a long job checks between its steps, or passes work to every call
	case <-time.After(10 * time.Second):
	}
	<-lock.Done()
	fmt.Println("work stopped, lease lost:", errors.Is(context.Cause(work), redisson.ErrLeaseLost))
	fmt.Println("Err:", errors.Is(lock.Err(), redisson.ErrLeaseLost))
	err = lock.Unlock(ctx)
	fmt.Println("Unlock:", errors.Is(err, redisson.ErrLeaseLost), errors.Is(err, redisson.ErrNotHeld))
	// Output:
	// work stopped, lease lost: true
	// Err: true
	// Unlock: true true
}

// Do acquires, runs the function with the hold's context and always
// releases. The function re-enters the lock through that context; a lost
// lease cancels it.
func ExampleLock_Do() {
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

	lock := client.GetLock("invoice:31")
	err = lock.Do(ctx, 5*time.Second, 0, func(ctx context.Context) error {
		if err := lock.Lock(ctx); err != nil { // re-enters: ctx carries the hold
			return err
		}
		defer lock.Unlock(ctx)
		n, err := lock.HoldCount(ctx)
		fmt.Println("hold count inside:", n)
		return err
	})
	if err != nil {
		panic(err)
	}
	locked, _ := lock.IsLocked(ctx)
	fmt.Println("locked after Do:", locked)
	// Output:
	// hold count inside: 2
	// locked after Do: false
}
