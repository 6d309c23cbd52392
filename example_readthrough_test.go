package redisson_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A read-through LocalCachedMap loads what it misses from the source of
// truth (a database), once per key across every instance: the instance
// that takes the key's lease in Redis runs the loader, the others wait for
// its message and read the value it stored. A loader's ErrKeyNotFound is an
// absent key, remembered for NotFoundTTL.
func ExampleWithReadThrough() {
	mr, err := miniredis.Run() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	ctx := context.Background()

	var queries atomic.Int64
	users := redisson.WithReadThrough(redisson.ReadThrough[string, string]{
		Load: func(ctx context.Context, id string) (string, error) {
			queries.Add(1) // SELECT name FROM users WHERE id = $1
			if id == "u0" {
				return "", redisson.ErrKeyNotFound
			}
			return "Ada " + id, nil
		},
	})
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ { // three service instances
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
		c, err := redisson.New(rdb, nil)
		if err != nil {
			panic(err)
		}
		defer c.Close()
		names := redisson.GetLocalCachedMap[string, string](c, "user-names", redisson.LocalCacheOptions{}, users)
		defer names.Close()
		for j := 0; j < 10; j++ { // ten concurrent requests each
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, _, err := names.Get(ctx, "u1"); err != nil {
					panic(err)
				}
			}()
		}
	}
	wg.Wait()
	fmt.Println("queries for u1:", queries.Load())

	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), nil)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	names := redisson.GetLocalCachedMap[string, string](c, "user-names", redisson.LocalCacheOptions{}, users)
	defer names.Close()
	name, ok, err := names.Get(ctx, "u1") // stored in Redis by the load: no query
	fmt.Println(name, ok, err, "queries:", queries.Load())
	_, ok, err = names.Get(ctx, "u0")
	fmt.Println("u0 found:", ok, err)
	// Output:
	// queries for u1: 1
	// Ada u1 true <nil> queries: 1
	// u0 found: false <nil>
}
