package redisson

// Interop tests: the library's Lock against foreignLock (foreign_test.go), a
// stand-in for Java Redisson's RLock / RFencedLock written from the
// wire-format reference. Both sides must exclude each other, wake each
// other, and share the fencing counter.

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// wakeBound bounds how long a waiter may take to acquire after the unlock
// that should wake it: generous, yet far below the 30 s lease a waiter
// would otherwise sleep for.
const wakeBound = 5 * time.Second

// async runs f in a goroutine and delivers its result.
func async(f func() error) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- f() }()
	return ch
}

// await fails the test unless ch delivers nil within d.
func await(t *testing.T, ch <-chan error, d time.Duration, what string) {
	t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(d):
		t.Fatalf("%s: not done after %v", what, d)
	}
}

// stillBlocked fails the test if ch has delivered.
func stillBlocked(t *testing.T, ch <-chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned while the lock was held (err %v)", what, err)
	default:
	}
}

// waitSubscribers waits until channel has at least n subscribers in Redis.
func waitSubscribers(t *testing.T, rdb *redis.Client, channel string, n int64) {
	t.Helper()
	eventually(t, wakeBound, "subscribers of "+channel, func() bool {
		return rdb.PubSubNumSub(context.Background(), channel).Val()[channel] >= n
	})
	// Give the waiter time to get from subscribing to waiting; the outcome
	// checked does not depend on it.
	time.Sleep(100 * time.Millisecond)
}

func mustForeignTryLock(t *testing.T, ctx context.Context, f *foreignLock, leaseMs int64) {
	t.Helper()
	ttl, err := f.tryLock(ctx, leaseMs)
	if err != nil || ttl != nil {
		t.Fatalf("foreign tryLock = %v, %v; want acquired", ptrVal(ttl), err)
	}
}

func mustForeignUnlock(t *testing.T, ctx context.Context, f *foreignLock, want int64) {
	t.Helper()
	res, err := f.unlock(ctx)
	if err != nil || res == nil || *res != want {
		t.Fatalf("foreign unlock = %v, %v; want %d", ptrVal(res), err, want)
	}
}

func ptrVal(p *int64) any {
	if p == nil {
		return "nil"
	}
	return *p
}

// TestForeignLockSelf checks the foreign stand-in itself against the
// reference: reentrant hash field, unlock results, not-held error, latch
// clean-up, and the token script.
func TestForeignLockSelf(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	name := uniqueName(t, rdb)
	fc := newForeignClient(rdb)
	a, b := fc.getLock(name), fc.getLock(name)
	if _, err := uuid.Parse(fc.uuid); err != nil {
		t.Fatalf("uuid %q: %v", fc.uuid, err)
	}

	mustForeignTryLock(t, ctx, a, 30000)
	mustForeignTryLock(t, ctx, a, 30000)
	if n, _ := a.holdCount(ctx); n != 2 {
		t.Fatalf("holdCount = %d, want 2", n)
	}
	if got := rdb.HGetAll(ctx, name).Val(); len(got) != 1 || got[a.me()] != "2" {
		t.Fatalf("hash = %v, want {%s: 2}", got, a.me())
	}
	if ttl, err := b.tryLock(ctx, 30000); err != nil || ttl == nil || *ttl <= 0 {
		t.Fatalf("other thread tryLock = %v, %v; want a positive ttl", ptrVal(ttl), err)
	}
	if _, err := b.unlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("other thread unlock: %v, want errForeignNotHeld", err)
	}
	mustForeignUnlock(t, ctx, a, 0)
	mustForeignUnlock(t, ctx, a, 1)
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Fatalf("lock key still exists after the last unlock")
	}
	if latches := rdb.Keys(ctx, foreignPrefix("redisson_unlock_latch", name)+":*").Val(); len(latches) != 0 {
		t.Fatalf("latches left behind: %v", latches)
	}

	p1, t1, err := a.tryLockAndGetToken(ctx, 30000)
	if err != nil || p1 != -1 || t1 < 1 {
		t.Fatalf("tryLockAndGetToken = %d, %d, %v", p1, t1, err)
	}
	p2, t2, err := b.tryLockAndGetToken(ctx, 30000)
	if err != nil || p2 <= 0 || t2 != -1 {
		t.Fatalf("tryLockAndGetToken by another thread = %d, %d, %v; want {pttl, -1}", p2, t2, err)
	}
	mustForeignUnlock(t, ctx, a, 1)
}

