package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A limiter shared by every client of the name: at most 3 permits in any
// second. TryAcquire decides at once; Acquire would sleep until the oldest
// grant leaves the window.
func ExampleRateLimiter() {
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

	limiter := client.GetRateLimiter("api:search")
	if _, err := limiter.TrySetRate(ctx, redisson.Overall, 3, time.Second); err != nil {
		panic(err)
	}
	for i := range 4 {
		ok, err := limiter.TryAcquire(ctx, 1)
		if err != nil {
			panic(err)
		}
		fmt.Println("request", i+1, "allowed:", ok)
	}
	left, _ := limiter.AvailablePermits(ctx)
	fmt.Println("left:", left)
	// Output:
	// request 1 allowed: true
	// request 2 allowed: true
	// request 3 allowed: true
	// request 4 allowed: false
	// left: 0
}

// PerClient gives each Client a budget of its own; a keep-alive lets an
// idle limiter expire entirely.
func ExampleRateLimiter_TrySetRateKeepAlive() {
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

	limiter := client.GetRateLimiter("tenant:42:exports")
	ok, err := limiter.TrySetRateKeepAlive(ctx, redisson.PerClient, 10, time.Minute, time.Hour)
	fmt.Println(ok, err)
	cfg, _ := limiter.Config(ctx)
	fmt.Println(cfg.Type, cfg.Rate, cfg.Interval, cfg.KeepAlive)
	ok, err = limiter.TryAcquireWait(ctx, 4, time.Second)
	fmt.Println(ok, err)
	// Output:
	// true <nil>
	// PER_CLIENT 10 1m0s 1h0m0s
	// true <nil>
}

// A FixedWindowLimiter gives every identity (a user, an API key, a client
// IP) its own budget per window, from one configuration: one small key per
// active identity, which expires with its window.
func ExampleClient_GetFixedWindowLimiter() {
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

	uploads := client.GetFixedWindowLimiter("api:upload", 2, time.Minute) // 2 uploads per user per minute
	for _, user := range []string{"ann", "ann", "ann", "bob"} {
		d, err := uploads.Allow(ctx, user, 1)
		if err != nil {
			panic(err)
		}
		if d.Allowed {
			fmt.Println(user, "allowed,", d.Remaining, "left")
		} else {
			fmt.Println(user, "refused, retry in", d.RetryAfter.Round(time.Second))
		}
	}
	// Output:
	// ann allowed, 1 left
	// ann allowed, 0 left
	// ann refused, retry in 1m0s
	// bob allowed, 1 left
}

// A GCRALimiter grants each identity a steady rate with bursts: here 1
// request per second, up to 2 at once. It stores one timestamp per identity,
// which expires as soon as the identity is back to a full burst.
func ExampleClient_GetGCRALimiter() {
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

	var search redisson.KeyedLimiter = client.GetGCRALimiter("api:search", 1, time.Second, 2)
	p := search.Policy()
	fmt.Println("policy:", p.Limit, "per", p.Window, "burst", p.Burst)
	for range 3 {
		d, err := search.Allow(ctx, "api-key-7", 1)
		if err != nil {
			panic(err)
		}
		fmt.Println(d.Allowed, d.Remaining, d.RetryAfter.Round(time.Second))
	}
	// Output:
	// policy: 1 per 1s burst 2
	// true 1 0s
	// true 0 0s
	// false 0 1s
}

// In local-quota mode a hot identity takes permits from Redis in chunks
// (counted in the shared window before they are served) and is decided in
// process until the chunk is used up: here 1 round trip per 100 decisions
// once the chunk has grown, and never more than the limit across clients.
func ExampleFixedWindowLimiter_WithLocalQuota() {
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

	api := client.GetFixedWindowLimiter("api", 10_000, time.Minute).WithLocalQuota(redisson.LocalQuota{Chunk: 100})
	allowed := 0
	for range 1000 {
		d, err := api.Allow(ctx, "tenant-7", 1)
		if err != nil {
			panic(err)
		}
		if d.Allowed {
			allowed++
		}
	}
	counted, _ := rdb.Get(ctx, "api:{tenant-7}").Int64()
	fmt.Println("allowed:", allowed, "counted in Redis:", counted)
	// On shutdown: the 27 permits held go back to their window, if it is
	// still the same one (checked by its end in server time, which this
	// embedded server does not keep as a real one does, so not printed).
	if err := api.Flush(ctx); err != nil {
		panic(err)
	}
	// Output:
	// allowed: 1000 counted in Redis: 1027
}
