package redisson

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The lock on a 3-master cluster, with names spread over the slots of every
// master: exclusion, wake-up, watchdog renewal (batched per slot) and
// re-entry.
func TestClusterLock(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 600 * time.Millisecond})
	ctx := testCtx(t, time.Minute)

	// Names in different slots, and on every master.
	names := make([]string, 30)
	masters := map[string]bool{}
	for i := range names {
		names[i] = uniqueName(t, rdb) + ":" + strconv.Itoa(i)
		node, err := rdb.MasterForKey(ctx, names[i])
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
	}
	if len(masters) != 3 {
		t.Fatalf("names landed on %d masters; want 3", len(masters))
	}

	var holds []*Lock
	for _, name := range names {
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, 0)
		mustTryLock(t, holdCtx(t, ctx, l), l, 0, 0) // re-entry
		holds = append(holds, l)
	}
	time.Sleep(2 * time.Second) // several watchdog passes, across all slots
	for _, l := range holds {
		if err := l.Err(); err != nil {
			t.Fatalf("%s lost on cluster: %v", l.Name(), err)
		}
		if d, err := l.RemainingLease(ctx); err != nil || d <= 0 {
			t.Fatalf("%s RemainingLease = %v, %v", l.Name(), d, err)
		}
	}

	// A waiter on another client is woken on every master.
	other := newClient(t, cl.Client(t), nil)
	var wg sync.WaitGroup
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := other.GetLock(name)
			ok, err := w.TryLock(ctx, 20*time.Second, 0)
			if err != nil || !ok {
				t.Errorf("waiter on %s: %v, %v", name, ok, err)
				return
			}
			w.Unlock(ctx)
		}()
	}
	time.Sleep(300 * time.Millisecond)
	for _, l := range holds {
		for i := 0; i < 2; i++ {
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	wg.Wait()
	for _, name := range names {
		if n, _ := rdb.Exists(context.Background(), name).Result(); n != 0 {
			t.Fatalf("%s still exists", name)
		}
	}
}

// SCRIPT FLUSH on every master of a cluster: scripts are loaded again on the
// node that answered.
func TestClusterScriptFlush(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for round := 0; round < 3; round++ {
		if err := rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
			return m.ScriptFlush(ctx).Err()
		}); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			l := c.GetLock(uniqueName(t, rdb))
			mustTryLock(t, ctx, l, 0, 0)
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// The watchdog on a 3-master cluster keeps every lease through a slot
// migration: 60 locks, 15 of them in the slot moved (renewed together, one
// call with 15 keys: TRYAGAIN while their keys are split between the two
// masters, then ASK, then MOVED), none lost; and a renewal pass costs one
// round trip per master (a pipeline through the master's own client).
func TestClusterWatchdogMigration(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	counters := &nodeCounters{by: map[string][]*pipeCounter{}}
	rdb := cl.Client(t, func(o *redis.ClusterOptions) { o.NewClient = counters.newClient })
	rec := &recorder{}
	timeout := 1500 * time.Millisecond
	period := timeout / 3
	c := newClient(t, rdb, &Options{WatchdogTimeout: timeout, Observer: rec})
	ctx := testCtx(t, 2*time.Minute)
	u := uniqueName(t, rdb)
	mig := "{" + u + ":mig}"
	var names, moved []string
	for i := range 45 {
		names = append(names, u+":"+strconv.Itoa(i))
	}
	for i := range 15 {
		moved = append(moved, mig+":"+strconv.Itoa(i))
	}
	names = append(names, moved...)
	masters := cl.Masters(t)
	var locks []*Lock
	for _, n := range names {
		l := c.GetLock(n)
		mustTryLock(t, ctx, l, 0, 0)
		locks = append(locks, l)
	}
	slot := cl.SlotOf(t, mig)
	from := cl.SlotOwner(t, slot)
	var to string
	for _, m := range masters {
		if m != from {
			to = m
			break
		}
	}

	// Steady state: one round trip per master per pass.
	time.Sleep(2 * period)
	passes := func() int { return len(rec.eventsOf(EventRenewalPass)) }
	counters.reset()
	p0 := passes()
	time.Sleep(4 * period)
	n := passes() - p0
	for _, m := range masters {
		pipes, cmds := counters.sent(m)
		t.Logf("master %s: %d pipelines and %d single commands in %d renewal passes", m, pipes, cmds, n)
		if trips := int(pipes + cmds); trips < n-1 || trips > n+1 {
			t.Errorf("master %s: %d round trips in %d renewal passes; want one per pass", m, trips, n)
		}
	}

	m := cl.BeginSlotMigration(t, slot, to)
	time.Sleep(period)
	// Half the slot's keys on the target: a call on all of them is TRYAGAIN.
	host, port, _ := strings.Cut(to, ":")
	src := redis.NewClient(&redis.Options{Addr: from})
	t.Cleanup(func() { src.Close() })
	args := []any{"migrate", host, port, "", 0, 5000, "keys"}
	for _, k := range moved[:7] {
		args = append(args, k)
	}
	if err := src.Do(ctx, args...).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(period / 2)
	m.MoveKeys(t)
	time.Sleep(period) // every key on the target: ASK
	m.Finish(t)
	time.Sleep(2 * period) // MOVED for a stale slot map

	for _, l := range locks {
		if err := l.Err(); err != nil {
			t.Errorf("%s lost during the migration: %v", l.Name(), err)
		}
	}
	for _, e := range rec.eventsOf(EventLeaseLost) {
		t.Errorf("lease lost: %s: %v", e.Name, e.Err)
	}
	failed := rec.eventsOf(EventRenewalFailed)
	t.Logf("%d renewal passes, %d with a failed call (first: %v)", passes(), len(failed), firstEventErr(failed))
	for _, l := range locks {
		if d, err := l.RemainingLease(ctx); err != nil || d <= 0 {
			t.Errorf("%s RemainingLease = %v, %v", l.Name(), d, err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Errorf("%s Unlock: %v", l.Name(), err)
		}
	}
	for _, n := range names {
		if k, _ := rdb.Exists(ctx, n).Result(); k != 0 {
			t.Errorf("%s still exists after Unlock", n)
		}
	}
}

func firstEventErr(es []Event) error {
	if len(es) == 0 {
		return nil
	}
	return es[0].Err
}
