package redisson_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

type OrderEvent struct {
	ID     int64
	Status string
}

// A Topic delivers typed messages to every subscriber; all subscribers of
// one client share one Redis subscription.
func ExampleGetTopic() {
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

	events := redisson.GetTopic[OrderEvent](client, "orders")
	got, cancel, err := events.Channel(ctx) // returns once Redis confirmed the subscription
	if err != nil {
		panic(err)
	}
	defer cancel()

	n, err := events.Publish(ctx, OrderEvent{ID: 42, Status: "paid"})
	if err != nil {
		panic(err)
	}
	e := <-got
	fmt.Println("receivers:", n)
	fmt.Println(e.ID, e.Status)
	// Output:
	// receivers: 1
	// 42 paid
}

// Channel delivers a topic's messages on a Go channel, in the order this
// client received them, until cancel closes it.
func ExampleTopic_Channel() {
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

	prices := redisson.GetTopic[float64](client, "prices:tea")
	updates, cancel, err := prices.Channel(ctx, redisson.WithBuffer(16)) // up to 16 messages wait unread
	if err != nil {
		panic(err)
	}
	for _, p := range []float64{4.5, 4.75, 5} {
		if _, err := prices.Publish(ctx, p); err != nil {
			panic(err)
		}
	}
	for range 3 {
		fmt.Println(<-updates)
	}
	cancel()
	_, open := <-updates
	fmt.Println("open after cancel:", open)
	// Output:
	// 4.5
	// 4.75
	// 5
	// open after cancel: false
}
