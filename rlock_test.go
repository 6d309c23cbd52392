package redisson

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

func TestLockReentrancyAndHoldCount(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, rdb))

	mustTryLock(t, ctx, l, 0, 0)
	hctx := holdCtx(t, ctx, l) // re-entry is through the hold's context
	for want := 1; want <= 3; want++ {
		if want > 1 {
			mustTryLock(t, hctx, l, 0, 0)
		}
		if n, err := l.HoldCount(ctx); err != nil || n != want {
			t.Fatalf("HoldCount = %d, %v; want %d", n, err, want)
		}
	}
	other := c.GetLock(l.Name())
	if ok, err := other.TryLock(ctx, 0, 0); err != nil || ok {
		t.Fatalf("other owner TryLock = %v, %v; want false", ok, err)
	}
	if held, _ := other.IsHeld(ctx); held {
		t.Fatal("other owner IsHeld = true")
	}
	for want := 2; want >= 0; want-- {
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
		if n, err := l.HoldCount(ctx); err != nil || n != want {
			t.Fatalf("HoldCount = %d, %v; want %d", n, err, want)
		}
		locked, _ := l.IsLocked(ctx)
		if locked != (want > 0) {
			t.Fatalf("IsLocked = %v with %d holds", locked, want)
		}
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("extra Unlock = %v; want ErrNotHeld", err)
	}
	mustTryLock(t, ctx, other, 0, 0)
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestLockUnlockByOtherOwnerFails(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, ctx, l, 0, 0)
	before := keyState(t, rdb, l.Name())
	if err := c.GetLock(l.Name()).Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock by other owner = %v; want ErrNotHeld", err)
	}
	if after := keyState(t, rdb, l.Name()); after != before {
		t.Fatalf("Redis changed:\n before %s\n after  %s", before, after)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Several clients, many goroutines: a non-atomic read-modify-write of a Redis
// counter under the lock ends with the exact total.
func TestLockMutualExclusion(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 2*time.Minute)
	name := uniqueName(t, rdb)
	counter := name + ":counter"
	t.Cleanup(func() { rdb.Del(context.Background(), counter) })
	const clients, goroutines, rounds = 3, 8, 15
	var wg sync.WaitGroup
	var inside sync.Mutex // TryLock must never succeed while another holds
	for i := 0; i < clients; i++ {
		c := newClient(t, sharedRedis(t), nil)
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < rounds; r++ {
					l := c.GetLock(name)
					if err := l.Lock(ctx); err != nil {
						t.Error(err)
						return
					}
					if !inside.TryLock() {
						t.Error("two owners inside the lock at once")
					}
					v, _ := rdb.Get(ctx, counter).Int()
					rdb.Set(ctx, counter, v+1, 0)
					inside.Unlock()
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if got, _ := rdb.Get(ctx, counter).Int(); got != clients*goroutines*rounds {
		t.Fatalf("counter = %d; want %d", got, clients*goroutines*rounds)
	}
}

// After the lease runs out a second owner acquires; the first owner's Unlock
// then fails and leaves the second's hold alone.
func TestLockLeaseExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	first, second := c.GetLock(name), c.GetLock(name)
	mustTryLock(t, ctx, first, 0, 300*time.Millisecond)
	if d, err := first.RemainingLease(ctx); err != nil || d <= 0 || d > 300*time.Millisecond {
		t.Fatalf("RemainingLease = %v, %v; want (0, 300ms]", d, err)
	}
	mustTryLock(t, ctx, second, 10*time.Second, 0)
	select {
	case <-first.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("first owner's Done not closed after its lease ran out")
	}
	if err := first.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("first.Err() = %v; want ErrLeaseLost", err)
	}
	before := keyState(t, rdb, name)
	err := first.Unlock(ctx)
	if !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("first.Unlock = %v; want ErrNotHeld and ErrLeaseLost", err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("stale Unlock changed Redis:\n before %s\n after  %s", before, after)
	}
	if held, _ := second.IsHeld(ctx); !held {
		t.Fatal("second owner lost its hold")
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The watchdog keeps a lock far past its timeout, and stops after Unlock.
func TestLockWatchdogRenews(t *testing.T) {
	rdb := sharedRedis(t)
	const timeout = 300 * time.Millisecond
	c := newClient(t, rdb, &Options{WatchdogTimeout: timeout})
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, ctx, l, 0, 0)
	time.Sleep(6 * timeout)
	if held, err := l.IsHeld(ctx); err != nil || !held {
		t.Fatalf("after 6 watchdog timeouts IsHeld = %v, %v; want true", held, err)
	}
	if l.Err() != nil {
		t.Fatalf("Err() = %v while held", l.Err())
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _, _ := c.watchdog.stats(); n != 0 {
		t.Fatalf("watchdog still keeps %d leases after Unlock", n)
	}
	// A lease renewed after Unlock would re-create nothing (the key is gone),
	// so check the watchdog does not touch a new holder's explicit lease.
	other := newClient(t, rdb, nil).GetLock(l.Name())
	mustTryLock(t, ctx, other, 0, 400*time.Millisecond)
	time.Sleep(3 * timeout)
	if d, _ := other.RemainingLease(ctx); d > 400*time.Millisecond {
		t.Fatalf("explicit lease extended to %v", d)
	}
}

// A waiter is woken by the unlock message, long before the holder's lease.
func TestLockWaiterWokenByUnlock(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	holder := c.GetLock(name)
	mustTryLock(t, ctx, holder, 0, 60*time.Second)
	got := make(chan error, 1)
	go func() {
		w := newClient(t, sharedRedis(t), nil).GetLock(name)
		ok, err := w.TryLock(ctx, 50*time.Second, 0)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		if err == nil {
			err = w.Unlock(ctx)
		}
		got <- err
	}()
	time.Sleep(200 * time.Millisecond) // let it subscribe and wait
	start := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("waiter not woken within 20s of unlock (holder lease 60s)")
	}
	t.Logf("hand-off took %v", time.Since(start))
}

// A cancelled or timed-out wait leaves no hold, no field and no
// subscription behind.
func TestLockCancelledWaitLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	holder := c.GetLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	before := keyState(t, rdb, name)

	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
			defer cancel()
			err := c.GetLock(name).Lock(cctx)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Lock with expiring ctx = %v; want DeadlineExceeded", err)
			}
		}()
		go func() {
			defer wg.Done()
			ok, err := c.GetLock(name).TryLock(ctx, 100*time.Millisecond, 0)
			if ok || err != nil {
				t.Errorf("TryLock = %v, %v; want false, nil", ok, err)
			}
		}()
	}
	wg.Wait()
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("cancelled waiters changed Redis:\n before %s\n after  %s", before, after)
	}
	// Nothing is left once the subscription's linger (2s by default) ends.
	channel := prefixName("redisson_lock__channel", name)
	eventually(t, 10*time.Second, "PUBSUB NUMSUB back to 0", func() bool {
		return rdb.PubSubNumSub(ctx, channel).Val()[channel] == 0
	})
	eventually(t, 5*time.Second, "client tracks no channel", func() bool { return c.pubsub.stats().channels == 0 })
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A context cancelled while the acquire is in flight leaves no hold.
func TestLockCancelDuringAcquire(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	for i := 0; i < 50; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		l := c.GetLock(name)
		go func() { time.Sleep(time.Duration(i%5) * 50 * time.Microsecond); cancel() }()
		err := l.Lock(ctx)
		if err == nil {
			if err := l.Unlock(context.Background()); err != nil {
				t.Fatal(err)
			}
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock = %v; want nil or Canceled", err)
		}
		cancel()
	}
	if n, _ := rdb.Exists(context.Background(), name).Result(); n != 0 {
		t.Fatalf("lock key left behind: %v", rdb.HGetAll(context.Background(), name).Val())
	}
}

func TestLockUnlockWithCancelledContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, testCtx(t, 10*time.Second), l, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock(cancelled ctx) = %v; want nil", err)
	}
	if n, _ := rdb.Exists(context.Background(), l.Name()).Result(); n != 0 {
		t.Fatal("lock still held after Unlock with a cancelled context")
	}
}

func TestLockForceUnlock(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	if ok, err := l.ForceUnlock(ctx); ok || err != nil {
		t.Fatalf("ForceUnlock on free lock = %v, %v; want false, nil", ok, err)
	}
	mustTryLock(t, ctx, l, 0, 0)
	if ok, err := c.GetLock(l.Name()).ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("ForceUnlock = %v, %v; want true, nil", ok, err)
	}
	if locked, _ := l.IsLocked(ctx); locked {
		t.Fatal("still locked after ForceUnlock")
	}
}

func TestLockFencingTokens(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	name := uniqueName(t, rdb)
	if tok := c.GetLock(name).Token(); tok != 0 {
		t.Fatalf("Token before acquiring = %d", tok)
	}
	var last int64
	for i := 0; i < 5; i++ {
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, 0)
		mustTryLock(t, holdCtx(t, ctx, l), l, 0, 0) // re-entry also gets a new token
		if tok := l.Token(); tok <= last+1 {
			t.Fatalf("token %d after %d; want strictly increasing per acquisition", tok, last)
		} else {
			last = tok
		}
		l.Unlock(ctx)
		l.Unlock(ctx)
	}
}

