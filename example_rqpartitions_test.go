package redisson_test

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A partitioned ReliableQueue spreads its jobs over several streams (on a
// Cluster, over the masters); the jobs of one JobPartitionKey share a
// partition, so they are delivered in the order they were enqueued.
func ExampleWithPartitions() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your cluster's addresses
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

	orders := redisson.GetReliableQueue[string](client, "orders", redisson.WithPartitions(4))
	fmt.Println(orders.PartitionNames())
	for _, step := range []string{"created", "paid", "shipped"} {
		for _, customer := range []string{"alice", "bob"} {
			_, _, _ = orders.Enqueue(ctx, customer+" "+step, redisson.JobPartitionKey(customer))
		}
	}

	var mu sync.Mutex
	seen := map[string][]string{}
	var wg sync.WaitGroup
	wg.Add(6)
	wctx, stop := context.WithCancel(ctx)
	go func() {
		wg.Wait()
		stop()
	}()
	_ = orders.Process(wctx, func(_ context.Context, j *redisson.Job[string]) error {
		customer, step, _ := strings.Cut(j.Value, " ")
		mu.Lock()
		seen[customer] = append(seen[customer], step)
		mu.Unlock()
		wg.Done()
		return nil
	}, redisson.WorkerOptions{Concurrency: 1})
	fmt.Println("alice:", seen["alice"])
	fmt.Println("bob:", seen["bob"])
	// Output:
	// [orders orders:p1 orders:p2 orders:p3]
	// alice: [created paid shipped]
	// bob: [created paid shipped]
}
