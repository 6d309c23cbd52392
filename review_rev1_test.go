package redisson

import (
	"errors"
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
	eventually(t, 10*time.Second, "connection replaced", func() bool { return c.pubsub.replaced.Load() > 0 })
	before := c.pubsub.replaced.Load()
	time.Sleep(3 * time.Second)
	// With the back-off growing 20ms, 40ms, ... up to 1s, 3s allow about 7.
	if n := c.pubsub.replaced.Load() - before; n > 30 {
		t.Fatalf("%d connection replacements in 3s while the master is down; want a growing back-off (< 30)", n)
	}
}
