package redisson

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// commandCalls returns the calls count of one command from INFO commandstats.
func commandCalls(t testing.TB, rdb *redis.Client, cmd string) int {
	t.Helper()
	return redistest.CommandCalls(t, rdb, cmd)
}

// In steady state no script body crosses the wire: no EVAL at all, and no
// SCRIPT LOAD after warm-up.
func TestScriptsEvalShaOnly(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 300 * time.Millisecond})
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	cycle := func() {
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, 0)
		l.IsHeld(ctx)
		l.Unlock(ctx)
	}
	cycle() // warm-up: loads each script once
	loads := commandCalls(t, rdb, "script|load")
	if loads == 0 {
		t.Fatal("no SCRIPT LOAD seen during warm-up")
	}
	for i := 0; i < 50; i++ {
		cycle()
	}
	// Exercise the watchdog's pipelined renewals too.
	l := c.GetLock(name)
	mustTryLock(t, ctx, l, 0, 0)
	time.Sleep(time.Second)
	l.Unlock(ctx)

	if n := commandCalls(t, rdb, "eval"); n != 0 {
		t.Fatalf("EVAL called %d times; want 0", n)
	}
	if n := commandCalls(t, rdb, "script|load"); n != loads+1 {
		t.Fatalf("SCRIPT LOAD called %d times after warm-up; want only the renew script's first load", n-loads)
	}
	if n := commandCalls(t, rdb, "evalsha"); n < 150 {
		t.Fatalf("EVALSHA called %d times; want at least 150", n)
	}
}