// The handle's Context is cancelled with ErrLeaseLost when the lock is
// deleted behind its back.
func TestLockContextOnLoss(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 300 * time.Millisecond})
	ctx := testCtx(t, 10*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, ctx, l, 0, 0)
	lctx, cancel := l.Context(ctx)
	defer cancel()
	rdb.Del(ctx, l.Name())
	select {
	case <-lctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("context not cancelled after the lock was deleted")
	}
	if cause := context.Cause(lctx); !errors.Is(cause, ErrLeaseLost) {
		t.Fatalf("cause = %v; want ErrLeaseLost", cause)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Unlock after loss = %v; want ErrLeaseLost", err)
	}
}

func TestLockBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	strName := uniqueName(t, rdb)
	rdb.Set(ctx, strName, "not a lock", 0)
	freeName := uniqueName(t, rdb)

	cases := []struct {
		name string
		lock string
		call func(l *Lock) error
		want error
	}{
		{"empty name Lock", "", func(l *Lock) error { return l.Lock(ctx) }, ErrEmptyName},
		{"empty name TryLock", "", func(l *Lock) error { _, err := l.TryLock(ctx, 0, 0); return err }, ErrEmptyName},
		{"empty name Unlock", "", func(l *Lock) error { return l.Unlock(ctx) }, ErrEmptyName},
		{"empty name IsLocked", "", func(l *Lock) error { _, err := l.IsLocked(ctx); return err }, ErrEmptyName},
		{"negative wait", freeName, func(l *Lock) error { _, err := l.TryLock(ctx, -time.Second, 0); return err }, ErrNegativeDuration},
		{"negative lease", freeName, func(l *Lock) error { _, err := l.TryLock(ctx, 0, -time.Second); return err }, ErrNegativeDuration},
		{"unlock not held", freeName, func(l *Lock) error { return l.Unlock(ctx) }, ErrNotHeld},
		{"string key TryLock", strName, func(l *Lock) error { _, err := l.TryLock(ctx, 0, 0); return err }, ErrWrongType},
		{"string key TryLock wait", strName, func(l *Lock) error { _, err := l.TryLock(ctx, time.Second, 0); return err }, ErrWrongType},
		{"string key Lock", strName, func(l *Lock) error { return l.Lock(ctx) }, ErrWrongType},
		{"string key IsLocked", strName, func(l *Lock) error { _, err := l.IsLocked(ctx); return err }, ErrWrongType},
		{"string key HoldCount", strName, func(l *Lock) error { _, err := l.HoldCount(ctx); return err }, ErrWrongType},
		{"string key RemainingLease", strName, func(l *Lock) error { _, err := l.RemainingLease(ctx); return err }, ErrWrongType},
		{"string key ForceUnlock", strName, func(l *Lock) error { _, err := l.ForceUnlock(ctx); return err }, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				return // ForceUnlock deletes whatever is there, like Redisson: not bad input
			}
			before := keyState(t, rdb, tc.lock)
			err := tc.call(c.GetLock(tc.lock))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v; want %v", err, tc.want)
			}
			if after := keyState(t, rdb, tc.lock); after != before {
				t.Fatalf("Redis changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

func TestClientClosed(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, &Options{WatchdogTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, 10*time.Second)
	name := uniqueName(t, rdb)
	held := c.GetLock(name)
	mustTryLock(t, ctx, held, 0, 0)
	waiterErr := make(chan error, 1)
	go func() { waiterErr <- c.GetLock(name).Lock(ctx) }()
	time.Sleep(100 * time.Millisecond)
	c.Close()
	c.Close() // twice is harmless
	if err := <-waiterErr; !errors.Is(err, ErrClientClosed) {
		t.Fatalf("waiter got %v; want ErrClientClosed", err)
	}
	select {
	case <-held.Done():
	default:
		t.Fatal("holder's Done not closed by Close")
	}
	if err := held.Err(); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("holder Err = %v; want ErrClientClosed", err)
	}
	if _, err := c.GetLock(name).TryLock(ctx, 0, 0); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("TryLock after Close = %v; want ErrClientClosed", err)
	}
	if err := held.Unlock(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Unlock after Close = %v; want ErrClientClosed", err)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	rdb := sharedRedis(t)
	for _, o := range []Options{
		{WatchdogTimeout: -time.Second},
		{WatchdogTimeout: time.Millisecond},
		{WatchdogBatchSize: -1},
		{WatchdogBatchSize: 10001},
		{CleanupTimeout: -1},
		{RetryWindow: -time.Second},
		{PubSubHealthCheck: -time.Second},
	} {
		if _, err := New(rdb, &o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("New(%+v) = %v; want ErrInvalidOption", o, err)
		}
	}
	if _, err := New(nil, nil); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("New(nil) = %v; want ErrInvalidOption", err)
	}
	c := newClient(t, rdb, nil)
	if got := c.Options().WatchdogTimeout; got != 30*time.Second {
		t.Errorf("default WatchdogTimeout = %v; want 30s", got)
	}
}

