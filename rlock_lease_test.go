package redisson

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// lostReplyFaults is a go-redis hook that, once armed, makes the next acquire
// script run in Redis but lose its reply (the caller gets a network error),
// and the next release script fail before being sent (Redis unreachable).
type lostReplyFaults struct{ loseAcquire, failRelease atomic.Bool }

func (f *lostReplyFaults) arm() { f.loseAcquire.Store(true); f.failRelease.Store(true) }

func (f *lostReplyFaults) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *lostReplyFaults) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (f *lostReplyFaults) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) < 2 || !strings.EqualFold(fmt.Sprint(args[0]), "evalsha") {
			return next(ctx, cmd)
		}
		sha := fmt.Sprint(args[1])
		if sha == scriptLockRelease.SHA() && f.failRelease.CompareAndSwap(true, false) {
			err := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused (injected)")}
			cmd.SetErr(err)
			return err
		}
		if err := next(ctx, cmd); err != nil {
			return err // NOSCRIPT and script errors: not a lost reply
		}
		if sha == scriptLockAcquire.SHA() && f.loseAcquire.CompareAndSwap(true, false) {
			err := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout (injected lost reply)")}
			cmd.SetErr(err)
			return err
		}
		return nil
	}
}

// lostReplyClient returns a go-redis client of srv without retries, with
// a lostReplyFaults hook.
func lostReplyClient(t *testing.T, srv *redistest.Server) (*redis.Client, *lostReplyFaults) {
	f := &lostReplyFaults{}
	rdb := srv.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	rdb.AddHook(f)
	return rdb, f
}

// tryStealFor lets other try to acquire every 100ms for d. It reports
// whether other acquired, failing the test if it did while holder still
// reported its hold (two owners).
func tryStealFor(t *testing.T, ctx context.Context, holder, other *Lock, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if ok, _ := other.TryLock(ctx, 0, 0); ok {
			if err := holder.Err(); err == nil {
				t.Errorf("two owners: another client acquired while the holder's Err() is nil")
			} else {
				t.Logf("another client acquired; holder Err() = %v", err)
			}
			return true
		}
	}
	return false
}

// Re-entering a watchdog hold with a short explicit lease must not cut
// the watchdog lease short.
func TestLockReentryShortLeaseUnderWatchdogKeepsWatchdogLease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	l := newClient(t, rdb, nil).GetLock(name)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, holdCtx(t, ctx, l), l, 0, 300*time.Millisecond)
	t.Logf("PTTL after re-entry: %v", rdb.PTTL(ctx, name).Val())
	if tryStealFor(t, ctx, l, newClient(t, srv.Client(t), nil).GetLock(name), 2*time.Second) {
		t.Fatal("watchdog hold re-entered with a 300ms lease was lost within 2s")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err() = %v while held", err)
	}
	unlockN(t, ctx, l, 2)
}

// An explicit-lease hold re-entered with lease 0 is renewed
// by the watchdog from then on.
func TestLockLeaseReentryWithZeroLeaseBecomesWatched(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	l := newClient(t, rdb, &Options{WatchdogTimeout: time.Second}).GetLock(name)
	mustTryLock(t, ctx, l, 0, 500*time.Millisecond)
	mustTryLock(t, holdCtx(t, ctx, l), l, 0, 0)
	// 3 s: six times the original lease, three watchdog timeouts.
	if tryStealFor(t, ctx, l, newClient(t, srv.Client(t), nil).GetLock(name), 3*time.Second) {
		t.Fatal("hold re-entered with lease 0 was not kept alive by the watchdog")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err() = %v while held", err)
	}
	if n, err := l.HoldCount(ctx); n != 2 || err != nil {
		t.Fatalf("HoldCount = %d, %v; want 2", n, err)
	}
	unlockN(t, ctx, l, 2)
}

