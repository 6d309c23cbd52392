package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// exampleClient returns a client on an embedded Redis, and its clean-up.
func exampleClient() (*redisson.Client, func()) {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	client, err := redisson.New(rdb, nil)
	if err != nil {
		panic(err)
	}
	return client, func() { client.Close(); rdb.Close(); mr.Close() }
}

// A List is Redisson's RList: a Redis list of encoded values, in order.
func ExampleGetList() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	steps := redisson.GetList[string](client, "pipeline:steps")
	if _, err := steps.AddAll(ctx, "build", "test", "deploy"); err != nil {
		panic(err)
	}
	if err := steps.Insert(ctx, 2, "review"); err != nil { // before "deploy"
		panic(err)
	}
	removed, err := steps.RemoveAt(ctx, 0)
	if err != nil {
		panic(err)
	}
	all, err := steps.ReadAll(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(removed, all)

	_, err = steps.Get(ctx, 10)
	fmt.Println(errors.Is(err, redisson.ErrIndexOutOfRange))
	// Output:
	// build [test review deploy]
	// true
}

// Iterator pages through a large list with LRANGE, batch elements per
// round trip, never holding the whole list.
func ExampleList_Iterator() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	events := redisson.GetList[int64](client, "events")
	for i := range int64(250) {
		if _, err := events.Add(ctx, i); err != nil {
			panic(err)
		}
	}
	var sum int64
	it := events.Iterator(100) // three LRANGEs
	for _, v := range it.All(ctx) {
		sum += v
	}
	if err := it.Err(); err != nil {
		panic(err)
	}
	fmt.Println(sum)
	// Output:
	// 31125
}

// A Set is Redisson's RSet. Sets combined in one call share a hash tag,
// so that they are in one slot on Redis Cluster too.
func ExampleGetSet() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	alice := redisson.GetSet[string](client, "{tags}:alice")
	bob := redisson.GetSet[string](client, "{tags}:bob")
	alice.AddAll(ctx, "go", "redis", "java")
	bob.AddAll(ctx, "go", "rust")

	both, err := alice.Intersection(ctx, bob)
	if err != nil {
		panic(err)
	}
	fmt.Println(both)

	everyone := redisson.GetSet[string](client, "{tags}:everyone")
	n, err := alice.UnionStore(ctx, everyone, bob)
	if err != nil {
		panic(err)
	}
	members, _ := everyone.Members(ctx)
	slices.Sort(members)
	fmt.Println(n, members)
	// Output:
	// [go]
	// 4 [go java redis rust]
}

// A SortedSet is Redisson's RScoredSortedSet: members ordered by a score.
func ExampleGetSortedSet() {
	client, done := exampleClient()
	defer done()
	ctx := context.Background()

	board := redisson.GetSortedSet[string](client, "leaderboard")
	board.Add(ctx, 120, "ann")
	board.Add(ctx, 95, "bo")
	board.Add(ctx, 150, "cy")
	if _, err := board.AddScore(ctx, "bo", 60); err != nil { // 155
		panic(err)
	}

	top, err := board.EntryRevRangeByRank(ctx, 0, 1)
	if err != nil {
		panic(err)
	}
	for _, e := range top {
		fmt.Println(e.Value, e.Score)
	}
	// Scores from 100 up, 150 excluded.
	mid, _ := board.RangeByScore(ctx, redisson.ScoreRange{Min: 100, Max: 150, MaxExclusive: true}, redisson.RangeOptions{})
	fmt.Println(mid)
	rank, _, _ := board.Rank(ctx, "ann")
	fmt.Println("ann's rank:", rank)
	_, err = board.Add(ctx, math.NaN(), "dee")
	fmt.Println(errors.Is(err, redisson.ErrInvalidScore))
	// Output:
	// bo 155
	// cy 150
	// [ann]
	// ann's rank: 0
	// true
}
