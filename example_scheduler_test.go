package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// Every instance registers the job's handler and runs the scheduler; each
// instant of the job fires once across all of them, on the Redis server's
// clock. The run's context holds its lease (cancelled with ErrRunLeaseLost
// if lost), and its token fences what it writes.
func ExampleClient_GetScheduler() {
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	sched := client.GetScheduler("reports")
	// Definitions live in Redis: add them once (a deploy step, an admin).
	if err := sched.Add(ctx, redisson.JobSpec{Name: "rollup", Every: 100 * time.Millisecond}); err != nil {
		panic(err)
	}
	if err := sched.Add(ctx, redisson.JobSpec{Name: "nightly", Cron: "0 3 * * *"}); err != nil {
		panic(err)
	}
	fired := make(chan redisson.JobRun, 16)
	sched.Handle("rollup", func(ctx context.Context, run redisson.JobRun) error {
		fired <- run // ctx ends if the run's lease is lost; pass run.Token to what it writes
		return nil
	})
	go sched.Run(ctx) // every instance runs it; returns when ctx ends

	first, second := <-fired, <-fired
	fmt.Println(first.Job, "fired", second.Instant.Sub(first.Instant), "apart, tokens rising:", second.Token > first.Token)
	// Output: rollup fired 100ms apart, tokens rising: true
}
