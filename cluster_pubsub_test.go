package redisson

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clusterNames returns n lock names whose slots cover every master of the
// cluster.
func clusterNames(t *testing.T, rdb *redis.ClusterClient, n int) []string {
	t.Helper()
	ctx := context.Background()
	var names []string
	masters := map[string]bool{}
	for i := 0; len(names) < n || len(masters) < 3; i++ {
		name := fmt.Sprintf("%s:%d", uniqueName(t, rdb), i)
		node, err := rdb.MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		names = append(names, name)
	}
	return names
}

// shardSubs counts the sharded subscriptions of channel on the master
// serving its slot, and its plain subscriptions on every master.
func shardSubs(t *testing.T, rdb *redis.ClusterClient, channel string) (sharded, plain int64) {
	t.Helper()
	ctx := context.Background()
	node, err := rdb.MasterForKey(ctx, channel)
	if err != nil {
		t.Fatal(err)
	}
	sharded = node.PubSubShardNumSub(ctx, channel).Val()[channel]
	var sum atomic.Int64 // ForEachMaster runs concurrently
	_ = rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		sum.Add(m.PubSubNumSub(ctx, channel).Val()[channel])
		return nil
	})
	return sharded, sum.Load()
}

// waitAll starts one waiter per name on c, each taking and releasing its
// lock, and returns a channel with their results.
func waitAll(ctx context.Context, c *Client, names []string) chan error {
	got := make(chan error, len(names))
	for _, name := range names {
		go func() {
			l := c.GetLock(name)
			if err := l.Lock(ctx); err != nil {
				got <- err
				return
			}
			got <- l.Unlock(ctx)
		}()
	}
	return got
}

// collect waits for n results, failing on an error or after bound.
func collect(t *testing.T, got chan error, n int, bound time.Duration, what string) {
	t.Helper()
	timeout := time.After(bound)
	for i := 0; i < n; i++ {
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-timeout:
			t.Fatalf("%s: %d of %d waiters done after %v", what, i, n, bound)
		}
	}
}

// On a Redis 7 cluster, lock channels use sharded pub/sub by default (as
// Redisson's AUTO mode does): waiters SSUBSCRIBE on the master of their
// channel's slot, one connection per master, and an unlock (SPUBLISH in
// the script) wakes them long before the holders' leases end. With
// PubSubPlain the same works with plain SUBSCRIBE.
func TestClusterShardedLockChannels(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	for _, mode := range []PubSubMode{PubSubAuto, PubSubPlain} {
		holder := newClient(t, cl.Client(t), &Options{PubSubMode: mode})
		waiter := newClient(t, cl.Client(t), &Options{PubSubMode: mode})
		names := clusterNames(t, rdb, 9)
		var held []*Lock
		for _, name := range names {
			l := holder.GetLock(name)
			mustTryLock(t, ctx, l, 0, time.Minute)
			held = append(held, l)
		}
		got := waitAll(ctx, waiter, names)
		for _, name := range names {
			channel := prefixName("redisson_lock__channel", name)
			eventually(t, 10*time.Second, "waiter subscribed", func() bool {
				sharded, plain := shardSubs(t, rdb, channel)
				if mode == PubSubPlain {
					return plain == 1 && sharded == 0
				}
				return sharded == 1 && plain == 0
			})
		}
		if mode == PubSubAuto && waiter.pubsub.stats().connections != 3 {
			t.Fatalf("waiter client uses %d pub/sub connections; want 3 (one per master)", waiter.pubsub.stats().connections)
		}
		start := time.Now()
		for _, l := range held {
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		collect(t, got, len(names), 30*time.Second, fmt.Sprintf("mode %d", mode))
		t.Logf("mode %d: %d waiters done %v after the unlocks (leases 1m)", mode, len(names), time.Since(start))
	}
}

// Killing the sharded pub/sub connections on every master mid-wait: the
// client replaces them, subscribes every channel again on the master of
// its slot, and the unlocks still wake the waiters long before the leases
// end.
func TestClusterShardedSurvivesClientKill(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	holder := newClient(t, cl.Client(t), nil)
	waiter := newClient(t, cl.Client(t), &Options{PubSubHealthCheck: 200 * time.Millisecond})
	names := clusterNames(t, rdb, 6)
	var held []*Lock
	for _, name := range names {
		l := holder.GetLock(name)
		mustTryLock(t, ctx, l, 0, time.Minute)
		held = append(held, l)
	}
	got := waitAll(ctx, waiter, names)
	allSubscribed := func() bool {
		for _, name := range names {
			if s, _ := shardSubs(t, rdb, prefixName("redisson_lock__channel", name)); s != 1 {
				return false
			}
		}
		return true
	}
	eventually(t, 10*time.Second, "waiters subscribed", allSubscribed)
	for round := 0; round < 2; round++ {
		var killed atomic.Int64
		err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			n, err := m.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
			killed.Add(n)
			return err
		})
		if err != nil || killed.Load() < 3 {
			t.Fatalf("CLIENT KILL TYPE pubsub killed %d, %v; want at least 3", killed.Load(), err)
		}
		eventually(t, 20*time.Second, "re-subscribed after CLIENT KILL", allSubscribed)
	}
	start := time.Now()
	for _, l := range held {
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	collect(t, got, len(names), 30*time.Second, "after CLIENT KILL")
	t.Logf("%d waiters done %v after the unlocks (leases 1m)", len(names), time.Since(start))
}

