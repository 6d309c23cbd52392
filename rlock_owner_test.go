package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// locker is what every exclusive handle shares.
type locker interface {
	Lock(ctx context.Context) error
	TryLock(ctx context.Context, wait, lease time.Duration) (bool, error)
	Unlock(ctx context.Context) error
}

// exclusiveHandles returns one handle of each exclusive kind, each on
// names of its own.
func exclusiveHandles(t *testing.T) map[string]locker {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	return map[string]locker{
		"Lock":      c.GetLock(uniqueName(t, rdb)),
		"FairLock":  c.GetFairLock(uniqueName(t, rdb)),
		"WriteLock": c.GetReadWriteLock(uniqueName(t, rdb)).WriteLock(),
		"MultiLock": NewMultiLock(c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb))),
		"RedLock":   NewRedLock(c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb))),
	}
}

// 16 goroutines sharing one handle never are inside the section together.
func TestLockSharedHandleExcludesGoroutines(t *testing.T) {
	for kind, l := range exclusiveHandles(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t, 2*time.Minute)
			const goroutines, each = 16, 20
			var inside, most, total atomic.Int32
			var wg sync.WaitGroup
			for g := 0; g < goroutines; g++ {
				wg.Go(func() {
					for i := 0; i < each; i++ {
						if err := l.Lock(ctx); err != nil {
							t.Errorf("Lock: %v", err)
							return
						}
						n := inside.Add(1)
						if n > most.Load() {
							most.Store(n)
						}
						time.Sleep(100 * time.Microsecond)
						inside.Add(-1)
						total.Add(1)
						if err := l.Unlock(ctx); err != nil {
							t.Errorf("Unlock: %v", err)
							return
						}
					}
				})
			}
			wg.Wait()
			if most.Load() != 1 || total.Load() != goroutines*each {
				t.Fatalf("most goroutines inside at once = %d over %d acquisitions; want 1 over %d", most.Load(), total.Load(), goroutines*each)
			}
		})
	}
}

// A nested acquisition without the hold's context waits like any other
// owner: TryLock runs out with false, nil and Lock ends with its context.
func TestLockNestedWithoutHoldContextWaits(t *testing.T) {
	for kind, l := range exclusiveHandles(t) {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := l.TryLock(ctx, 100*time.Millisecond, 0); ok || err != nil {
				t.Fatalf("nested TryLock(100ms) = %v, %v; want false, nil", ok, err)
			}
			short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			if err := l.Lock(short); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("nested Lock = %v; want DeadlineExceeded", err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := l.TryLock(ctx, 0, 0); !ok || err != nil {
				t.Fatalf("TryLock after Unlock = %v, %v; want true, nil", ok, err)
			}
			if err := l.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A nested acquisition with the hold's context re-enters: the hold count
// in Redis is 2 under the same field, and it takes two Unlocks.
func TestLockReentryThroughHoldContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	for kind, l := range map[string]*Lock{
		"Lock":      c.GetLock(uniqueName(t, rdb)),
		"FairLock":  c.GetFairLock(uniqueName(t, rdb)),
		"WriteLock": c.GetReadWriteLock(uniqueName(t, rdb)).WriteLock(),
	} {
		t.Run(kind, func(t *testing.T) {
			ctx := testCtx(t, time.Minute)
			if err := l.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			hctx, cancel := l.Context(ctx)
			defer cancel()
			if ok, err := l.TryLock(hctx, 0, 0); !ok || err != nil {
				t.Fatalf("TryLock with the hold's context = %v, %v; want true, nil", ok, err)
			}
			if err := l.Lock(hctx); err != nil {
				t.Fatalf("Lock with the hold's context: %v", err)
			}
			if n, err := l.HoldCount(ctx); n != 3 || err != nil {
				t.Fatalf("HoldCount = %d, %v; want 3", n, err)
			}
			field := l.ident().field
			if got := rdb.HGet(ctx, l.Name(), field).Val(); got != "3" {
				t.Fatalf("Redis count of %s = %q; want 3", field, got)
			}
			unlockN(t, ctx, l, 2)
			if held, _ := l.IsHeld(ctx); !held {
				t.Fatal("not held after two of three Unlocks")
			}
			if err := l.Unlock(hctx); err != nil {
				t.Fatal(err)
			}
			if n := rdb.Exists(ctx, l.Name()).Val(); n != 0 {
				t.Fatal("lock still exists after the third Unlock")
			}
			if err := l.Lock(hctx); !errors.Is(err, ErrNotHeld) {
				t.Fatalf("Lock with an ended hold's context = %v; want ErrNotHeld", err)
			}
		})
	}
}

// Every acquisition that is not a re-entry writes an owner number of its
// own.
func TestLockEachAcquisitionTakesNewOwner(t *testing.T) {
	rdb := sharedRedis(t)
	l := newClient(t, rdb, nil).GetLock(uniqueName(t, rdb))
	ctx := testCtx(t, time.Minute)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		mustTryLock(t, ctx, l, 0, 0)
		owner := l.Owner()
		if rdb.HGet(ctx, l.Name(), owner).Val() != "1" {
			t.Fatalf("hold %d: field %s not in Redis: %v", i, owner, rdb.HGetAll(ctx, l.Name()).Val())
		}
		seen[owner] = true
		unlockN(t, ctx, l, 1)
	}
	if len(seen) != 3 {
		t.Fatalf("%d owners over 3 acquisitions; want 3", len(seen))
	}
}

// A hold lost without Unlock frees the handle for a waiting goroutine, and
// an Unlock with the lost hold's context does not touch the next hold.
func TestLockLostHoldFreesHandle(t *testing.T) {
	rdb := sharedRedis(t)
	l := newClient(t, rdb, nil).GetLock(uniqueName(t, rdb))
	ctx := testCtx(t, time.Minute)
	mustTryLock(t, ctx, l, 0, 200*time.Millisecond)
	lost, cancel := l.Context(ctx)
	defer cancel()
	if ok, err := l.TryLock(ctx, 10*time.Second, 0); !ok || err != nil {
		t.Fatalf("TryLock after the hold's lease ran out = %v, %v; want true, nil", ok, err)
	}
	if err := l.Unlock(lost); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Unlock with the lost hold's context = %v; want ErrLeaseLost", err)
	}
	if held, _ := l.IsHeld(ctx); !held {
		t.Fatal("the next hold was released by the lost hold's Unlock")
	}
	unlockN(t, ctx, l, 1)
}

