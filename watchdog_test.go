package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A renewal pass that takes longer than a renewal period (a third of the
// lease) still renews: a pass cut off at one period would, on a link (or a
// pass of 100,000 leases) slower than that, fail every time and lose every
// lease, although each round trip fits in the lease.
func TestWatchdogSlowRenewalPassKeepsLeases(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: -1})
	t.Cleanup(func() { rdb.Close() })
	c := newClient(t, rdb, &Options{WatchdogTimeout: 2 * time.Second})
	ctx := testCtx(t, time.Minute)
	var held []*Lock
	for i := 0; i < 5; i++ {
		l := c.GetLock(fmt.Sprintf("slow-pass:%d", i))
		mustTryLock(t, ctx, l, 0, 0)
		held = append(held, l)
	}
	// Let one pass load the renewal script (a NOSCRIPT reload costs two more
	// round trips), then slow the link.
	eventually(t, 10*time.Second, "first renewal pass", func() bool { _, _, calls := c.watchdog.stats(); return calls > 0 })
	proxy.SetLatency(450 * time.Millisecond) // round trip 0.9s > period 0.67s
	time.Sleep(5 * time.Second)
	proxy.SetLatency(0)
	for _, l := range held {
		if err := l.Err(); err != nil {
			t.Fatalf("%s lost with renewals slower than a period but within the lease: %v", l.Name(), err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Close ends every hold of the client with ErrClientClosed, those with an
// explicit lease (ended by a timer, not renewed) as well as watched ones,
// for every kind of lock.
func TestCloseEndsHoldsWithExplicitLease(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 30*time.Second)
	rw := c.GetReadWriteLock(uniqueName(t, rdb))
	rw2 := c.GetReadWriteLock(uniqueName(t, rdb))
	locks := map[string]*Lock{
		"lock":       c.GetLock(uniqueName(t, rdb)),
		"fair":       c.GetFairLock(uniqueName(t, rdb)),
		"read":       rw.ReadLock(),
		"write":      rw2.WriteLock(),
		"watchdog":   c.GetLock(uniqueName(t, rdb)),
		"re-entered": c.GetLock(uniqueName(t, rdb)),
	}
	ctxs := map[string]context.Context{}
	for what, l := range locks {
		lease := time.Minute
		if what == "watchdog" {
			lease = 0
		}
		mustTryLock(t, ctx, l, 0, lease)
		lctx, cancel := l.Context(ctx)
		if what == "re-entered" {
			mustTryLock(t, lctx, l, 0, 2*time.Minute)
		}
		t.Cleanup(cancel)
		ctxs[what] = lctx
	}
	c.Close()
	timeout := time.After(5 * time.Second)
	for what, l := range locks {
		select {
		case <-l.Done():
		case <-timeout:
			t.Errorf("%s: Done not closed 5s after Close", what)
			continue
		}
		if err := l.Err(); !errors.Is(err, ErrClientClosed) {
			t.Errorf("%s: Err after Close = %v; want ErrClientClosed", what, err)
		}
		select {
		case <-ctxs[what].Done():
			if cause := context.Cause(ctxs[what]); !errors.Is(cause, ErrClientClosed) {
				t.Errorf("%s: lock context cause = %v; want ErrClientClosed", what, cause)
			}
		case <-timeout:
			t.Errorf("%s: lock context not cancelled 5s after Close", what)
		}
	}
}

// Close returns within CleanupTimeout when a renewal pass is stuck on a
// server that does not answer, rather than waiting for the pass's own
// deadline (up to the lease).
func TestCloseBoundedWhileRenewalPassStuck(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, err := New(rdb, &Options{WatchdogTimeout: 6 * time.Second, CleanupTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, srv.Client(t)))
	mustTryLock(t, ctx, l, 0, 0)
	srv.Pause()
	t.Cleanup(srv.Resume)
	time.Sleep(2300 * time.Millisecond) // the pass at 2s is stuck now
	start := time.Now()
	c.Close()
	took := time.Since(start)
	t.Logf("Close took %v", took)
	if took > 1500*time.Millisecond {
		t.Errorf("Close took %v with a stuck renewal pass; want about CleanupTimeout (200ms)", took)
	}
	if err := l.Err(); !errors.Is(err, ErrClientClosed) {
		t.Errorf("Err after Close = %v; want ErrClientClosed", err)
	}
}

// pipeHook records the longest pipeline a client sent.
type pipeHook struct{ longest atomic.Int64 }

func (h *pipeHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *pipeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *pipeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for n := h.longest.Load(); int64(len(cmds)) > n && !h.longest.CompareAndSwap(n, int64(len(cmds))); n = h.longest.Load() {
		}
		return next(ctx, cmds)
	}
}

// A renewal pass over more than pipeHolds leases (maxPassHolds, lowered
// here to 1,000) goes out in several pipelines of at most that many (one
// pipeline of a million leases did not finish its write within go-redis's
// write timeout), and still renews every lease.
func TestWatchdogLongPassSplitsPipelines(t *testing.T) {
	srv := redistest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { rdb.Close() })
	h := &pipeHook{}
	rdb.AddHook(h)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 3 * time.Second, WatchdogBatchSize: 1})
	const pipeHolds = 1000
	c.watchdog.pipeHolds = pipeHolds
	ctx := testCtx(t, 2*time.Minute)
	n := 2*pipeHolds + 100 // three pipelines per pass
	held := make([]*Lock, n)
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := g; i < n; i += 16 {
				held[i] = c.GetLock(fmt.Sprintf("long-pass:%d", i))
				if ok, err := held[i].TryLock(ctx, 0, 0); err != nil || !ok {
					t.Errorf("TryLock %d: %v %v", i, ok, err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	time.Sleep(4 * time.Second) // over a lease: renewed passes, not the first lease, keep them
	if got := h.longest.Load(); got != pipeHolds {
		t.Fatalf("longest pipeline %d calls, want %d (a pass of %d calls split)", got, pipeHolds, n)
	}
	for _, l := range held {
		if err := l.Err(); err != nil {
			t.Fatalf("%s lost: %v", l.Name(), err)
		}
	}
}

// A pass that renewed many holds the watchdog had already given up on
// (their deadlines passed first) sorts them in time linear in the holds:
// each is dropped unless a watched hold has its key and field. A lookup in
// the watched set per hold took minutes for 100,000 of each; here 100,000
// given-up holds and 100,000 watched ones must take well under 20s, even
// under -race on a loaded machine (some 0.1-1s).
func TestWatchdogApplyAfterManyLostHoldsIsLinear(t *testing.T) {
	spec := &renewSpec{what: "lock", script: scriptLockRenew, drop: scriptLockDrop}
	w := newWatchdog(nil, topology{}, nil, 30*time.Second, 100, time.Second)
	const n = 100_000
	p := &pass{sent: time.Now()}
	for i := range n {
		watched := newHold(fmt.Sprint("w:", i), "f", "c", 0)
		watched.renewal = spec
		w.holds[watched] = struct{}{}
		gone := newHold(fmt.Sprint("g:", i), "f", "c", 0)
		gone.renewal, gone.expired = spec, true
		cmd := redis.NewCmd(context.Background())
		cmd.SetVal([]any{int64(1)})
		p.calls = append(p.calls, &call{cmd: cmd})
		p.owners = append(p.owners, []*hold{gone})
	}
	// One given-up hold whose key and field a watched hold has again.
	again := newHold("w:0", "f", "c", 0)
	again.renewal, again.expired = spec, true
	cmd := redis.NewCmd(context.Background())
	cmd.SetVal([]any{int64(1)})
	p.calls = append(p.calls, &call{cmd: cmd})
	p.owners = append(p.owners, []*hold{again})
	start := time.Now()
	w.apply(p)
	if took := time.Since(start); took > 20*time.Second {
		t.Fatalf("apply took %v for %d given-up holds beside %d watched ones", took, n, n)
	}
	if len(w.stale) != n {
		t.Fatalf("%d holds to drop, want %d (all given-up holds but the one re-acquired)", len(w.stale), n)
	}
	for _, h := range w.stale {
		if h == again {
			t.Fatal("a hold re-acquired under its field is to be dropped")
		}
	}
}
