package redisson

import (
	"errors"
	"testing"
	"time"
)

// A MultiLock re-enters through its hold's context (each lock's count is
// 2, two Unlocks), and its Done/Err follow its locks' holds.
func TestMultiLockReentryThroughHoldContextAndDone(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	a, b := c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb))
	m := NewMultiLock(a, b)
	if err := m.Err(); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Err before acquiring = %v; want ErrNotHeld", err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mctx, cancel := m.Context(ctx)
	defer cancel()
	if ok, err := m.TryLock(mctx, 0, 0); !ok || err != nil {
		t.Fatalf("re-entry with the hold's context = %v, %v", ok, err)
	}
	for _, l := range []*Lock{a, b} {
		if n, _ := l.HoldCount(ctx); n != 2 {
			t.Fatalf("%s HoldCount = %d; want 2", l.Name(), n)
		}
	}
	if err := m.Err(); err != nil {
		t.Fatalf("Err while held = %v", err)
	}
	unlockMulti := func() {
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	unlockMulti()
	select {
	case <-m.Done():
		t.Fatal("Done closed after one of two Unlocks")
	default:
	}
	unlockMulti()
	<-m.Done()
	if err := m.Err(); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Err after Unlock = %v; want ErrNotHeld", err)
	}

	// A lock's lease runs out: the MultiLock's hold ends with ErrLeaseLost.
	if ok, err := m.TryLock(ctx, 0, 300*time.Millisecond); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	select {
	case <-m.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done still open 5s after a 300ms lease")
	}
	if err := m.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err after the lease ran out = %v; want ErrLeaseLost", err)
	}
	if ok, err := m.TryLock(ctx, 5*time.Second, 0); !ok || err != nil {
		t.Fatalf("TryLock after a lost hold = %v, %v; want true, nil", ok, err)
	}
	if err := m.Do(ctx, 100*time.Millisecond, 0, nil); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("Do while held by another acquisition = %v; want ErrNotAcquired", err)
	}
	unlockMulti()
}

// A RedLock's hold lasts while a quorum of its locks' holds do.
func TestRedLockDoneWhenQuorumLost(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	parts := []*Lock{c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb)), c.GetLock(uniqueName(t, rdb))}
	r := NewRedLock(parts...)
	if err := r.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetLock(parts[0].Name()).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the forced lock's hold ends", func() bool { return parts[0].Err() != nil })
	if err := r.Err(); err != nil {
		t.Fatalf("RedLock Err with 2 of 3 held = %v; want nil", err)
	}
	if _, err := c.GetLock(parts[1].Name()).ForceUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("RedLock Done still open with 1 of 3 held")
	}
	if err := r.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err = %v; want ErrLeaseLost", err)
	}
	if err := r.Unlock(ctx); err == nil {
		t.Fatal("Unlock of a RedLock whose quorum was lost = nil; want an error")
	}
}
