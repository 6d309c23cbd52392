package redisson_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

type Order struct {
	ID    int64
	Items []string
	Paid  bool
}

// A Bucket holds one value of a Go type, encoded with the client's codec
// (MessagePack unless Options.Codec says otherwise).
func ExampleGetBucket() {
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

	order := redisson.GetBucket[Order](client, "order:42")
	if err := order.SetWithTTL(ctx, Order{ID: 42, Items: []string{"tea"}}, time.Hour); err != nil {
		panic(err)
	}
	o, ok, err := order.Get(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(ok, o.ID, o.Items, o.Paid)

	_, ok, _ = redisson.GetBucket[Order](client, "order:43").Get(ctx)
	fmt.Println("order 43 exists:", ok)
	// Output:
	// true 42 [tea] false
	// order 43 exists: false
}

// CompareAndSet replaces the value only if nobody changed it meanwhile.
func ExampleBucket_CompareAndSet() {
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

	state := redisson.GetBucket[string](client, "job:7:state")
	state.Set(ctx, "queued")
	ok, _ := state.CompareAndSet(ctx, "queued", "running")
	fmt.Println("queued -> running:", ok)
	ok, _ = state.CompareAndSet(ctx, "queued", "running")
	fmt.Println("again:", ok)
	// Output:
	// queued -> running: true
	// again: false
}

// WithCodec picks another codec for one object: StringCodec stores plain
// text, as Redisson's StringCodec does.
func ExampleWithCodec() {
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

	greeting := redisson.GetBucket[string](client, "greeting", redisson.WithCodec(redisson.StringCodec{}))
	greeting.Set(ctx, "hello")
	fmt.Println(rdb.Get(ctx, "greeting").Val())
	// Output: hello
}

func ExampleClient_GetAtomicLong() {
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

	visits := client.GetAtomicLong("visits")
	visits.IncrementAndGet(ctx)
	n, _ := visits.AddAndGet(ctx, 10)
	fmt.Println(n, rdb.Get(ctx, "visits").Val())
	// Output: 11 11
}

// A Map is a Redis hash of encoded keys and values, as Redisson's RMap.
func ExampleGetMap() {
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

	stock := redisson.GetMap[string, int64](client, "stock")
	stock.FastPut(ctx, "tea", 12)
	prev, had, _ := stock.Put(ctx, "tea", 10)
	fmt.Println("previous:", prev, had)
	n, ok, _ := stock.Get(ctx, "tea")
	fmt.Println("tea:", n, ok)
	_, ok, _ = stock.Get(ctx, "coffee")
	fmt.Println("coffee present:", ok)
	// Output:
	// previous: 12 true
	// tea: 10 true
	// coffee present: false
}

// Iterator reads a large map a batch at a time with HSCAN; check Err after
// the loop.
func ExampleMap_Iterator() {
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

	scores := redisson.GetMap[string, int64](client, "scores")
	for i, name := range []string{"ann", "bob", "cy"} {
		scores.FastPut(ctx, name, int64(10*(i+1)))
	}
	it := scores.Iterator(100)
	var total int64
	for _, score := range it.All(ctx) {
		total += score
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	fmt.Println("total:", total)
	// Output: total: 60
}

// AddAndGet adds on the server. With StringCodec (and JSONCodec) numbers are
// decimal text and the addition is HINCRBY; MsgpackCodec uses a script.
func ExampleMap_AddAndGet() {
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

	hits := redisson.GetMap[string, int64](client, "hits", redisson.WithCodec(redisson.StringCodec{}))
	hits.AddAndGet(ctx, "/home", 1)
	n, _ := hits.AddAndGet(ctx, "/home", 2)
	fmt.Println(n, rdb.HGet(ctx, "hits", "/home").Val())
	// Output: 3 3
}

// An AtomicDouble is a float64 stored as decimal text, as Redisson's
// RAtomicDouble stores it.
func ExampleClient_GetAtomicDouble() {
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

	balance := client.GetAtomicDouble("balance")
	balance.Set(ctx, 10)
	fmt.Println(rdb.Get(ctx, "balance").Val())
	v, _ := balance.AddAndGet(ctx, 2.25)
	ok, _ := balance.CompareAndSet(ctx, 12.25, 0.5)
	fmt.Println(v, ok)
	// Output:
	// 10.0
	// 12.25 true
}

// Buckets reads and writes many Buckets in one round trip (MGET, MSET,
// MSETNX), as Redisson's RBuckets.
func ExampleGetBuckets() {
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

	prices := redisson.GetBuckets[float64](client)
	prices.Set(ctx, map[string]float64{"price:tea": 2.5, "price:cake": 4})
	got, _ := prices.Get(ctx, "price:tea", "price:cake", "price:pie")
	fmt.Println(len(got), got["price:tea"], got["price:cake"])
	ok, _ := prices.TrySet(ctx, map[string]float64{"price:pie": 5, "price:tea": 3})
	fmt.Println("set when none exists:", ok)
	// Output:
	// 2 2.5 4
	// set when none exists: false
}

// A LongAdder counts in memory; Sum asks every instance, in this process or
// another (Go or Java's RLongAdder), for its part.
func ExampleClient_GetLongAdder() {
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	hits := client.GetLongAdder("hits")
	defer hits.Close()
	for range 1000 {
		hits.Increment() // no round trip
	}
	n, err := hits.Sum(ctx)
	fmt.Println(n, err)
	// Output: 1000 <nil>
}

// A DoubleAdder sums float64 parts as Redisson's RDoubleAdder does.
func ExampleClient_GetDoubleAdder() {
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	a, b := client.GetDoubleAdder("revenue"), client.GetDoubleAdder("revenue")
	defer a.Close()
	defer b.Close()
	a.Add(1.5)
	b.Add(0.25)
	a.Increment()
	sum, err := b.Sum(ctx)
	fmt.Println(sum, err)
	// Output: 2.75 <nil>
}