// Go holds: the foreign client is excluded and sees the Go owner field
// "<client id>:<n>"; after Go's Unlock the key is gone and the foreign client
// acquires.
func TestInteropGoHoldsForeignExcluded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
	}{
		{"watchdog", 0},
		{"lease", 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := sharedRedis(t)
			ctx := testCtx(t, 20*time.Second)
			c := newClient(t, rdb, nil)
			name := uniqueName(t, rdb)
			l := c.GetLock(name)
			mustTryLock(t, ctx, l, 0, tc.lease)

			f := newForeignClient(rdb).getLock(name)
			ttl, err := f.tryLock(ctx, 30000)
			if err != nil || ttl == nil || *ttl <= 0 {
				t.Fatalf("foreign tryLock = %v, %v; want the holder's ttl", ptrVal(ttl), err)
			}
			want := tc.lease
			if want == 0 {
				want = c.Options().WatchdogTimeout
			}
			if time.Duration(*ttl)*time.Millisecond > want {
				t.Fatalf("foreign tryLock ttl = %dms, more than the lease %v", *ttl, want)
			}
			if locked, err := f.isLocked(ctx); err != nil || !locked {
				t.Fatalf("foreign isLocked = %v, %v; want true", locked, err)
			}
			if held, err := f.isHeldByThread(ctx); err != nil || held {
				t.Fatalf("foreign isHeldByThread = %v, %v; want false", held, err)
			}

			fields := rdb.HGetAll(ctx, name).Val()
			if len(fields) != 1 {
				t.Fatalf("HGETALL %s = %v; want one field", name, fields)
			}
			ownerRE := regexp.MustCompile("^" + regexp.QuoteMeta(c.ID()) + `:([0-9]+)$`)
			for field, count := range fields {
				m := ownerRE.FindStringSubmatch(field)
				if m == nil {
					t.Fatalf("owner field %q is not %q + \":\" + <n>", field, c.ID())
				}
				if _, err := strconv.ParseInt(m[1], 10, 64); err != nil {
					t.Fatalf("owner field %q: thread part %q is not a long: %v", field, m[1], err)
				}
				if field != l.Owner() || count != "1" {
					t.Fatalf("HGETALL = {%s: %s}; want {%s: 1}", field, count, l.Owner())
				}
			}
			if _, err := uuid.Parse(c.ID()); err != nil {
				t.Fatalf("client id %q is not a UUID: %v", c.ID(), err)
			}

			if err := l.Unlock(ctx); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
			if n := rdb.Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("lock key still exists after Unlock")
			}
			mustForeignTryLock(t, ctx, f, 30000)
			if held, _ := f.isHeldByThread(ctx); !held {
				t.Fatalf("foreign isHeldByThread = false after acquiring")
			}
			mustForeignUnlock(t, ctx, f, 1)
		})
	}
}

