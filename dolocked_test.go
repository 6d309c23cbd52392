package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Lock.Do and MultiLock.Do release the hold through the one doLocked: when
// the caller's context is cancelled while fn runs, the release still reaches
// Redis, so the lock is free when Do returns, for both.
func TestDoReleasesAfterCallerCancelledInsideFn(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	base := uniqueName(t, rdb)
	l := c.GetLock(base + "-lock")
	m := NewMultiLock(c.GetLock(base+"-a"), c.GetLock(base+"-b"))
	dos := map[string]func(context.Context, func(context.Context) error) error{
		"Lock": func(ctx context.Context, fn func(context.Context) error) error {
			return l.Do(ctx, time.Second, 0, fn)
		},
		"MultiLock": func(ctx context.Context, fn func(context.Context) error) error {
			return m.Do(ctx, time.Second, 0, fn)
		},
	}
	keys := map[string][]string{"Lock": {base + "-lock"}, "MultiLock": {base + "-a", base + "-b"}}
	for name, do := range dos {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t, time.Minute))
			err := do(ctx, func(fctx context.Context) error {
				cancel()
				<-fctx.Done()
				return fctx.Err()
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Do = %v; want fn's context.Canceled", err)
			}
			check := testCtx(t, time.Minute)
			for _, k := range keys[name] {
				if n := rdb.Exists(check, k).Val(); n != 0 {
					t.Fatalf("%s still held after Do returned with its caller's context cancelled", k)
				}
			}
		})
	}
}

// A Do whose wait runs out says so once, in the documented shape.
func TestLockDoNotAcquiredMessage(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	ctx := testCtx(t, time.Minute)
	holder := c.GetLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	defer unlockN(t, ctx, holder, 1)
	err := c.GetLock(name).Do(ctx, 50*time.Millisecond, 0, func(context.Context) error { return nil })
	want := "redisson: lock " + strconv.Quote(name) + ": lock not acquired within the wait of 50ms"
	if !errors.Is(err, ErrNotAcquired) || err.Error() != want {
		t.Fatalf("Do on a held lock = %q; want %q", err, want)
	}
	if strings.Count(err.Error(), "within") != 1 {
		t.Fatalf("Do's error %q repeats itself", err)
	}
}

// An Unlock after the lease ran out says so in the one documented shape,
// naming the lock's kind and its quoted name.
func TestLeaseLostErrorShape(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	ctx := testCtx(t, time.Minute)
	for _, l := range []*Lock{c.GetLock(name + "-plain"), c.GetFairLock(name + "-fair")} {
		mustTryLock(t, ctx, l, 0, 100*time.Millisecond)
		select {
		case <-l.Done():
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: hold not ended 20s after its 100ms lease", l.Name())
		}
		err := l.Unlock(ctx)
		want := "redisson: " + l.kind.what + " " + strconv.Quote(l.Name()) + ": lease lost, lock not held by this owner"
		if !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrNotHeld) || err.Error() != want {
			t.Errorf("Unlock after the lease ran out = %q; want %q matching ErrLeaseLost and ErrNotHeld", err, want)
		}
	}
}
