package redisson_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A bloom filter answers "maybe present" or "certainly absent" in a few
// bits per value. TryInit sizes it once, for every client.
func ExampleGetBloomFilter() {
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

	seen := redisson.GetBloomFilter[string](client, "seen-emails")
	if _, err := seen.TryInit(ctx, 10_000, 0.01); err != nil { // 10k values, 1% false positives
		panic(err)
	}
	added, _ := seen.Add(ctx, "ann@example.com")
	fmt.Println("new:", added)
	added, _ = seen.Add(ctx, "ann@example.com")
	fmt.Println("new again:", added)
	in, _ := seen.Contains(ctx, "bob@example.com")
	fmt.Println("bob seen:", in)
	cfg, _ := seen.Config(ctx)
	fmt.Printf("%d bits, %d per value\n", cfg.Size, cfg.HashIterations)
	// Output:
	// new: true
	// new again: false
	// bob seen: false
	// 95850 bits, 7 per value
}

// AddAll and ContainsAll send many values in one round trip.
func ExampleBloomFilter_AddAll() {
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

	ids := redisson.GetBloomFilter[int64](client, "known-ids")
	ids.TryInit(ctx, 1000, 0.001)
	n, _ := ids.AddAll(ctx, []int64{3, 5, 7, 11})
	fmt.Println("added", n)
	n, _ = ids.ContainsAll(ctx, []int64{2, 3, 4, 5})
	fmt.Println("present", n)
	count, _ := ids.Count(ctx)
	fmt.Println("about", count, "values")
	// Output:
	// added 4
	// present 2
	// about 4 values
}

// A filter used before TryInit reports ErrNotInitialized.
func ExampleBloomFilter_Contains_notInitialized() {
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

	f := redisson.GetBloomFilter[string](client, "never-initialised")
	_, err = f.Contains(context.Background(), "x")
	fmt.Println(errors.Is(err, redisson.ErrNotInitialized))
	// Output: true
}

// Each handle reserves a block of ids with one round trip and hands them
// out locally; ids are unique across clients and increase per handle.
func ExampleClient_GetIdGenerator() {
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

	orders := client.GetIdGenerator("order-ids")
	orders.TryInit(ctx, 1000, 50) // first id 1000, blocks of 50
	for range 3 {
		id, _ := orders.NextID(ctx)
		fmt.Println(id)
	}
	other, _ := client.GetIdGenerator("order-ids").NextID(ctx) // another handle: the next block
	fmt.Println(other)
	// Output:
	// 1000
	// 1001
	// 1002
	// 1050
}
