package redisson_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A ReliableTopic keeps each subscriber's position in a stream: a
// subscriber with a stable id that stops (or whose process dies) receives,
// when it subscribes again within its timeout, every message published
// meanwhile.
func ExampleGetReliableTopic() {
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

	events := redisson.GetReliableTopic[OrderEvent](client, "order-events")
	got, stop, err := events.Channel(ctx, redisson.WithSubscriberID("billing"))
	if err != nil {
		panic(err)
	}
	n, err := events.Publish(ctx, OrderEvent{ID: 1, Status: "paid"})
	if err != nil {
		panic(err)
	}
	fmt.Println("subscribers:", n)
	fmt.Println(<-got)
	stop() // billing keeps its position
	for range got {
	}

	events.Publish(ctx, OrderEvent{ID: 2, Status: "shipped"}) // while billing is away
	got, stop, err = events.Channel(ctx, redisson.WithSubscriberID("billing"))
	if err != nil {
		panic(err)
	}
	defer stop()
	fmt.Println(<-got)
	// Output:
	// subscribers: 1
	// {1 paid}
	// {2 shipped}
}
