package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// startReplicated starts a master and one replica of it, and waits until
// the replica is in sync.
func startReplicated(tb testing.TB) (master, replica *redistest.Server) {
	tb.Helper()
	master = redistest.Start(tb)
	replica = redistest.Start(tb, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port()))
	rc := replica.Client(tb)
	deadline := time.Now().Add(30 * time.Second)
	for {
		info := rc.Info(context.Background(), "replication").Val()
		if strings.Contains(info, "master_link_status:up") {
			return master, replica
		}
		if time.Now().After(deadline) {
			tb.Fatalf("replica not in sync after 30s:\n%s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With ReplicaAck, an acquisition returns only once the replica has the
// lock: the replica answers for it as soon as TryLock returns. Asking for
// more replicas than exist undoes the acquisition and reports
// ErrNotReplicated, leaving the lock free.
func TestReplicaAck(t *testing.T) {
	master, replica := startReplicated(t)
	rdb := master.Client(t)
	rrep := replica.Client(t)
	ctx := testCtx(t, time.Minute)

	c := newClient(t, rdb, &Options{ReplicaAck: ReplicaAck{Replicas: 1, Timeout: 5 * time.Second}})
	for i := 0; i < 20; i++ {
		name := "replicated:" + strconv.Itoa(i)
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, time.Minute)
		if n := rrep.Exists(ctx, name).Val(); n != 1 {
			t.Fatalf("lock %s not on the replica when TryLock returned", name)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}

	strict := newClient(t, rdb, &Options{ReplicaAck: ReplicaAck{Replicas: 2, Timeout: 100 * time.Millisecond}})
	for _, l := range []*Lock{strict.GetLock("strict"), strict.GetFairLock("strict:fair"), strict.GetReadWriteLock("strict:rw").WriteLock()} {
		ok, err := l.TryLock(ctx, 0, time.Minute)
		if ok || !errors.Is(err, ErrNotReplicated) {
			t.Fatalf("%s with 2 replicas asked, 1 present: %v, %v; want ErrNotReplicated", l.Name(), ok, err)
		}
		if held, _ := l.IsLocked(ctx); held {
			t.Fatalf("%s still locked after ErrNotReplicated", l.Name())
		}
		if n, err := l.HoldCount(ctx); err != nil || n != 0 {
			t.Fatalf("%s: HoldCount = %d, %v; want 0", l.Name(), n, err)
		}
	}
	if _, err := New(rdb, &Options{ReplicaAck: ReplicaAck{Replicas: -1}}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Replicas -1: %v", err)
	}
	if _, err := New(rdb, &Options{ReplicaAck: ReplicaAck{Replicas: 1, Timeout: -1}}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Timeout -1: %v", err)
	}
}

// BenchmarkReplicaAck measures what waiting for one replica costs a lock
// acquisition on loopback: TryLock + Unlock with and without ReplicaAck.
func BenchmarkReplicaAck(b *testing.B) {
	master, _ := startReplicated(b)
	for _, ack := range []int{0, 1} {
		b.Run("replicas="+strconv.Itoa(ack), func(b *testing.B) {
			rdb := master.Client(b, func(o *redis.Options) { o.PoolSize = 4 })
			c := newClient(b, rdb, &Options{ReplicaAck: ReplicaAck{Replicas: ack}})
			ctx := context.Background()
			l := c.GetLock("bench:replica-ack")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if ok, err := l.TryLock(ctx, 0, time.Minute); !ok || err != nil {
					b.Fatal(ok, err)
				}
				if err := l.Unlock(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// With ReplicaAck on Cluster, an acquisition goes through the cluster
// client's MOVED/ASK handling and run's migration retry, even though it
// waits for replicas on the node it ran on: after a slot migration (the
// client's slot map stale for up to ~10s) and during one (ASK, TRYAGAIN),
// the answer is ErrNotReplicated each time (the cluster has no replicas),
// never a raw "MOVED" error.
func TestReplicaAckClusterNotReplicatedAcrossSlotMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, cl.Client(t), &Options{ReplicaAck: ReplicaAck{Replicas: 1, Timeout: 20 * time.Millisecond}})
	name := "test:replica-ack:" + t.Name()
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