// SCRIPT FLUSH in the middle of a workload reaches no caller, including the
// watchdog's pipelined renewals.
func TestScriptsFlushMidWorkload(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	// Renewals every 300ms across a second of flushes: several of them
	// meet a flushed cache, with room for a loaded machine's delays.
	c := newClient(t, rdb, &Options{WatchdogTimeout: 900 * time.Millisecond})
	ctx := testCtx(t, 60*time.Second)
	name := uniqueName(t, rdb)
	// Long-held locks whose renewals must survive the flush.
	var kept []*Lock
	for i := 0; i < 20; i++ {
		l := c.GetLock(name + ":kept:" + strconv.Itoa(i))
		mustTryLock(t, ctx, l, 0, 0)
		kept = append(kept, l)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ops := 0
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				l := c.GetLock(name)
				if err := l.Lock(ctx); err != nil {
					t.Errorf("Lock: %v", err)
					return
				}
				if _, err := l.HoldCount(ctx); err != nil {
					t.Errorf("HoldCount: %v", err)
				}
				if err := l.Unlock(ctx); err != nil {
					t.Errorf("Unlock: %v", err)
					return
				}
				mu.Lock()
				ops++
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 10; i++ {
		time.Sleep(100 * time.Millisecond)
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	for _, l := range kept {
		if l.Err() != nil {
			t.Fatalf("kept lock lost across SCRIPT FLUSH: %v", l.Err())
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if ops == 0 {
		t.Fatal("workload made no progress")
	}
	t.Logf("%d lock cycles across 10 SCRIPT FLUSHes", ops)
}

// On NOSCRIPT the script is loaded on every master, and a master that has
// nothing to do with the call (down, its slots not covered) failing the
// SCRIPT LOAD does not fail the call. With cluster-require-full-coverage
// no, the healthy masters keep serving their slots; a lock there still
// works after its node lost its scripts.
func TestScriptCacheLoadIgnoresUnrelatedDeadMaster(t *testing.T) {
	cl := redistest.StartClusterWith(t, 3, 0, []string{"--cluster-require-full-coverage", "no"})
	ctx := testCtx(t, time.Minute)
	c := newClient(t, cl.Client(t), nil)
	name := "test:noscript:" + t.Name()
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

// lockStorm takes 50 distinct locks at once (TryLock, no wait) and releases
// them: every call must succeed.
func lockStorm(t *testing.T, ctx context.Context, c *Client, prefix string) {
	t.Helper()
	locks := make([]*Lock, 50)
	for i := range locks {
		locks[i] = c.GetLock(prefix + strconv.Itoa(i))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, l := range locks {
		wg.Go(func() {
			<-start
			if ok, err := l.TryLock(ctx, 0, time.Minute); !ok || err != nil {
				t.Errorf("TryLock %s after SCRIPT FLUSH = %v, %v; want true, nil", l.Name(), ok, err)
			}
		})
	}
	close(start)
	wg.Wait()
	for _, l := range locks {
		if err := l.Unlock(ctx); err != nil {
			t.Errorf("Unlock %s: %v", l.Name(), err)
		}
	}
}

// reloadsOf counts the script_reloaded events naming script.
func reloadsOf(rec *recorder, script string) int {
	n := 0
	for _, e := range rec.eventsOf(EventScriptReloaded) {
		if e.Name == script {
			n++
		}
	}
	return n
}

// Callers that meet NOSCRIPT for one script at once share one SCRIPT LOAD:
// after SCRIPT FLUSH, 50 concurrent lock acquisitions load lock_acquire
// once, and all succeed.
func TestScriptsConcurrentNoScriptLoadOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, _ := observedClientOn(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	lockStorm(t, ctx, c, "storm:warm:") // loads both scripts
	acquire := c.GetLock("x").kind.acquire.Name()
	before := reloadsOf(rec, acquire)
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	lockStorm(t, ctx, c, "storm:")
	if n := reloadsOf(rec, acquire) - before; n != 1 {
		t.Errorf("%d script_reloaded events for %s after SCRIPT FLUSH and 50 concurrent calls; want 1", n, acquire)
	}
	// lock_acquire's load and the release script's (the unlocks after it).
	if n := commandCalls(t, rdb, "script|load"); n != 2 {
		t.Errorf("SCRIPT LOAD called %d times; want 2 (one per script)", n)
	}
}

// On Cluster one load reaches every master, and so serves the callers of
// every node: one SCRIPT LOAD per script per master.
func TestScriptsConcurrentNoScriptLoadOnceCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, 2*time.Minute)
	c, rec, _ := observedClientOn(t, cl.Client(t), nil)
	lockStorm(t, ctx, c, "storm:warm:")
	acquire := c.GetLock("x").kind.acquire.Name()
	before := reloadsOf(rec, acquire)
	var nodes []*redis.Client
	for _, addr := range cl.Masters(t) {
		n := redis.NewClient(&redis.Options{Addr: addr})
		defer n.Close()
		if err := n.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := n.ConfigResetStat(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, n)
	}
	lockStorm(t, ctx, c, "storm:")
	if n := reloadsOf(rec, acquire) - before; n != 1 {
		t.Errorf("%d script_reloaded events for %s after SCRIPT FLUSH and 50 concurrent calls; want 1", n, acquire)
	}
	for i, n := range nodes {
		if got := commandCalls(t, n, "script|load"); got != 2 {
			t.Errorf("master %s: SCRIPT LOAD called %d times; want 2 (one per script)", cl.Masters(t)[i], got)
		}
	}
}

// loadCounter is a slog.Handler for Options.Logger that counts the script
// runner's SCRIPT LOADs (each is logged as a script_reloaded event) and
// hands every record to next as next would take it.
type loadCounter struct {
	n    atomic.Int64
	next slog.Handler
}

func newLoadCounter() *loadCounter { return &loadCounter{next: slog.Default().Handler()} }

// loads returns the SCRIPT LOADs counted so far.
func (h *loadCounter) loads() int { return int(h.n.Load()) }

func (h *loadCounter) Enabled(context.Context, slog.Level) bool { return true }

func (h *loadCounter) Handle(ctx context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "event" && a.Value.String() == EventScriptReloaded.String() {
			h.n.Add(1)
			return false
		}
		return true
	})
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *loadCounter) WithAttrs([]slog.Attr) slog.Handler { return h }

func (h *loadCounter) WithGroup(string) slog.Handler { return h }

// A client's first load of each script is no reload: a fresh server and
// client run scripts with no script_reloaded event; after SCRIPT FLUSH the
// next call's load is one.
func TestScriptFirstLoadIsNoReload(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, _ := observedClientOn(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, ctx, l, 0, 0)
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	s := c.GetSemaphore(uniqueName(t, rdb))
	if _, err := s.TrySetPermits(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if n := commandCalls(t, rdb, "script|load"); n < 3 {
		t.Fatalf("SCRIPT LOAD called %d times on a fresh server; want at least 3 (the test's premise)", n)
	}
	if evs := rec.eventsOf(EventScriptReloaded); len(evs) != 0 {
		t.Fatalf("script_reloaded events on first use = %+v, want none", evs)
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, l, 0, 0)
	evs := rec.eventsOf(EventScriptReloaded)
	if len(evs) != 1 || evs[0].Name != l.kind.acquire.Name() {
		t.Fatalf("script_reloaded events after SCRIPT FLUSH = %+v, want one naming %q", evs, l.kind.acquire.Name())
	}
}
