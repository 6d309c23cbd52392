package redisson_test

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// outcomes is an Observer that counts operations by name and outcome (the
// redissonotel module is the full one: spans and metrics).
type outcomes struct {
	mu sync.Mutex
	n  map[string]int
}

func (o *outcomes) OperationStart(ctx context.Context, _ *redisson.Operation) context.Context {
	return ctx
}

func (o *outcomes) OperationEnd(_ context.Context, op *redisson.Operation) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n[op.Op+" "+op.Outcome.String()]++
}

func (o *outcomes) Event(_ context.Context, e *redisson.Event) {} // a lost lease, a pub/sub reconnect, ...

// An Observer sees every operation with its outcome; Stats is the client's
// background state. Without an Observer the client does no observation
// work at all.
func ExampleObserver() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	obs := &outcomes{n: map[string]int{}}
	client, err := redisson.New(rdb, &redisson.Options{
		Observer: obs,
		Logger:   slog.New(slog.DiscardHandler), // background events, at Warn, Info or Debug
	})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()

	lock := client.GetLock("report:7")
	if ok, err := lock.TryLock(ctx, 0, 0); !ok || err != nil {
		panic(err)
	}
	other := client.GetLock("report:7")
	if ok, _ := other.TryLock(ctx, 0, 0); !ok {
		fmt.Println("held elsewhere; leases held:", client.Stats().LeasesHeld)
	}
	if err := lock.Unlock(ctx); err != nil {
		panic(err)
	}

	var lines []string
	for k, n := range obs.n {
		lines = append(lines, fmt.Sprintf("%s: %d", k, n))
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// held elsewhere; leases held: 1
	// lock.acquire acquired: 1
	// lock.acquire timed_out: 1
	// lock.release ok: 1
}
