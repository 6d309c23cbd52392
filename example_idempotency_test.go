package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// One idempotency key: the first Begin runs the work under a lease and
// stores its result; a later Begin with the same fingerprint gets the
// result back (one round trip), one with another fingerprint is refused.
// httplimit.NewIdempotency is this, as net/http middleware.
func ExampleClient_GetIdempotencyRecord() {
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

	rec := client.GetIdempotencyRecord("payments:{key-8e03978e}")
	res, err := rec.Begin(ctx, "POST /pay amount=10", 10*time.Second, 0)
	if err != nil {
		panic(err)
	}
	if res.State == redisson.IdempotencyRun {
		// ... the payment, renewing with rec.Renew(ctx, res.Token, lease) if it is long ...
		if _, err := rec.Complete(ctx, res.Token, 201, nil, []byte("paid"), 24*time.Hour); err != nil {
			panic(err)
		}
		fmt.Println("ran once")
	}
	again, err := rec.Begin(ctx, "POST /pay amount=10", 10*time.Second, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(again.State == redisson.IdempotencyReplay, again.Status, string(again.Body))
	other, err := rec.Begin(ctx, "POST /pay amount=99", 10*time.Second, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(other.State == redisson.IdempotencyMismatch)
	// Output:
	// ran once
	// true 201 paid
	// true
}
