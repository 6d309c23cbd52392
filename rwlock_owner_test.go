package redisson

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// Goroutines sharing one read handle hold it at once, and each Unlock
// releases one of the handle's read holds.
func TestReadLockSharedHandleReadsAtOnce(t *testing.T) {
	rdb := sharedRedis(t)
	rw := newClient(t, rdb, nil).GetReadWriteLock(uniqueName(t, rdb))
	r := rw.ReadLock()
	ctx := testCtx(t, time.Minute)
	const readers = 8
	var holding sync.WaitGroup
	holding.Add(readers)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < readers; i++ {
		wg.Go(func() {
			if ok, err := r.TryLock(ctx, 10*time.Second, 0); !ok || err != nil {
				t.Errorf("TryLock = %v, %v", ok, err)
			}
			holding.Done()
			<-release
		})
	}
	holding.Wait() // every reader holds at once
	if n, err := r.HoldCount(ctx); n != readers || err != nil {
		t.Fatalf("HoldCount with %d readers = %d, %v", readers, n, err)
	}
	close(release)
	wg.Wait()
	for left := readers - 1; left >= 0; left-- {
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if n, _ := r.HoldCount(ctx); n != left {
			t.Fatalf("HoldCount after an Unlock = %d; want %d", n, left)
		}
	}
	if locked, _ := r.IsLocked(ctx); locked {
		t.Fatal("read lock still locked after every Unlock")
	}
}

// The writer takes the read lock only with the write hold's context, and
// downgrades by releasing the write lock while it reads.
func TestWriteLockDowngradeThroughHoldContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rw := c.GetReadWriteLock(name)
	w, r := rw.WriteLock(), rw.ReadLock()
	ctx := testCtx(t, time.Minute)
	if err := w.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := r.TryLock(ctx, 100*time.Millisecond, 0); ok || err != nil {
		t.Fatalf("read without the write hold's context = %v, %v; want false, nil", ok, err)
	}
	wctx, cancel := w.Context(ctx)
	defer cancel()
	if ok, err := r.TryLock(wctx, 0, 0); !ok || err != nil {
		t.Fatalf("read with the write hold's context = %v, %v; want true, nil", ok, err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if mode := rdb.HGet(ctx, name, "mode").Val(); mode != "read" {
		t.Fatalf("mode after the downgrade = %q; want read", mode)
	}
	other := c.GetReadWriteLock(name)
	if ok, _ := other.WriteLock().TryLock(ctx, 0, 0); ok {
		t.Fatal("another writer got in while the downgraded reader reads")
	}
	mustTryLock(t, ctx, other.ReadLock(), 0, 0)
	unlockN(t, ctx, other.ReadLock(), 1)
	if err := r.Unlock(context.Background()); err != nil {
		t.Fatalf("Unlock of the downgraded read hold: %v", err)
	}
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Fatalf("lock left: %v", rdb.HGetAll(ctx, name).Val())
	}
}

// A read hold lost without Unlock (its lease ran out) and then a newer read
// hold through the same handle: an Unlock given the lost hold's context
// reports ErrLeaseLost and leaves the newer hold alone, whose own Unlock
// then succeeds (Redisson's #2269 hazard inside one shared handle).
func TestReadLockLostHoldUnlockLeavesNewerHold(t *testing.T) {
	rdb := sharedRedis(t)
	r := newClient(t, rdb, nil).GetReadWriteLock(uniqueName(t, rdb)).ReadLock()
	ctx := testCtx(t, time.Minute)
	mustTryLock(t, ctx, r, 0, 200*time.Millisecond)
	lost, cancel := r.Context(ctx)
	defer cancel()
	<-lost.Done() // the lease ran out, here and then in Redis
	eventually(t, 5*time.Second, "the lost read hold gone from Redis", func() bool {
		locked, _ := r.IsLocked(ctx)
		return !locked
	})
	mustTryLock(t, ctx, r, 0, 0)
	newer, cancel2 := r.Context(ctx)
	defer cancel2()
	if err := r.Unlock(lost); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Unlock with the lost read hold's context = %v; want ErrLeaseLost", err)
	}
	if held, _ := r.IsHeld(ctx); !held {
		t.Fatal("the newer read hold was released by the lost hold's Unlock")
	}
	if err := r.Unlock(newer); err != nil {
		t.Fatalf("the newer read hold's Unlock = %v; want nil", err)
	}
	if locked, _ := r.IsLocked(ctx); locked {
		t.Fatal("read lock still locked after the newer hold's Unlock")
	}
}
