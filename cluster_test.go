package redisson

import (
	"context"
	"strconv"
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