// A full release leaves a latch key for a resent call; the client deletes it
// once the release has returned, so latches do not pile up for the retry
// window even with a new handle per lock.
func TestLockLatchesDoNotPileUp(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	for i := 0; i < 300; i++ {
		l := c.GetLock(name)
		mustTryLock(t, ctx, l, 0, 0)
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	latches := func() int {
		return len(rdb.Keys(ctx, "redisson_unlock_latch:*").Val())
	}
	eventually(t, 5*time.Second, "latch keys deleted", func() bool { return latches() == 0 })
	if n := rdb.DBSize(ctx).Val(); n != 1 {
		t.Fatalf("%d keys left; want only the fencing counter: %v", n, rdb.Keys(ctx, "*").Val())
	}
}

// A token key of the wrong type fails the acquire before it writes
// anything.
func TestLockTokenKeyWrongTypeWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, prefixName("redisson_lock_token", name), "x", "y")
	before := keyState(t, rdb, name)
	ok, err := newClient(t, rdb, nil).GetLock(name).TryLock(ctx, 0, 0)
	if ok || !errors.Is(err, ErrWrongType) {
		t.Errorf("TryLock = %v, %v; want false, ErrWrongType", ok, err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Redis changed by a failed acquire:\nbefore %s\nafter  %s", before, after)
	}
}
