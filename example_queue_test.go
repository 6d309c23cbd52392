package redisson_test

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A Queue is Redisson's RQueue: Offer appends, Poll takes the head.
func ExampleGetQueue() {
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

	q := redisson.GetQueue[string](client, "jobs")
	_ = q.Offer(ctx, "resize")
	_ = q.Offer(ctx, "upload")
	head, _, _ := q.Peek(ctx)
	v, ok, _ := q.Poll(ctx)
	n, _ := q.Size(ctx)
	fmt.Println(head, v, ok, n)
	// Output: resize resize true 1
}

// A BlockingQueue's Take waits for an element; one offered by any client
// (Java's included) wakes it, and an element is never lost to a take that
// gives up.
func ExampleBlockingQueue_Take() {
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

	q := redisson.GetBlockingQueue[int](client, "events")
	go func() {
		time.Sleep(50 * time.Millisecond)
		_ = q.Offer(ctx, 42)
	}()
	v, err := q.Take(ctx)
	fmt.Println(v, err)

	_, ok, err := q.Poll(ctx, 100*time.Millisecond) // nothing comes
	fmt.Println(ok, err)
	// Output:
	// 42 <nil>
	// false <nil>
}

// A BoundedBlockingQueue refuses offers beyond its capacity; Put waits for
// room instead.
func ExampleBoundedBlockingQueue_Put() {
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

	q := redisson.GetBoundedBlockingQueue[string](client, "uploads")
	_, _ = q.TrySetCapacity(ctx, 1)
	ok, _ := q.Offer(ctx, "a")
	full, _ := q.Offer(ctx, "b")
	fmt.Println(ok, full)

	go func() {
		time.Sleep(50 * time.Millisecond)
		_, _ = q.Take(ctx) // gives back the capacity and wakes Put
	}()
	err = q.Put(ctx, "b")
	rest, _ := q.ReadAll(ctx)
	fmt.Println(err, rest)
	// Output:
	// true false
	// <nil> [b]
}

// A Deque is Redisson's RDeque: offers and polls at either end of one list.
func ExampleGetDeque() {
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

	d := redisson.GetDeque[string](client, "recent")
	_ = d.OfferLast(ctx, "b")
	_ = d.OfferFirst(ctx, "a") // to the head
	_ = d.OfferLast(ctx, "c")
	last, _, _ := d.PeekLast(ctx)
	first, _, _ := d.PollFirst(ctx)
	end, _, _ := d.PollLast(ctx)
	rest, _ := d.ReadAll(ctx)
	fmt.Println(last, first, end, rest)
	// Output: c a c [b]
}

// A BlockingDeque is Redisson's RBlockingDeque: takers may wait at either
// end. Here an undo stack: edits are pushed at the tail, and TakeLast
// waits for the newest (a Java takeLast, BRPOP, would take it too).
func ExampleGetBlockingDeque() {
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

	undo := redisson.GetBlockingDeque[string](client, "undo")
	newest := make(chan string)
	go func() {
		edit, err := undo.TakeLast(ctx) // waits: the stack is empty
		if err != nil {
			panic(err)
		}
		newest <- edit
	}()
	_ = undo.OfferLast(ctx, "type hello")
	fmt.Println(<-newest)
	_ = undo.OfferLast(ctx, "bold")
	_ = undo.OfferLast(ctx, "delete line")
	last, _ := undo.TakeLast(ctx)
	first, _ := undo.TakeFirst(ctx)
	fmt.Println(last, "|", first)
	// Output:
	// type hello
	// delete line | bold
}

// A PriorityQueue is Redisson's RPriorityQueue: the least element leaves
// first, by a Go compare function; Java services writing the same queue
// take the same lock. Here tickets by severity, equal ones in arrival
// order.
func ExampleGetPriorityQueue() {
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

	type Ticket struct {
		Severity int // 1 is the most urgent
		Title    string
	}
	tickets := redisson.GetPriorityQueue(client, "tickets", func(a, b Ticket) int {
		return cmp.Compare(a.Severity, b.Severity)
	})
	_ = tickets.Offer(ctx, Ticket{3, "typo on the about page"})
	_ = tickets.Offer(ctx, Ticket{1, "checkout down"})
	_ = tickets.Offer(ctx, Ticket{2, "slow search"})
	_ = tickets.Offer(ctx, Ticket{1, "payments failing"})
	for range 4 {
		t, err := tickets.Take(ctx)
		if err != nil {
			panic(err)
		}
		fmt.Println(t.Severity, t.Title)
	}
	// Output:
	// 1 checkout down
	// 1 payments failing
	// 2 slow search
	// 3 typo on the about page
}

// A worker takes jobs from a BlockingQueue until its context ends; jobs
// offered by any instance (Java's included) reach whichever worker takes
// first, and a job is never lost to a Take that gives up.
func ExampleBlockingQueue_worker() {
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

	jobs := redisson.GetBlockingQueue[string](client, "thumbnails")
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { // the worker
		defer close(done)
		for {
			job, err := jobs.Take(ctx) // waits for the next job
			if err != nil {
				return // ctx ended (errors.Is(err, context.Canceled)), or Redis failed
			}
			fmt.Println("resized", job)
			if job == "c.png" {
				stop()
			}
		}
	}()
	for _, j := range []string{"a.png", "b.png", "c.png"} {
		if err := jobs.Offer(context.Background(), j); err != nil {
			panic(err)
		}
	}
	<-done
	// Output:
	// resized a.png
	// resized b.png
	// resized c.png
}
