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