// Foreign holds: Go is excluded, sees the lock as locked but not held, and
// its Unlock fails with ErrNotHeld without touching the foreign hold.
func TestInteropForeignHoldsGoExcluded(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	f := newForeignClient(rdb).getLock(name)
	mustForeignTryLock(t, ctx, f, 30000)
	before := keyState(t, rdb, name)

	l := c.GetLock(name)
	if ok, err := l.TryLock(ctx, 0, 0); err != nil || ok {
		t.Fatalf("Go TryLock(0, 0) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := l.TryLock(ctx, 0, 10*time.Second); err != nil || ok {
		t.Fatalf("Go TryLock(0, 10s) = %v, %v; want false, nil", ok, err)
	}
	if ok, err := l.TryLock(ctx, 300*time.Millisecond, 0); err != nil || ok {
		t.Fatalf("Go TryLock(300ms, 0) = %v, %v; want false, nil", ok, err)
	}
	if locked, err := l.IsLocked(ctx); err != nil || !locked {
		t.Fatalf("Go IsLocked = %v, %v; want true", locked, err)
	}
	if held, err := l.IsHeld(ctx); err != nil || held {
		t.Fatalf("Go IsHeld = %v, %v; want false", held, err)
	}
	if n, err := l.HoldCount(ctx); err != nil || n != 0 {
		t.Fatalf("Go HoldCount = %v, %v; want 0", n, err)
	}
	if d, err := l.RemainingLease(ctx); err != nil || d <= 0 || d > 30*time.Second {
		t.Fatalf("Go RemainingLease = %v, %v; want the foreign lease", d, err)
	}
	if err := l.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Go Unlock of a foreign hold: %v; want ErrNotHeld", err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Go calls changed the foreign hold:\nbefore %s\nafter  %s", before, after)
	}
	if got := rdb.HGetAll(ctx, name).Val(); len(got) != 1 || got[f.me()] != "1" {
		t.Fatalf("hash = %v; want {%s: 1}", got, f.me())
	}
	mustForeignUnlock(t, ctx, f, 1)
}

// A Go waiter in Lock is woken by the foreign unlock's publish, long before
// the foreign lease (30 s) would have run out.
func TestInteropForeignUnlockWakesGoWaiter(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 60*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	f := newForeignClient(rdb).getLock(name)
	mustForeignTryLock(t, ctx, f, 30000)

	l := c.GetLock(name)
	done := async(func() error { return l.Lock(ctx) })
	waitSubscribers(t, rdb, f.channel(), 1)
	stillBlocked(t, done, "Go Lock")

	mustForeignUnlock(t, ctx, f, 1)
	await(t, done, wakeBound, "Go Lock after the foreign unlock")
	if got := rdb.HGetAll(ctx, name).Val(); len(got) != 1 || got[l.Owner()] != "1" {
		t.Fatalf("hash = %v; want {%s: 1}", got, l.Owner())
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// A foreign waiter in lock is woken by Go's Unlock message, long before the
// Go lease (30 s watchdog lease) would have run out.
func TestInteropGoUnlockWakesForeignWaiter(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
	}{
		{"watchdog", 0},
		{"lease", 30 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := sharedRedis(t)
			ctx := testCtx(t, 60*time.Second)
			c := newClient(t, rdb, nil)
			name := uniqueName(t, rdb)
			l := c.GetLock(name)
			mustTryLock(t, ctx, l, 0, tc.lease)

			f := newForeignClient(rdb).getLock(name)
			done := async(func() error { return f.lock(ctx, 30000) })
			waitSubscribers(t, rdb, f.channel(), 1)
			stillBlocked(t, done, "foreign lock")

			if err := l.Unlock(ctx); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
			await(t, done, wakeBound, "foreign lock after the Go Unlock")
			if held, _ := f.isHeldByThread(ctx); !held {
				t.Fatalf("foreign waiter does not hold the lock")
			}
			mustForeignUnlock(t, ctx, f, 1)
		})
	}
}

