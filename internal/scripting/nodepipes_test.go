package scripting

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// apPush appends ARGV[1] to the list at KEYS[1]: applied twice, the id
// shows twice; lost, not at all.
var apPush = New("ap_push", "redis.call('rpush', KEYS[1], ARGV[1]) return redis.call('llen', KEYS[1])")

// nodeStats sums the per-master pipes' counters, and counts the pipes that
// sent a pipeline.
func (n *nodePipes) nodeStats() (pipelines, batched uint64, busyPipes int) {
	n.pipes.Range(func(_, v any) bool {
		st := v.(*autoPipe).stats()
		pipelines += st.pipelines
		batched += st.batched
		if st.pipelines > 0 {
			busyPipes++
		}
		return true
	})
	return pipelines, batched, busyPipes
}

// On a Cluster the auto-pipeline batches per master: 32 goroutines calling
// on keys of every master send pipelines to each of them, and a slot moved
// to another master while they run (ASK, then MOVED, keys moved with
// MIGRATE, the target's scripts flushed first) loses no call and applies
// none twice: every id a call was told it appended is in its list exactly
// once, and no error reaches a caller.
func TestClusterAutoPipelinePerMaster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	r := NewRunner(Config{Redis: cc, Cluster: cc, Lanes: 2})
	if r.nodes == nil || r.pipe != nil {
		t.Fatal("a Cluster runner with lanes has no per-master pipes")
	}
	ctx := testCtx(t, 2*time.Minute)
	var keys []string
	for i := range 24 {
		keys = append(keys, "np:"+strconv.Itoa(i))
	}
	for i := range 8 {
		keys = append(keys, "{np:mig}:"+strconv.Itoa(i))
	}
	slot := cl.SlotOf(t, "{np:mig}")
	from := cl.SlotOwner(t, slot)
	var to string
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
			break
		}
	}
	target := redis.NewClient(&redis.Options{Addr: to})
	t.Cleanup(func() { target.Close() })

	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		applied = map[string]string{} // id -> key, for calls that succeeded
		failed  []error
	)
	for g := range 32 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				key := keys[(g+i)%len(keys)]
				id := fmt.Sprintf("%d:%d", g, i)
				err := r.Run(ctx, apPush, []string{key}, id).Err()
				mu.Lock()
				if err != nil {
					failed = append(failed, err)
				} else {
					applied[id] = key
				}
				mu.Unlock()
			}
		})
	}
	time.Sleep(time.Second)
	if err := target.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	m := cl.BeginSlotMigration(t, slot, to)
	time.Sleep(500 * time.Millisecond) // new keys go to the target meanwhile (ASK)
	m.MoveKeys(t)
	time.Sleep(300 * time.Millisecond)
	m.Finish(t)
	time.Sleep(time.Second)
	stop.Store(true)
	wg.Wait()

	pipelines, batched, busy := r.nodes.nodeStats()
	t.Logf("%d calls, %d errors; %d pipelines carried %d calls, on %d masters", len(applied), len(failed), pipelines, batched, busy)
	for i, err := range failed {
		if i < 5 {
			t.Errorf("a call failed: %v", err)
		}
	}
	if busy < 3 {
		t.Errorf("pipelines went to %d masters; want all 3 (32 goroutines on keys of every master)", busy)
	}
	seen := map[string]int{}
	for _, k := range keys {
		ids, err := cc.LRange(ctx, k, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			seen[id]++
			if want, ok := applied[id]; ok && want != k {
				t.Errorf("id %s is in %s; its call was on %s", id, k, want)
			}
		}
	}
	for id, n := range seen {
		if n > 1 {
			t.Errorf("id %s applied %d times", id, n)
		}
	}
	for id := range applied {
		if seen[id] != 1 {
			t.Errorf("id %s: its call succeeded, but it is not in its list", id)
		}
	}
}

// A stopped master holds up only its own calls: with one master paused
// (SIGSTOP) and its lanes taken by calls that hang, calls to the other
// masters still complete at once.
func TestClusterAutoPipelineIsolatesMasters(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	cc := cl.Client(t)
	r := NewRunner(Config{Redis: cc, Cluster: cc, Lanes: 2})
	ctx := testCtx(t, time.Minute)
	// One key per master.
	perMaster := map[string]string{}
	for i := 0; len(perMaster) < 3; i++ {
		k := "iso:" + strconv.Itoa(i)
		owner := cl.SlotOwner(t, cl.SlotOf(t, k))
		if _, ok := perMaster[owner]; !ok {
			perMaster[owner] = k
			if _, err := r.Run(ctx, apPush, []string{k}, "warm").Result(); err != nil {
				t.Fatal(err)
			}
		}
	}
	var paused *redistest.Server
	for _, s := range cl.Servers() {
		if _, ok := perMaster[s.Addr()]; ok {
			paused = s
			break
		}
	}
	stuck := perMaster[paused.Addr()]
	paused.Pause()
	resumed := false
	defer func() {
		if !resumed {
			paused.Resume()
		}
	}()
	hung, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 8 { // more than the lanes: the rest queue in that master's pipe
		wg.Go(func() { _ = r.Run(hung, apPush, []string{stuck}, "hung").Err() })
	}
	time.Sleep(300 * time.Millisecond)
	for addr, k := range perMaster {
		if addr == paused.Addr() {
			continue
		}
		cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		err := r.Run(cctx, apPush, []string{k}, "live").Err()
		ccancel()
		if err != nil {
			t.Errorf("a call to the live master %s: %v", addr, err)
		}
		t.Logf("call to live master %s took %v while %s is stopped", addr, time.Since(start), paused.Addr())
	}
	cancel()
	paused.Resume()
	resumed = true
	wg.Wait()
}
