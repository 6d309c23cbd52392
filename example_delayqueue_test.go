package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A DelayedQueue puts values into a destination queue once their delay has
// passed; every client that runs the queue moves them, each once. The
// destination is a plain Redis list: GetQueue of the same name, a Java
// RQueue, or BLPOP read it.
func ExampleGetDelayedQueue() {
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
	defer client.Close() // stops moving
	ctx := context.Background()

	reminders := redisson.GetDelayedQueue[string](client, "reminders", redisson.WithCodec(redisson.StringCodec{}))
	if err := reminders.Offer(ctx, "second", 200*time.Millisecond); err != nil {
		panic(err)
	}
	if err := reminders.Offer(ctx, "first", 100*time.Millisecond); err != nil {
		panic(err)
	}
	pending, _ := reminders.ReadAll(ctx)
	fmt.Println("pending:", pending)

	for range 2 {
		v, err := rdb.BLPop(ctx, 5*time.Second, "reminders").Result()
		if err != nil {
			panic(err)
		}
		fmt.Println("due:", v[1])
	}
	n, _ := reminders.Size(ctx)
	fmt.Println("pending:", n)
	// Output:
	// pending: [first second]
	// due: first
	// due: second
	// pending: 0
}