// Reentrancy across: a foreign thread that locked twice and unlocked once
// still excludes Go, and a Go owner that locked twice and unlocked once still
// excludes the foreign client.
func TestInteropReentrancyAcross(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	f := newForeignClient(rdb).getLock(name)
	l := c.GetLock(name)

	mustForeignTryLock(t, ctx, f, 30000)
	mustForeignTryLock(t, ctx, f, 30000)
	mustForeignUnlock(t, ctx, f, 0)
	if n, _ := f.holdCount(ctx); n != 1 {
		t.Fatalf("foreign holdCount = %d, want 1", n)
	}
	if ok, err := l.TryLock(ctx, 0, 0); err != nil || ok {
		t.Fatalf("Go TryLock while the foreign thread holds once = %v, %v; want false", ok, err)
	}
	mustForeignUnlock(t, ctx, f, 1)
	mustTryLock(t, ctx, l, 0, 0)

	mustTryLock(t, holdCtx(t, ctx, l), l, 0, 0) // re-entry
	if got := rdb.HGet(ctx, name, l.Owner()).Val(); got != "2" {
		t.Fatalf("Go hold count in the hash = %q, want 2", got)
	}
	if n, _ := f.holdCount(ctx); n != 0 {
		t.Fatalf("foreign holdCount = %d, want 0", n)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if ttl, err := f.tryLock(ctx, 30000); err != nil || ttl == nil {
		t.Fatalf("foreign tryLock while Go holds once = %v, %v; want excluded", ptrVal(ttl), err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	mustForeignTryLock(t, ctx, f, 30000)
	mustForeignUnlock(t, ctx, f, 1)
}

// Fencing: Go acquisitions and RFencedLock acquisitions draw from one
// counter at redisson_lock_token:{L}, strictly increasing, reentrant
// acquisitions included.
func TestInteropFencingTokenShared(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	ca, cb := newClient(t, rdb, nil), newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	tokenKey := "redisson_lock_token:{" + name + "}"
	f := newForeignClient(rdb).getLock(name)

	var last int64
	next := func(who string, tok int64) {
		t.Helper()
		if tok <= last {
			t.Fatalf("%s: token %d after %d; want strictly increasing", who, tok, last)
		}
		if got, _ := rdb.Get(ctx, tokenKey).Int64(); got != tok {
			t.Fatalf("%s: token %d but %s = %d", who, tok, tokenKey, got)
		}
		last = tok
	}
	unchanged := func(who string) {
		t.Helper()
		if got, _ := rdb.Get(ctx, tokenKey).Int64(); got != last {
			t.Fatalf("%s: a failed acquisition moved %s from %d to %d", who, tokenKey, last, got)
		}
	}

	for round := 0; round < 3; round++ {
		la := ca.GetLock(name)
		mustTryLock(t, ctx, la, 0, 0)
		next("Go A", la.Token())
		mustTryLock(t, holdCtx(t, ctx, la), la, 0, 10*time.Second) // reentrant
		next("Go A reentrant", la.Token())
		if pttl, tok, err := f.tryLockAndGetToken(ctx, 30000); err != nil || pttl <= 0 || tok != -1 {
			t.Fatalf("foreign tryLockAndGetToken while Go holds = %d, %d, %v; want {pttl, -1}", pttl, tok, err)
		}
		unchanged("foreign excluded")
		for i := 0; i < 2; i++ {
			if err := la.Unlock(ctx); err != nil {
				t.Fatalf("Unlock: %v", err)
			}
		}
		if la.Token() != last {
			t.Fatalf("Go Token after Unlock = %d; want its latest acquisition's %d", la.Token(), last)
		}

		for i := 0; i < 2; i++ { // acquisition then reentrant acquisition
			pttl, tok, err := f.tryLockAndGetToken(ctx, 30000)
			if err != nil || pttl != -1 {
				t.Fatalf("foreign tryLockAndGetToken = %d, %d, %v; want {-1, token}", pttl, tok, err)
			}
			next("foreign", tok)
		}
		lb := cb.GetLock(name)
		if ok, err := lb.TryLock(ctx, 0, 0); err != nil || ok {
			t.Fatalf("Go B TryLock while foreign holds = %v, %v; want false", ok, err)
		}
		unchanged("Go B excluded")
		if lb.Token() != 0 {
			t.Fatalf("Go B Token before any acquisition = %d, want 0", lb.Token())
		}
		mustForeignUnlock(t, ctx, f, 0)
		mustForeignUnlock(t, ctx, f, 1)

		mustTryLock(t, ctx, lb, 0, 5*time.Second)
		next("Go B", lb.Token())
		if err := lb.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
	}
}

// Go's ForceUnlock deletes a foreign hold and wakes a foreign waiter; the
// former holder learns it no longer holds the lock.
func TestInteropGoForceUnlockReleasesForeign(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 60*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	holder := newForeignClient(rdb).getLock(name)
	waiter := newForeignClient(rdb).getLock(name)
	mustForeignTryLock(t, ctx, holder, 30000)

	done := async(func() error { return waiter.lock(ctx, 30000) })
	waitSubscribers(t, rdb, waiter.channel(), 1)
	stillBlocked(t, done, "foreign waiter")

	if ok, err := c.GetLock(name).ForceUnlock(ctx); err != nil || !ok {
		t.Fatalf("Go ForceUnlock = %v, %v; want true", ok, err)
	}
	await(t, done, wakeBound, "foreign waiter after Go ForceUnlock")
	if held, _ := waiter.isHeldByThread(ctx); !held {
		t.Fatalf("foreign waiter does not hold the lock")
	}
	if held, _ := holder.isHeldByThread(ctx); held {
		t.Fatalf("the force-unlocked foreign holder still holds the lock")
	}
	if _, err := holder.unlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("unlock by the force-unlocked foreign holder: %v; want errForeignNotHeld", err)
	}
	mustForeignUnlock(t, ctx, waiter, 1)
	if ok, err := c.GetLock(name).ForceUnlock(ctx); err != nil || ok {
		t.Fatalf("Go ForceUnlock of a free lock = %v, %v; want false", ok, err)
	}
}

// The foreign forceUnlock deletes a Go hold; the Go handle learns at the
// watchdog's next renewal pass that its lease is lost, and its watchdog does
// not touch the new foreign hold.
func TestInteropForeignForceUnlockLosesGoHold(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 600 * time.Millisecond})
	name := uniqueName(t, rdb)
	l := c.GetLock(name)
	mustTryLock(t, ctx, l, 0, 0)
	select {
	case <-l.Done():
		t.Fatalf("Done closed while held")
	default:
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err while held = %v", err)
	}

	f := newForeignClient(rdb).getLock(name)
	if ok, err := f.forceUnlock(ctx); err != nil || !ok {
		t.Fatalf("foreign forceUnlock = %v, %v; want true", ok, err)
	}
	mustForeignTryLock(t, ctx, f, 30000)

	select {
	case <-l.Done():
	case <-time.After(5 * time.Second):
		t.Fatalf("Done not closed 5s after the Go hold was force-unlocked")
	}
	if err := l.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err = %v; want ErrLeaseLost", err)
	}
	// Let a few more watchdog passes (every 200ms) go by: none may renew or
	// shorten the foreign lease.
	time.Sleep(700 * time.Millisecond)
	if got := rdb.HGetAll(ctx, name).Val(); len(got) != 1 || got[f.me()] != "1" {
		t.Fatalf("hash = %v; want {%s: 1}", got, f.me())
	}
	if pttl := rdb.PTTL(ctx, name).Val(); pttl < 20*time.Second {
		t.Fatalf("foreign lease %v; want about 30s (the Go watchdog touched it?)", pttl)
	}
	before := keyState(t, rdb, name)
	err := l.Unlock(ctx)
	if !errors.Is(err, ErrLeaseLost) || !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Unlock after the loss = %v; want ErrLeaseLost and ErrNotHeld", err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Go Unlock changed the foreign hold:\nbefore %s\nafter  %s", before, after)
	}
	mustForeignUnlock(t, ctx, f, 1)
}