// An acquire whose reply was lost and whose compensation failed leaves an
// orphan field; a retry on the same handle that reports a hold holds it
// with the lease it asked for, not with the orphan's short one.
func TestLockRetryAfterLostReplyHoldsRequestedLease(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	rdb, faults := lostReplyClient(t, srv)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, direct)
	l := newClient(t, rdb, &Options{CleanupTimeout: 200 * time.Millisecond}).GetLock(name)
	faults.arm() // the reply is lost, the compensation cannot reach Redis
	ok, err := l.TryLock(ctx, 0, 500*time.Millisecond)
	t.Logf("TryLock with lost reply = %v, %v; Redis: %v, PTTL %v", ok, err, direct.HGetAll(ctx, name).Val(), direct.PTTL(ctx, name).Val())
	if ok && err == nil {
		t.Fatal("TryLock reported success for an acquire whose reply was lost")
	}
	ok, err = l.TryLock(ctx, 0, time.Minute)
	if err != nil {
		t.Fatalf("retry TryLock: %v", err)
	}
	if pttl := direct.PTTL(ctx, name).Val(); ok && pttl < 30*time.Second {
		t.Errorf("retry TryLock(lease 60s) holds, but PTTL in Redis is %v", pttl)
	}
	if tryStealFor(t, ctx, l, newClient(t, direct, nil).GetLock(name), 1500*time.Millisecond) && ok {
		t.Fatal("hold taken with a 60s lease was lost within 1.5s")
	}
	if ok {
		unlockN(t, ctx, l, 1)
	}
}

// With Redis one hold above the handle (a re-entry whose reply was lost
// and whose compensation failed), the handle's final Unlock must free the
// lock, or else the handle must report the loss when the key expires.
func TestLockHoldCountMismatchFinalUnlockFreesOrReportsLoss(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	rdb, faults := lostReplyClient(t, srv)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, direct)
	channel := prefixName("redisson_lock__channel", name)
	l := newClient(t, rdb, &Options{WatchdogTimeout: time.Second, CleanupTimeout: 200 * time.Millisecond}).GetLock(name)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	field := l.Owner()
	faults.arm()
	ok, err := l.TryLock(ctx, 0, 0)
	t.Logf("re-entry with lost reply = %v, %v; Redis count %q", ok, err, direct.HGet(ctx, name, field).Val())

	ps := direct.Subscribe(ctx, channel)
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	err = l.Unlock(ctx)
	t.Logf("Unlock = %v; Redis: %v", err, direct.HGetAll(ctx, name).Val())
	if !direct.HExists(ctx, name, field).Val() {
		if direct.Exists(ctx, name).Val() != 0 {
			t.Errorf("owner's field gone but the lock is not free: %v", direct.HGetAll(ctx, name).Val())
		}
		published := false
		for !published {
			msg, err := ps.ReceiveTimeout(ctx, 3*time.Second)
			if err != nil {
				break
			}
			m, ok := msg.(*redis.Message)
			published = ok && m.Payload == "0"
		}
		if !published {
			t.Error("lock freed by Unlock without the unlock message")
		}
	}
	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Errorf("Done() still open 5s after the final Unlock (watchdog lease 1s); Redis: %v", direct.HGetAll(ctx, name).Val())
	}
	tryStealFor(t, ctx, l, newClient(t, direct, nil).GetLock(name), 3*time.Second)
}

// IsHeld and HoldCount may run while another goroutine's acquire gives
// the handle a new identity after a lost hold (run with -race).
func TestLockStateCallsRaceFreeWithIdentityChange(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 30*time.Second)
	l := newClient(t, rdb, nil).GetLock(uniqueName(t, rdb))
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			l.IsHeld(ctx)
			l.HoldCount(ctx)
		}
	}()
	defer func() { close(stop); <-done }()
	owners := map[string]bool{}
	for i := 0; i < 5; i++ {
		mustTryLock(t, ctx, l, 0, 30*time.Millisecond)
		owners[l.Owner()] = true
		time.Sleep(100 * time.Millisecond) // the lease runs out: the hold is lost
	}
	if len(owners) != 5 {
		t.Fatalf("%d owner fields over 5 holds each lost before the next; want 5", len(owners))
	}
}
