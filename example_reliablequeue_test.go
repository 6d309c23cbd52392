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

// A ReliableQueue runs each job's handler in a worker; a job whose handler
// fails is retried after a back-off, and a job survives the crash of the
// worker handling it. Process returns once its ctx ended and the running
// handlers finished (graceful shutdown).
func ExampleGetReliableQueue() {
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

	// Producer: an HTTP handler, say.
	emails := redisson.GetReliableQueue[string](client, "emails")
	_, _, _ = emails.Enqueue(ctx, "welcome alice")
	_, added, _ := emails.Enqueue(ctx, "receipt 42", redisson.JobDedupID("order-42", time.Hour))
	_, again, _ := emails.Enqueue(ctx, "receipt 42", redisson.JobDedupID("order-42", time.Hour))
	fmt.Println("added:", added, "again:", again)

	// Worker: runs until its ctx ends, then shuts down gracefully.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	handled := 0
	err = emails.Process(wctx, func(ctx context.Context, job *redisson.Job[string]) error {
		if job.Value == "receipt 42" && job.Attempt == 1 {
			return errors.New("mail server busy") // retried after the back-off
		}
		fmt.Println("sent", job.Value, "on attempt", job.Attempt)
		if handled++; handled == 2 {
			close(done)
			stop()
		}
		return nil
	}, redisson.WorkerOptions{
		Concurrency: 1,
		Backoff:     func(int) time.Duration { return 10 * time.Millisecond },
	})
	<-done
	fmt.Println("worker stopped:", errors.Is(err, context.Canceled))
	// Output:
	// added: true again: false
	// sent welcome alice on attempt 1
	// sent receipt 42 on attempt 2
	// worker stopped: true
}
