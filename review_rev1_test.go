package redisson

import (
	"context"
	"errors"
	"fmt"
	"github.com/redis/go-redis/v9"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// Review (rev1): with ReplicaAck on Cluster, runWait sends the acquire
// script straight to the node go-redis's slot map names, bypassing the
// cluster client's MOVED/ASK handling and run's migration retry. After a
// slot migration the client's map is stale for up to ~10s and every
// acquisition in that slot fails with a raw "MOVED" error (the cluster has
// no replicas, so the correct answer is ErrNotReplicated each time).
func TestReviewReplicaAckClusterAfterMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, cl.Client(t), &Options{ReplicaAck: ReplicaAck{Replicas: 1, Timeout: 20 * time.Millisecond}})
	name := "review:replica-ack:" + t.Name()
	l := c.GetLock(name)
	if ok, err := l.TryLock(ctx, 0, time.Minute); ok || !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("before migration: %v, %v; want ErrNotReplicated", ok, err)
	}
	slot := cl.SlotOf(t, name)
	from := cl.SlotOwner(t, slot)
	var to string
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
			break
		}
	}
	cl.MigrateSlot(t, slot, to)
	for i := 0; i < 3; i++ {
		ok, err := l.TryLock(ctx, 0, time.Minute)
		if ok || !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("attempt %d after migrating slot %d from %s to %s: %v, %v; want ErrNotReplicated", i, slot, from, to, ok, err)
		}
	}
	// Mid-migration (finished 500ms later, within run's retry window):
	// the lock's keys do not exist on the source, which answers ASK, and
	// the target answers TRYAGAIN until the migration ends.
	m := cl.BeginSlotMigration(t, slot, from)
	type result struct {
		ok  bool
		err error
	}
	res := make(chan result, 1)
	go func() {
		ok, err := l.TryLock(ctx, 0, time.Minute)
		res <- result{ok, err}
	}()
	time.Sleep(500 * time.Millisecond)
	m.Finish(t)
	r := <-res
	ok, err := r.ok, r.err
	if ok || !errors.Is(err, ErrNotReplicated) {
		t.Fatalf("during the migration of slot %d back to %s: %v, %v; want ErrNotReplicated", slot, from, ok, err)
	}
}

// Review (rev1): the receive loop's back-off is meant to grow to 1s while a
// connection cannot be re-established ("do not spin meanwhile"), but a
// sharded connection is replaced after its first back-off and the new
// connection's loop starts again from 20ms. While a master is down the
// client replaces (and re-dials, and asks go-redis to reload its slot map)
// about 50 times a second instead of backing off.
func TestReviewShardedReplaceBackoff(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded})
	name := "review:backoff:" + t.Name()
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

// Review (rev1): send takes wmu while holding p.mu, and holds wmu across
// the (S)SUBSCRIBE write, which on a new sharded connection includes the
// dial. While the dial to one unreachable master hangs (a partition that
// drops SYNs), the next subscriber anywhere blocks on wmu holding p.mu, and
// with it every waiter, dispatch and subscription of the client, on the
// healthy masters too: a TryLock with a 300ms wait on a lock of a healthy
// node does not return until the dial gives up.
func TestReviewBlockedDialStallsOtherNodes(t *testing.T) {
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
				return nil, errors.New("review: blackholed dial timed out")
			}
			return dialer.DialContext(ctx, network, addr)
		}
	})
	c := newClient(t, rdb, &Options{PubSubMode: PubSubSharded})
	holder := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded})

	topic := "review:stall:topic:" + t.Name()
	nodeA := cl.SlotOwner(t, cl.SlotOf(t, topic))
	var lockName string
	for i := 0; ; i++ {
		lockName = fmt.Sprintf("review:stall:lock:%d:%s", i, t.Name())
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

// Review (rev1): a handler that closes its own subscription, and a handler
// blocked while the client closes, both end (goleak checks the rest).
func TestReviewTopicCloseFromHandlerAndClientClose(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, time.Minute)
	topic := GetTopic[int](c, "review:topic:"+t.Name())
	var self *TopicSubscription
	selfReady := make(chan struct{})
	self, err = topic.Subscribe(ctx, func(int) { <-selfReady; self.Close() })
	if err != nil {
		t.Fatal(err)
	}
	close(selfReady)
	release := make(chan struct{})
	blocked, err := topic.Subscribe(ctx, func(int) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = cancel
	for i := 0; i < 3; i++ {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-self.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("self-closing subscriber still running")
	}
	if v := <-ch; v != 0 {
		t.Fatalf("Channel got %d; want 0", v)
	}
	c.Close()
	close(release)
	select {
	case <-blocked.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("blocked subscriber still running after client Close")
	}
	for range ch { // closed after client Close
	}
	blocked.Close()
	cancel()
}

// Review (rev1): after a server restart, the presence check replaces the
// connection at most a few times and then leaves it alone.
func TestReviewPresenceAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 50 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := "review:presence:" + t.Name()
	topic := GetTopic[string](c, name)
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	srv.Restart(t)
	eventually(t, 15*time.Second, "re-subscribed", func() bool { return rdb.PubSubNumSub(ctx, name).Val()[name] == 1 })
	time.Sleep(2 * time.Second)
	before := c.pubsub.stats().replaced
	time.Sleep(3 * time.Second)
	if n := c.pubsub.stats().replaced - before; n != 0 {
		t.Fatalf("%d replacements of a healthy connection", n)
	}
	t.Logf("replacements over the restart: %d", before)
	if _, err := topic.Publish(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("message not delivered after restart")
	}
}

