package redisson_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// Two instances campaign for one election: the first leads and works under
// its leadership's context, stamping what it writes with its term; the
// second waits, and takes over the moment the first resigns (woken by a
// message, not by a lease running out). Observe shows each new leader to
// anyone who asks, campaigning or not.
func ExampleClient_GetElection() {
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

	election := client.GetElection("billing-scheduler")
	if _, err := election.Leader(ctx); errors.Is(err, redisson.ErrNoLeader) {
		fmt.Println("no leader yet")
	}
	leaders, err := election.Observe(ctx)
	if err != nil {
		panic(err)
	}

	first, err := election.Campaign(ctx, "instance-a") // blocks until leading
	if err != nil {
		panic(err)
	}
	work, cancel := first.Context(ctx) // cancelled if the leadership is lost
	defer cancel()
	_ = work // run the leader's jobs under work, passing first.Term() to what they write
	fmt.Println("observed:", (<-leaders).Value)

	second := make(chan *redisson.Leadership)
	go func() {
		lead, err := election.Campaign(ctx, "instance-b") // waits while instance-a leads
		if err != nil {
			panic(err)
		}
		second <- lead
	}()
	if err := first.Resign(ctx); err != nil {
		panic(err)
	}
	b := <-second
	fmt.Println("observed:", (<-leaders).Value)
	fmt.Println("term grew:", b.Term() > first.Term())
	<-work.Done()
	fmt.Println("first ended:", errors.Is(context.Cause(work), redisson.ErrResigned))
	now, _ := election.Leader(ctx)
	fmt.Println("leader:", now.Value)
	// Output:
	// no leader yet
	// observed: instance-a
	// observed: instance-b
	// term grew: true
	// first ended: true
	// leader: instance-b
}
