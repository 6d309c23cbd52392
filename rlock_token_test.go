package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// Tests of the fencing counter's lifetime: its key expires when the name is
// idle, and tokens still grow when the counter is created again.

// acquireToken takes l once (explicit lease, so no watchdog) and returns
// its token, released again.
func acquireToken(t *testing.T, ctx context.Context, l *Lock) int64 {
	t.Helper()
	mustTryLock(t, ctx, l, 5*time.Second, 10*time.Second)
	tok := l.Token()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	return tok
}

// The counter key carries TokenIdleTTL (24h by default), renewed by every
// acquisition; TokenNeverExpires leaves it without expiry; both at once are
// an invalid option.
func TestLockTokenKeyExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	for _, tc := range []struct {
		what     string
		opts     *Options
		min, max time.Duration // PTTL range; max 0: no expiry
	}{
		{"default", nil, 23 * time.Hour, 24 * time.Hour},
		{"TokenIdleTTL 1m", &Options{TokenIdleTTL: time.Minute}, 50 * time.Second, time.Minute},
		{"TokenNeverExpires", &Options{TokenNeverExpires: true}, 0, 0},
	} {
		c := newClient(t, rdb, tc.opts)
		for _, get := range []func(string) *Lock{c.GetLock, c.GetFairLock, func(n string) *Lock { return c.GetReadWriteLock(n).WriteLock() }} {
			name := uniqueName(t, rdb)
			tokenKey := prefixName("redisson_lock_token", name)
			if tc.max == 0 {
				// A key with an expiry (another client's) is made permanent.
				rdb.Set(ctx, tokenKey, 5, time.Hour)
			}
			l := get(name)
			acquireToken(t, ctx, l)
			d := rdb.PTTL(ctx, tokenKey).Val()
			switch {
			case tc.max == 0 && d != -1:
				t.Errorf("%s, %s: PTTL %s = %v; want no expiry", tc.what, l.kind.what, tokenKey, d)
			case tc.max > 0 && (d < tc.min || d > tc.max):
				t.Errorf("%s, %s: PTTL %s = %v; want in [%v, %v]", tc.what, l.kind.what, tokenKey, d, tc.min, tc.max)
			}
		}
	}
	_, err := New(rdb, &Options{TokenNeverExpires: true, TokenIdleTTL: time.Hour})
	if !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("New with TokenNeverExpires and TokenIdleTTL = %v; want ErrInvalidOption", err)
	}
}

// A counter ahead of the server clock (its value above the clock in
// microseconds) is advanced by one, and its idle lifetime renewed, by every
// lock kind that takes tokens; a string that is no integer fails the
// acquire, leaving the counter and its expiry as they were.
func TestLockTokenCounterAheadOfClock(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, &Options{TokenIdleTTL: time.Minute})
	const ahead = int64(8e15) // above the clock in microseconds, below 2^53
	for _, get := range []func(string) *Lock{c.GetLock, c.GetFairLock, func(n string) *Lock { return c.GetReadWriteLock(n).WriteLock() }} {
		name := uniqueName(t, rdb)
		tokenKey := prefixName("redisson_lock_token", name)
		rdb.Set(ctx, tokenKey, ahead, time.Hour)
		l := get(name)
		if tok := acquireToken(t, ctx, l); tok != ahead+1 {
			t.Errorf("%s: token %d; want the counter + 1 = %d", l.kind.what, tok, ahead+1)
		}
		if v, _ := rdb.Get(ctx, tokenKey).Int64(); v != ahead+1 {
			t.Errorf("%s: counter %d; want %d", l.kind.what, v, ahead+1)
		}
		if d := rdb.PTTL(ctx, tokenKey).Val(); d <= 0 || d > time.Minute {
			t.Errorf("%s: counter PTTL %v; want the idle lifetime (1m) renewed", l.kind.what, d)
		}

		name = uniqueName(t, rdb)
		tokenKey = prefixName("redisson_lock_token", name)
		rdb.Set(ctx, tokenKey, "12abc", time.Hour)
		l = get(name)
		before := keyState(t, rdb, name)
		if ok, err := l.TryLock(ctx, 0, 0); ok || err == nil {
			t.Errorf("%s: TryLock with a counter that is no integer = %v, %v; want an error", l.kind.what, ok, err)
		}
		if after := keyState(t, rdb, name); after != before {
			t.Errorf("%s: Redis changed by a failed acquire:\nbefore %s\nafter  %s", l.kind.what, before, after)
		}
		if d := rdb.PTTL(ctx, tokenKey).Val(); d <= time.Minute {
			t.Errorf("%s: counter PTTL %v after a failed acquire; want its hour left", l.kind.what, d)
		}
	}
}

