package redisson_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// An operator's view of a job queue: what waits, how late the oldest is,
// what is delayed and what died, whoever runs the workers.
func ExampleClient_InspectReliableQueue() {
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

	emails := redisson.GetReliableQueue[string](client, "emails")
	for _, to := range []string{"alice@example.com", "bob@example.com"} {
		if _, _, err := emails.Enqueue(ctx, to); err != nil {
			panic(err)
		}
	}
	info, err := client.InspectReliableQueue(ctx, "emails")
	if err != nil {
		panic(err)
	}
	fmt.Println("ready:", info.Ready, "in flight:", info.InFlight, "delayed:", info.Delayed, "dead:", info.Dead)
	fmt.Println("lagging:", info.OldestReady >= 0)
	// Output:
	// ready: 2 in flight: 0 delayed: 0 dead: 0
	// lagging: true
}