// Semaphores and count-down latches on the cluster wake their waiters
// through sharded channels too.
func TestClusterShardedSemaphoreAndLatch(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, time.Minute)
	a := newClient(t, cl.Client(t), nil)
	b := newClient(t, cl.Client(t), nil)
	for _, name := range clusterNames(t, rdb, 3) {
		sem := a.GetSemaphore(name + ":sem")
		if _, err := sem.TrySetPermits(ctx, 0); err != nil {
			t.Fatal(err)
		}
		acquired := make(chan error, 1)
		go func() { acquired <- b.GetSemaphore(name+":sem").Acquire(ctx, 1) }()
		latch := a.GetCountDownLatch(name + ":latch")
		if _, err := latch.TrySetCount(ctx, 1); err != nil {
			t.Fatal(err)
		}
		opened := make(chan error, 1)
		go func() { opened <- b.GetCountDownLatch(name + ":latch").Await(ctx) }()
		semCh := prefixName("redisson_sc", name+":sem")
		latchCh := "redisson_countdownlatch__channel__{" + name + ":latch}"
		eventually(t, 10*time.Second, "waiters subscribed", func() bool {
			s1, _ := shardSubs(t, rdb, semCh)
			s2, _ := shardSubs(t, rdb, latchCh)
			return s1 == 1 && s2 == 1
		})
		start := time.Now()
		if err := sem.Release(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if err := latch.CountDown(ctx); err != nil {
			t.Fatal(err)
		}
		for _, ch := range []chan error{acquired, opened} {
			select {
			case err := <-ch:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("waiter not woken")
			}
		}
		// Both re-check on their own only every second or more; a wake-up
		// by message is well under that.
		t.Logf("%s: woken %v after release", name, time.Since(start))
	}
}

// migrateSlot moves slot, with its keys, from the master at src to the one
// at dst (the manual resharding steps of the Redis Cluster tutorial).
func migrateSlot(t *testing.T, rdb *redis.ClusterClient, slot int, src, dst *redis.Client) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// CLUSTER MYID through Do: the typed ClusterMyID needs go-redis v9.8.0.
	srcID, err := src.Do(ctx, "cluster", "myid").Text()
	must(err)
	dstID, err := dst.Do(ctx, "cluster", "myid").Text()
	must(err)
	must(dst.Do(ctx, "cluster", "setslot", slot, "importing", srcID).Err())
	must(src.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err())
	host, port, _ := strings.Cut(dst.Options().Addr, ":")
	for {
		keys := src.ClusterGetKeysInSlot(ctx, slot, 100).Val()
		if len(keys) == 0 {
			break
		}
		args := []any{"migrate", host, port, "", 0, 5000, "keys"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(src.Do(ctx, args...).Err())
	}
	must(rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err()
	}))
}

// A slot migrated while a waiter listens to its channel: the old node
// unsubscribes the waiter's client (an unasked sunsubscribe), the client
// subscribes the channel again on the new node, and the unlock, published
// there, wakes the waiter long before the holder's lease ends.
func TestClusterShardedSlotMigration(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	holder := newClient(t, cl.Client(t), nil)
	waiter := newClient(t, cl.Client(t), &Options{PubSubHealthCheck: 200 * time.Millisecond})
	name := "migrating:" + t.Name()
	l := holder.GetLock(name)
	mustTryLock(t, ctx, l, 0, time.Minute)
	got := waitAll(ctx, waiter, []string{name})
	channel := prefixName("redisson_lock__channel", name)
	eventually(t, 10*time.Second, "waiter subscribed", func() bool {
		s, _ := shardSubs(t, rdb, channel)
		return s == 1
	})

	src, err := rdb.MasterForKey(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var dst *redis.Client
	for _, addr := range cl.Addrs() {
		if addr != src.Options().Addr {
			c := redis.NewClient(&redis.Options{Addr: addr})
			defer c.Close()
			if c.Do(ctx, "role").Val().([]any)[0] == "master" {
				dst = c
				break
			}
		}
	}
	migrateSlot(t, rdb, hashSlot(name), src, dst)
	eventually(t, 20*time.Second, "channel subscribed on the new node", func() bool {
		return dst.PubSubShardNumSub(ctx, channel).Val()[channel] == 1
	})
	if waiter.pubsub.stats().rerouted == 0 {
		t.Fatal("no channel was re-routed")
	}
	start := time.Now()
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	collect(t, got, 1, 20*time.Second, "after the slot migration")
	t.Logf("waiter done %v after the unlock (lease 1m)", time.Since(start))
}

// On a cluster the janitor deletes release latches of locks in every slot,
// one UNLINK per slot group.
func TestClusterLatchesDeleted(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	names := clusterNames(t, rdb, 30)
	for _, name := range names {
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, 0)
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "latches deleted on every master", func() bool {
		var left atomic.Int64
		_ = rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			for _, name := range names {
				left.Add(int64(len(m.Keys(ctx, prefixName("redisson_unlock_latch", name)+":*").Val())))
			}
			return nil
		})
		return left.Load() == 0
	})
}

// A probe of the pub/sub mode that fails for a transient reason (here: no
// node reachable) is reported to the waiter and not remembered, so that a
// waiter never subscribes plain on a cluster whose publishers, once the
// probe succeeds, publish sharded.
func TestClusterProbeFailureNotRemembered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{addr}, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	if _, err := c.pubsub.subscribe(ctx, objectChannel{name: "redisson_lock__channel:{probe}"}, lockWakePolicy); err == nil {
		t.Fatal("subscribe with an unreachable cluster succeeded; want the probe's error")
	}
	if sharded, known := c.pubsub.engine.Known(); known {
		t.Fatalf("a failed probe was remembered (sharded %v)", sharded)
	}
	if c.pubsub.stats().channels != 0 {
		t.Fatal("a channel was subscribed after the probe failed")
	}
	ok, err := c.GetLock("probe").TryLock(ctx, 100*time.Millisecond, time.Second)
	if ok || err == nil {
		t.Fatalf("TryLock on an unreachable cluster = %v, %v; want an error", ok, err)
	}
}
