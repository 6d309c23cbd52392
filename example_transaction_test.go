package redisson_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// A transfer between two accounts: GetForUpdate locks each account before
// reading it (in one order everywhere), the writes wait for Commit, which
// applies both or neither. A Java RTransaction on the same map takes the
// same locks, so the two exclude each other.
func ExampleGetTxMap() {
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
	balances := redisson.GetMap[string, int](client, "balances")
	_, _ = balances.FastPut(ctx, "alice", 100)
	_, _ = balances.FastPut(ctx, "bob", 20)

	tx, err := client.CreateTransaction(redisson.TransactionOptions{}) // 5s timeout
	if err != nil {
		panic(err)
	}
	m := redisson.GetTxMap[string, int](tx, "balances")
	from, _, err := m.GetForUpdate(ctx, "alice")
	if err != nil {
		panic(err)
	}
	to, _, err := m.GetForUpdate(ctx, "bob")
	if err != nil {
		panic(err)
	}
	_, _ = m.FastPut(ctx, "alice", from-30)
	_, _ = m.FastPut(ctx, "bob", to+30)
	inside, _, _ := m.Get(ctx, "alice") // the transaction's own write
	outside, _, _ := balances.Get(ctx, "alice")
	fmt.Println("before commit:", inside, outside)
	if err := tx.Commit(ctx); err != nil {
		panic(err) // ErrTransactionTimeout: nothing was applied
	}
	all, _ := balances.ReadAll(ctx)
	fmt.Println("after commit:", all)

	// Output:
	// before commit: 70 100
	// after commit: map[alice:70 bob:50]
}

// A bucket in a transaction: read-your-writes inside it, nothing outside
// until Commit; Rollback applies nothing and releases the bucket's lock.
func ExampleGetTxBucket() {
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

	tx, err := client.CreateTransaction(redisson.TransactionOptions{Timeout: 2 * time.Second})
	if err != nil {
		panic(err)
	}
	status := redisson.GetTxBucket[string](tx, "status")
	if err := status.Set(ctx, "frozen"); err != nil {
		panic(err)
	}
	v, _, _ := status.Get(ctx)
	fmt.Println("inside:", v)
	if err := tx.Rollback(ctx); err != nil {
		panic(err)
	}
	_, ok, _ := redisson.GetBucket[string](client, "status").Get(ctx)
	fmt.Println("after rollback:", ok)
	err = status.Set(ctx, "again")
	fmt.Println(errors.Is(err, redisson.ErrTransactionDone))
	// Output:
	// inside: frozen
	// after rollback: false
	// true
}

// A set in a transaction: the members added and removed are seen inside
// it, and by everyone once committed.
func ExampleGetTxSet() {
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
	_, _ = redisson.GetSet[string](client, "seats").Add(ctx, "12A")

	tx, err := client.CreateTransaction(redisson.TransactionOptions{})
	if err != nil {
		panic(err)
	}
	seats := redisson.GetTxSet[string](tx, "seats")
	freed, _ := seats.Remove(ctx, "12A")
	taken, _ := seats.Add(ctx, "14C")
	fmt.Println(freed, taken)
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	all, _ := redisson.GetSet[string](client, "seats").Members(ctx)
	fmt.Println(all)
	// Output:
	// true true
	// [14C]
}

// A LocalCachedMap in a transaction: Commit writes the hash and, in the
// same script, publishes Redisson's invalidation message, so every
// instance's near cache drops the keys (this one's before Commit returns).
func ExampleGetTxLocalCachedMap() {
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
	prices := redisson.GetLocalCachedMap[string, int](client, "prices", redisson.LocalCacheOptions{})
	defer prices.Close()
	_, _ = prices.FastPut(ctx, "apple", 3)
	v, _, _ := prices.Get(ctx, "apple") // now in the near cache
	fmt.Println("before:", v)

	tx, err := client.CreateTransaction(redisson.TransactionOptions{})
	if err != nil {
		panic(err)
	}
	_, _ = redisson.GetTxLocalCachedMap(tx, prices).FastPut(ctx, "apple", 4)
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	v, _, _ = prices.Get(ctx, "apple")
	fmt.Println("after commit:", v)
	// Output:
	// before: 3
	// after commit: 4
}

// A MapCache in a transaction: a session and its index entry written
// together, the session with a TTL that counts from the commit, as
// MapCache.PutWithTTL's.
func ExampleGetTxMapCache() {
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

	tx, err := client.CreateTransaction(redisson.TransactionOptions{})
	if err != nil {
		panic(err)
	}
	sessions := redisson.GetTxMapCache[string, string](tx, "sessions")
	if _, _, err := sessions.PutWithTTL(ctx, "s1", "alice", 30*time.Minute, 0); err != nil {
		panic(err)
	}
	if _, err := redisson.GetTxMap[string, string](tx, "users").FastPut(ctx, "alice", "s1"); err != nil {
		panic(err)
	}
	v, _, _ := sessions.Get(ctx, "s1") // this transaction's own write
	fmt.Println("in the transaction:", v)
	if err := tx.Commit(ctx); err != nil {
		panic(err)
	}
	v, ok, _ := redisson.GetMapCache[string, string](client, "sessions").Get(ctx, "s1")
	fmt.Println("after commit:", v, ok)
	// Output:
	// in the transaction: alice
	// after commit: alice true
}