// Review (rev1): a Topic and the object waiters of a client share one
// channel entry per channel name, and the entry keeps the wake policy of
// whoever created it. A topic listening to a lock's channel (to monitor
// unlocks, say), or a topic subscription still lingering there, creates
// the entry with no policy: the lock's local waiters then never hear the
// unlock and wait out their whole wait.
func TestReviewTopicOnLockChannelDeafensWaiters(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	holder := newClient(t, rdb, nil)
	name := "review:topic-lock:" + t.Name()
	monitor, err := GetTopic[string](c, prefixName("redisson_lock__channel", name), WithCodec(StringCodec{})).
		Subscribe(ctx, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer monitor.Close()
	hl := holder.GetLock(name)
	mustTryLock(t, ctx, hl, 0, time.Minute)
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = hl.Unlock(ctx)
	}()
	start := time.Now()
	ok, err := c.GetLock(name).TryLock(ctx, 8*time.Second, time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock after the holder unlocked: %v, %v (after %v)", ok, err, time.Since(start))
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("waiter woke %v after a release at 500ms", took)
	}
}

// Review (rev1): after a slot migration, the old node's unasked
// sunsubscribe re-routes the channel with go-redis's slot map, which
// nothing refreshed: it names the old node again, whose SSUBSCRIBE answer
// is a MOVED error, and that error replaces the whole connection, every
// other channel of that node re-subscribed (and all their waiters woken).
func TestReviewSunsubscribeRerouteStaleMap(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, time.Minute)
	rdb := cl.Client(t)
	c := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubSharded, PubSubHealthCheck: 200 * time.Millisecond})
	moving := "review:sunsub:moving:" + t.Name()
	from := cl.SlotOwner(t, cl.SlotOf(t, moving))
	var staying string
	for i := 0; ; i++ {
		staying = fmt.Sprintf("review:sunsub:staying:%d:%s", i, t.Name())
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

// Review (rev1): a RedLock round cut by its context leaves none of the
// locks it took held.
func TestReviewRedLockContextEndsMidRound(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	other := newClient(t, rdb, nil)
	base := "review:redlock:" + t.Name()
	mustTryLock(t, ctx, other.GetLock(base+":2"), 0, time.Minute)
	locks := []*Lock{c.GetLock(base + ":0"), c.GetLock(base + ":1"), c.GetLock(base + ":2")}
	rl := NewRedLock(locks...)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	ok, err := rl.TryLock(short, 10*time.Second, time.Minute)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryLock = %v, %v; want false, DeadlineExceeded", ok, err)
	}
	for _, l := range locks[:2] {
		if held, err := l.IsLocked(ctx); err != nil || held {
			t.Fatalf("%s left held (%v, %v) after the round was cut", l.Name(), held, err)
		}
	}
}

// Review (rev1): on NOSCRIPT the script is now loaded on every master, and
// the call fails if any master fails the SCRIPT LOAD, even one that has
// nothing to do with the call (down, its slots not covered). With
// cluster-require-full-coverage no, the healthy masters keep serving their
// slots; a lock there must still work after its node lost its scripts.
func TestReviewScriptLoadIgnoresUnrelatedDeadMaster(t *testing.T) {
	cl := redistest.StartClusterWith(t, 3, 0, []string{"--cluster-require-full-coverage", "no"})
	ctx := testCtx(t, time.Minute)
	c := newClient(t, cl.Client(t), nil)
	name := "review:noscript:" + t.Name()
	owner := cl.SlotOwner(t, cl.SlotOf(t, name))
	var dead string
	for _, m := range cl.Masters(t) {
		if m != owner {
			dead = m
			break
		}
	}
	for _, s := range cl.Servers() {
		if s.Addr() == dead {
			s.Kill()
		}
	}
	o := redis.NewClient(&redis.Options{Addr: owner})
	defer o.Close()
	if err := o.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	l := c.GetLock(name)
	ok, err := l.TryLock(ctx, 0, time.Minute)
	if !ok || err != nil {
		t.Fatalf("TryLock on %s (healthy, scripts flushed) with %s down: %v, %v; want true, nil", owner, dead, ok, err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