// Tokens keep growing after the counter's key expired: it is created again
// from the server clock in microseconds, above every earlier token.
func TestLockTokenIncreasesAfterKeyExpired(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, &Options{TokenIdleTTL: 50 * time.Millisecond})
	name := uniqueName(t, rdb)
	tokenKey := prefixName("redisson_lock_token", name)
	last := int64(0)
	for i, get := range []func(string) *Lock{c.GetLock, c.GetFairLock, func(n string) *Lock { return c.GetReadWriteLock(n).WriteLock() }} {
		for j := 0; j < 2; j++ {
			tok := acquireToken(t, ctx, get(name))
			if tok <= last {
				t.Fatalf("round %d.%d: token %d after %d; want strictly increasing", i, j, tok, last)
			}
			last = tok
			eventually(t, 5*time.Second, "the counter key expired", func() bool {
				return rdb.Exists(ctx, tokenKey).Val() == 0
			})
		}
	}
}

// Tokens keep growing after a restart without persistence and after a
// FLUSHALL, on a server the test started.
func TestLockTokenIncreasesAfterRestartAndFlushAll(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := "token-restart"
	tok := acquireToken(t, ctx, c.GetLock(name))
	if tok < 1e15 {
		t.Fatalf("first token %d; want the server clock in microseconds", tok)
	}
	last := tok
	for _, step := range []struct {
		what string
		lose func()
	}{
		{"restart without persistence", func() { srv.Restart(t) }},
		{"FLUSHALL", func() { rdb.FlushAll(ctx) }},
	} {
		step.lose()
		if n := rdb.Exists(ctx, prefixName("redisson_lock_token", name)).Val(); n != 0 {
			t.Fatalf("after %s: counter key still exists", step.what)
		}
		var tok int64
		for try := 0; ; try++ {
			// The first calls after a restart may fail on the old
			// connections; go-redis redials.
			l := c.GetLock(name)
			ok, err := l.TryLock(ctx, 5*time.Second, 10*time.Second)
			if err == nil && ok {
				tok = l.Token()
				_ = l.Unlock(ctx)
				break
			}
			if try == 20 {
				t.Fatalf("after %s: TryLock = %v, %v", step.what, ok, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		if tok <= last {
			t.Fatalf("after %s: token %d; want above the earlier %d", step.what, tok, last)
		}
		last = tok
	}
	// The foreign RFencedLock's INCR continues from ours.
	n, err := rdb.Incr(ctx, prefixName("redisson_lock_token", name)).Result()
	if err != nil || n != last+1 {
		t.Fatalf("INCR after Go's token %d = %d, %v; want %d", last, n, err, last+1)
	}
	if tok := acquireToken(t, ctx, c.GetLock(name)); tok <= n {
		t.Fatalf("Go token %d after Java's %d; want above", tok, n)
	}
}

// Every key the lock family creates (lock hashes, fencing counters, release
// latches, a fair lock's queue, deadlines and liveness, read holds' timeout
// keys) has an expiry, after lock, unlock, lease loss and cancellation, for
// Lock, FairLock and both sides of ReadWriteLock. A server of the test's
// own, so that SCAN sees only these keys.
func TestLockFamilyKeysAllExpire(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second, FairWaiterTimeout: 300 * time.Millisecond})
	seen := map[string]bool{}
	check := func(step string) {
		t.Helper()
		var cursor uint64
		for {
			keys, next, err := rdb.Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatalf("%s: SCAN: %v", step, err)
			}
			for _, k := range keys {
				d, err := rdb.PTTL(ctx, k).Result()
				if err != nil {
					t.Fatalf("%s: PTTL %s: %v", step, k, err)
				}
				if d == -1 {
					t.Errorf("%s: key %q has no expiry", step, k)
				}
				seen[keyKind(k)] = true
			}
			if cursor = next; cursor == 0 {
				return
			}
		}
	}
	expired := func(l *Lock) {
		t.Helper()
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: hold did not end with its lease", l.kind.what)
		}
		eventually(t, 5*time.Second, "the lock key expired", func() bool { return rdb.Exists(ctx, l.name).Val() == 0 })
	}
	cancelled := func(l *Lock) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		if err := l.Lock(wctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: Lock of a held lock = %v; want DeadlineExceeded", l.kind.what, err)
		}
	}
	unlock := func(l *Lock) {
		t.Helper()
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("%s: Unlock: %v", l.kind.what, err)
		}
	}

	for _, get := range []func(string) *Lock{c.GetLock, c.GetFairLock} {
		name := "k:" + get("x").kind.what
		h := get(name)
		if err := h.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		mustTryLock(t, holdCtx(t, ctx, h), h, 0, 20*time.Second) // re-entry
		check(name + " locked")
		waiter := get(name)
		w := async(func() error {
			ok, err := waiter.TryLock(ctx, 20*time.Second, 0)
			if err == nil && !ok {
				err = errors.New("wait ran out")
			}
			return err
		})
		if get("x").kind.queue != nil {
			eventually(t, 5*time.Second, "the waiter queued", func() bool { return rdb.LLen(ctx, fairQueueKey(name)).Val() == 1 })
		}
		cancelled(get(name))
		check(name + " waiter cancelled")
		unlock(h)
		check(name + " partly unlocked")
		unlock(h)
		await(t, w, 10*time.Second, name+" waiter")
		check(name + " unlocked, waiter holds")
		unlock(waiter)
		check(name + " unlocked")
		mustTryLock(t, ctx, h, 0, 200*time.Millisecond)
		expired(h)
		check(name + " lease lost")
	}

	name := "k:rw"
	rw1, rw2, rw3 := c.GetReadWriteLock(name), c.GetReadWriteLock(name), c.GetReadWriteLock(name)
	if err := rw1.ReadLock().Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, rw2.ReadLock(), 0, 300*time.Millisecond)
	check("read locked")
	cancelled(rw3.WriteLock())
	check("writer cancelled")
	unlock(rw1.ReadLock())
	check("read unlocked")
	expired(rw2.ReadLock())
	check("read lease lost")
	wl := rw3.WriteLock()
	if err := wl.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, holdCtx(t, ctx, wl), rw3.ReadLock(), 0, 0) // a writer may read, through its hold
	cancelled(rw1.ReadLock())
	check("write locked, reader cancelled")
	unlock(wl) // downgrade
	check("downgraded")
	unlock(rw3.ReadLock())
	check("unlocked")
	mustTryLock(t, ctx, wl, 0, 200*time.Millisecond)
	expired(wl)
	check("write lease lost")

	for _, kind := range []string{"lock", "token", "latch", "queue", "timeout", "alive", "rwlock_timeout"} {
		if !seen[kind] {
			t.Errorf("no %s key seen: the test does not cover it", kind)
		}
	}
}

// keyKind names the kind of a lock family key, for coverage.
func keyKind(k string) string {
	for _, p := range []struct{ prefix, kind string }{
		{"redisson_lock_token:", "token"},
		{"redisson_unlock_latch:", "latch"},
		{"redisson_lock_queue:", "queue"},
		{"redisson_lock_timeout:", "timeout"},
		{"redisson_lock_alive:", "alive"},
	} {
		if len(k) > len(p.prefix) && k[:len(p.prefix)] == p.prefix {
			return p.kind
		}
	}
	if len(k) > 0 && k[0] == '{' {
		return "rwlock_timeout"
	}
	return "lock"
}
