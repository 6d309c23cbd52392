package redisson

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// While a master is down, the receive loop's back-off keeps growing to 1s
// ("do not spin meanwhile") across the replacements of its sharded
// connection: a replacement does not restart the back-off at 20ms, so the
// client does not replace (re-dial, and ask go-redis to reload its slot
// map) about 50 times a second.
func TestClusterShardedReplaceBacksOffWhileMasterDown(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	t.Parallel() // its own cluster; mostly waiting, so it overlaps the other parallel tests
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded})
	name := "test:backoff:" + t.Name()
	sub, err := GetShardedTopic[string](c, name).Subscribe(ctx, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	owner := cl.SlotOwner(t, cl.SlotOf(t, name))
	for _, s := range cl.Servers() {
		if s.Addr() == owner {
			s.Kill()
		}
	}
	eventually(t, 10*time.Second, "connection replaced", func() bool { return c.pubsub.stats().replaced > 0 })
	before := c.pubsub.stats().replaced
	time.Sleep(3 * time.Second)
	// With the back-off growing 20ms, 40ms, ... up to 1s, 3s allow about 7.
	if n := c.pubsub.stats().replaced - before; n > 30 {
		t.Fatalf("%d connection replacements in 3s while the master is down; want a growing back-off (< 30)", n)
	}
}

// A dial to one unreachable master that hangs (a partition that drops
// SYNs) while the client re-establishes its sharded connection there does
// not stall the client's waiters, dispatch and subscriptions on the healthy
// masters: the (S)SUBSCRIBE write, which on a new sharded connection
// includes the dial, must not hold the lock every other subscriber needs.
// A TryLock with a 300ms wait on a lock of a healthy node returns well
// before the dial gives up.
func TestClusterShardedHungDialDoesNotStallOtherNodes(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	t.Parallel() // its own cluster; mostly waiting, so it overlaps the other parallel tests
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	var blackhole atomic.Value // address whose dials hang
	blackhole.Store("")
	dialer := &net.Dialer{Timeout: 5 * time.Second}
	rdb := cl.Client(t, func(o *redis.ClusterOptions) {
		o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if addr == blackhole.Load().(string) {
				select {
				case <-ctx.Done():
				case <-time.After(8 * time.Second):
				}
				return nil, errors.New("test: blackholed dial timed out")
			}
			return dialer.DialContext(ctx, network, addr)
		}
	})
	c := newClient(t, rdb, &Options{PubSubMode: PubSubSharded})
	holder := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded})

	topic := "test:stall:topic:" + t.Name()
	nodeA := cl.SlotOwner(t, cl.SlotOf(t, topic))
	var lockName string
	for i := 0; ; i++ {
		lockName = fmt.Sprintf("test:stall:lock:%d:%s", i, t.Name())
		if cl.SlotOwner(t, cl.SlotOf(t, lockName)) != nodeA {
			break
		}
	}
	sub, err := GetShardedTopic[string](c, topic).Subscribe(ctx, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	mustTryLock(t, ctx, holder.GetLock(lockName), 0, time.Minute)

	// Node A becomes unreachable for new connections, and c's pub/sub
	// connection to it breaks: c re-dials it, under wmu.
	blackhole.Store(nodeA)
	a := redis.NewClient(&redis.Options{Addr: nodeA})
	defer a.Close()
	if err := a.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "connection to A replaced", func() bool { return c.pubsub.stats().replaced > 0 })
	time.Sleep(200 * time.Millisecond)

	start := time.Now()
	ok, err := c.GetLock(lockName).TryLock(ctx, 300*time.Millisecond, time.Minute)
	took := time.Since(start)
	if ok || err != nil {
		t.Fatalf("TryLock on a held lock: %v, %v", ok, err)
	}
	if took > 3*time.Second {
		t.Fatalf("TryLock with a 300ms wait on a healthy node took %v while a dial to %s hung", took, nodeA)
	}
}

// After a slot migration, the old node's unasked sunsubscribe re-routes
// the channel to the new node without replacing any connection. A
// re-route with a stale slot map would name the old node again, whose
// SSUBSCRIBE answer is a MOVED error; that error must not replace the
// whole connection (every other channel of that node re-subscribed, all
// their waiters woken).
func TestClusterShardedMigratedChannelReroutedWithoutReplace(t *testing.T) {
	redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, time.Minute)
	rdb := cl.Client(t)
	c := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded, PubSubHealthCheck: 200 * time.Millisecond})
	moving := "test:sunsub:moving:" + t.Name()
	from := cl.SlotOwner(t, cl.SlotOf(t, moving))
	var staying string
	for i := 0; ; i++ {
		staying = fmt.Sprintf("test:sunsub:staying:%d:%s", i, t.Name())
		if cl.SlotOf(t, staying) != cl.SlotOf(t, moving) && cl.SlotOwner(t, cl.SlotOf(t, staying)) == from {
			break
		}
	}
	for _, name := range []string{moving, staying} {
		s, err := GetShardedTopic[string](c, name).Subscribe(ctx, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	var to string
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
			break
		}
	}
	cl.MigrateSlot(t, cl.SlotOf(t, moving), to)
	dst := redis.NewClient(&redis.Options{Addr: to})
	defer dst.Close()
	eventually(t, 20*time.Second, "channel subscribed on the new node", func() bool {
		return dst.PubSubShardNumSub(ctx, moving).Val()[moving] == 1
	})
	_ = rdb
	if n := c.pubsub.stats().replaced; n != 0 {
		t.Fatalf("%d connections replaced to re-route one channel after a migration; want 0", n)
	}
}