// Do runs fn holding the lock, re-entry works with fn's context, the lock
// is released after fn, fn's error comes back, and a wait that runs out
// returns ErrNotAcquired without running fn.
func TestLockDoHoldsReentersAndReleases(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	l := c.GetLock(uniqueName(t, rdb))
	ctx := testCtx(t, time.Minute)
	boom := errors.New("boom")
	err := l.Do(ctx, time.Second, 0, func(ctx context.Context) error {
		if err := l.Lock(ctx); err != nil {
			return err
		}
		if n, _ := l.HoldCount(ctx); n != 2 {
			t.Errorf("HoldCount inside Do after re-entry = %d; want 2", n)
		}
		if err := l.Unlock(ctx); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Do = %v; want fn's error", err)
	}
	if n := rdb.Exists(ctx, l.Name()).Val(); n != 0 {
		t.Fatal("lock held after Do returned")
	}
	other := c.GetLock(l.Name())
	mustTryLock(t, ctx, other, 0, 0)
	ran := false
	err = l.Do(ctx, 100*time.Millisecond, 0, func(context.Context) error { ran = true; return nil })
	if !errors.Is(err, ErrNotAcquired) || ran {
		t.Fatalf("Do on a held lock = %v (fn ran: %v); want ErrNotAcquired", err, ran)
	}
	unlockN(t, ctx, other, 1)
}

// Extend sets the lease from now, moves the handle's deadline with it, and
// reports ErrNotHeld / ErrLeaseLost when it is too late.
func TestLockExtendMovesLeaseAndDeadline(t *testing.T) {
	rdb := sharedRedis(t)
	l := newClient(t, rdb, nil).GetLock(uniqueName(t, rdb))
	ctx := testCtx(t, time.Minute)
	if err := l.Extend(ctx, time.Second); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Extend before acquiring = %v; want ErrNotHeld", err)
	}
	mustTryLock(t, ctx, l, 0, 300*time.Millisecond)
	if err := l.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if pttl := rdb.PTTL(ctx, l.Name()).Val(); pttl < 5*time.Second {
		t.Fatalf("PTTL after Extend(10s) = %v", pttl)
	}
	select {
	case <-l.Done():
		t.Fatalf("hold ended after Extend: %v", l.Err())
	case <-time.After(700 * time.Millisecond): // past the first lease
	}
	// Shorten it: Done follows.
	if err := l.Extend(ctx, 200*time.Millisecond); err != nil {
		t.Fatalf("Extend(200ms): %v", err)
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done still open 5s after Extend(200ms)")
	}
	if err := l.Extend(ctx, time.Second); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Extend after the lease ran out = %v; want ErrLeaseLost", err)
	}
	// A watchdog hold given a lease leaves the watchdog.
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
		if !errors.Is(l.Err(), ErrLeaseLost) {
			t.Fatalf("Err = %v; want ErrLeaseLost", l.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("watchdog hold extended to 200ms still held after 5s")
	}
}

// LockLease waits without limit and holds with the lease it was given.
func TestLockLeaseWaitsThenHoldsWithLease(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	ctx := testCtx(t, time.Minute)
	other := c.GetLock(name)
	mustTryLock(t, ctx, other, 0, 0)
	go func() { time.Sleep(200 * time.Millisecond); other.Unlock(context.Background()) }()
	l := c.GetLock(name)
	if err := l.LockLease(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if pttl := rdb.PTTL(ctx, name).Val(); pttl <= 0 || pttl > 2*time.Second {
		t.Fatalf("PTTL = %v; want at most the 2s lease", pttl)
	}
	select {
	case <-l.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("hold with a 2s lease still open after 10s")
	}
	if err := l.LockLease(ctx, -time.Second); !errors.Is(err, ErrNegativeDuration) {
		t.Fatalf("LockLease(-1s) = %v; want ErrNegativeDuration", err)
	}
}

// holdCtx returns the context of l's current hold (through Context), for
// re-entries; it is cancelled when the test ends.
func holdCtx(t testing.TB, ctx context.Context, l *Lock) context.Context {
	hctx, cancel := l.Context(ctx)
	t.Cleanup(cancel)
	return hctx
}
