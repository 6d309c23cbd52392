package redisson_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A ListMultimap keeps each key's values in a list (insertion order,
// duplicates kept), a SetMultimap in a set; Java's RListMultimap and
// RSetMultimap of the same names see the same keys and values.
func ExampleGetListMultimap() {
	mr, err := miniredis.Run()
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

	visits := redisson.GetListMultimap[string, string](client, "visits")
	visits.PutAll(ctx, "alice", "/home", "/cart", "/home")
	visits.Put(ctx, "bob", "/home")
	pages, _ := visits.Get(ctx, "alice")
	fmt.Println(pages)
	keys, _ := visits.KeySet(ctx)
	slices.Sort(keys)
	fmt.Println(keys)
	// Output:
	// [/home /cart /home]
	// [alice bob]
}

// A SetMultimap is Redisson's RSetMultimap: a set of values per key, so a
// value put twice under one key is kept once.
func ExampleGetSetMultimap() {
	mr, err := miniredis.Run()
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

	tags := redisson.GetSetMultimap[string, string](client, "tags")
	tags.PutAll(ctx, "post-1", "go", "redis", "go")
	n, _ := tags.Size(ctx)
	fmt.Println(n)
	old, _ := tags.ReplaceValues(ctx, "post-1", "java")
	slices.Sort(old)
	fmt.Println(old)
	// Output:
	// 2
	// [go redis]
}
