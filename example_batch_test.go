package redisson_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/goredisson/redisson"
)

// A Batch sends calls on several objects together: one round trip for the
// lot (one per master on Redis Cluster). Each call returns a Future, read
// once Execute has returned.
func ExampleClient_CreateBatch() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	redisson.GetBatchBucket[string](b, "greeting").Set("hello")
	hits := b.GetAtomicLong("hits").IncrementAndGet()
	prev := redisson.GetBatchMap[string, int64](b, "stock").Put("apple", 10)
	greeting := redisson.GetBatchBucket[string](b, "greeting").Get()

	_, err := greeting.Result()
	fmt.Println(errors.Is(err, redisson.ErrBatchNotExecuted)) // not sent yet

	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	g, _ := greeting.Result()
	fmt.Println(g, hits.Value(), prev.Found())
	// Output:
	// true
	// hello 1 false
}

// BatchAtomic makes the batch one MULTI/EXEC: no other client's command
// runs between its calls.
func ExampleBatchAtomic() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch(redisson.BatchAtomic())
	debit := b.GetAtomicLong("{acct}:alice").AddAndGet(-30)
	credit := b.GetAtomicLong("{acct}:bob").AddAndGet(30)
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	fmt.Println(debit.Value(), credit.Value())
	// Output:
	// -30 30
}

// A BatchBucket's calls are Bucket's: Get reports whether the bucket
// existed through Found.
func ExampleGetBatchBucket() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	missing := redisson.GetBatchBucket[string](b, "nothing").Get()
	deleted := redisson.GetBatchBucket[string](b, "nothing").Delete()
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	fmt.Println(missing.Found(), deleted.Value())
	// Output:
	// false false
}

// A BatchMap's Put returns the previous value, FastPut whether the key was
// new.
func ExampleGetBatchMap() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	m := redisson.GetBatchMap[string, string](b, "capitals")
	m.FastPut("fr", "Paris")
	old := m.Put("fr", "Lyon")
	isNew := m.FastPut("de", "Berlin")
	removed := m.Remove("de")
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	fmt.Println(old.Value(), isNew.Value(), removed.Value())
	// Output:
	// Paris true Berlin
}

// A BatchSet adds, tests and removes members in one round trip.
func ExampleGetBatchSet() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	s := redisson.GetBatchSet[string](b, "tags")
	added := s.Add("go")
	again := s.Add("go")
	has := s.Contains("go")
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	fmt.Println(added.Value(), again.Value(), has.Value())
	// Output:
	// true false true
}

// A BatchQueue offers at the tail and polls the head; Poll on an empty
// queue finds nothing.
func ExampleGetBatchQueue() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	q := redisson.GetBatchQueue[string](b, "jobs")
	q.Offer("a")
	q.Offer("b")
	head := q.Poll()
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	b = client.CreateBatch()
	q = redisson.GetBatchQueue[string](b, "jobs")
	next, empty := q.Poll(), q.Poll()
	if err := b.Execute(ctx); err != nil {
		panic(err)
	}
	fmt.Println(head.Value(), next.Value(), empty.Found())
	// Output:
	// a b false
}

// A BatchList appends and reads elements; an index outside the list is
// ErrIndexOutOfRange in that call's Future.
func ExampleGetBatchList() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	b := client.CreateBatch()
	l := redisson.GetBatchList[string](b, "steps")
	l.Add("build")
	size := l.Add("test")
	first := l.Get(0)
	beyond := l.Get(5)
	err := b.Execute(ctx) // the first failure: Get(5)
	fmt.Println(size.Value(), first.Value(), errors.Is(beyond.Err(), redisson.ErrIndexOutOfRange), errors.Is(err, redisson.ErrIndexOutOfRange))
	// Output:
	// 2 build true true
}