// Mixed mutual exclusion: Go owners on two clients and foreign threads on two
// foreign clients increment a counter with a non-atomic GET then SET under
// the lock; no update may be lost.
func TestInteropMutualExclusionMixed(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 120*time.Second)
	clients := []*Client{newClient(t, rdb, nil), newClient(t, rdb, nil)}
	foreign := []*foreignClient{newForeignClient(rdb), newForeignClient(rdb)}
	name := uniqueName(t, rdb)
	counter := name + ":counter"
	t.Cleanup(func() { rdb.Del(context.Background(), counter) })

	const perClient, iterations = 3, 20
	var inside atomic.Int32
	critical := func(who string) error {
		if n := inside.Add(1); n != 1 {
			t.Errorf("%s: %d goroutines inside the critical section", who, n)
		}
		defer inside.Add(-1)
		v, err := rdb.Get(ctx, counter).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		time.Sleep(time.Millisecond) // widen the race window
		return rdb.Set(ctx, counter, v+1, 0).Err()
	}

	var wg sync.WaitGroup
	for ci, c := range clients {
		for g := 0; g < perClient; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := c.GetLock(name)
				for i := 0; i < iterations; i++ {
					if err := l.Lock(ctx); err != nil {
						t.Errorf("Go client %d: Lock: %v", ci, err)
						return
					}
					err := critical("Go")
					if uerr := l.Unlock(ctx); uerr != nil {
						t.Errorf("Go client %d: Unlock: %v", ci, uerr)
						return
					}
					if err != nil {
						t.Errorf("Go client %d: %v", ci, err)
						return
					}
				}
			}()
		}
	}
	for fi, fc := range foreign {
		for g := 0; g < perClient; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := fc.getLock(name)
				for i := 0; i < iterations; i++ {
					if err := f.lock(ctx, 30000); err != nil {
						t.Errorf("foreign client %d: lock: %v", fi, err)
						return
					}
					err := critical("foreign")
					if _, uerr := f.unlock(ctx); uerr != nil {
						t.Errorf("foreign client %d: unlock: %v", fi, uerr)
						return
					}
					if err != nil {
						t.Errorf("foreign client %d: %v", fi, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	want := int64((len(clients) + len(foreign)) * perClient * iterations)
	if got, err := rdb.Get(ctx, counter).Int64(); err != nil || got != want {
		t.Fatalf("counter = %d, %v; want %d", got, err, want)
	}
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Fatalf("lock key left behind")
	}
}

// A name that already contains braces keeps them as its hash tag: both sides
// use redisson_lock__channel:<name> (no added braces) and wake each other.
func TestInteropBracedName(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 60*time.Second)
	c := newClient(t, rdb, nil)
	name := "{" + uniqueName(t, rdb) + "}:42" // like {order}:42
	t.Cleanup(func() { deleteLockKeys(rdb, name) })
	channel := "redisson_lock__channel:" + name
	f := newForeignClient(rdb).getLock(name)
	l := c.GetLock(name)
	if f.channel() != channel || l.channel != channel {
		t.Fatalf("channels: foreign %q, Go %q; want %q", f.channel(), l.channel, channel)
	}

	// Foreign holds, Go waits on the channel and is woken.
	mustForeignTryLock(t, ctx, f, 30000)
	done := async(func() error { return l.Lock(ctx) })
	waitSubscribers(t, rdb, channel, 1)
	stillBlocked(t, done, "Go Lock")
	mustForeignUnlock(t, ctx, f, 1)
	await(t, done, wakeBound, "Go Lock after the foreign unlock")
	if tok := rdb.Get(ctx, "redisson_lock_token:"+name).Val(); tok != strconv.FormatInt(l.Token(), 10) {
		t.Fatalf("redisson_lock_token:%s = %q; want Go's token %d", name, tok, l.Token())
	}

	// Go holds, foreign waits on the channel and is woken.
	done = async(func() error { return f.lock(ctx, 30000) })
	waitSubscribers(t, rdb, channel, 1)
	stillBlocked(t, done, "foreign lock")
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	await(t, done, wakeBound, "foreign lock after the Go Unlock")
	if held, _ := f.isHeldByThread(ctx); !held {
		t.Fatalf("foreign waiter does not hold the lock")
	}
	mustForeignUnlock(t, ctx, f, 1)
}
