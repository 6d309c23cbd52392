package redisson

import (
	"context"
	"errors"
	"fmt"
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
