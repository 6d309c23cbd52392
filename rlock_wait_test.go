package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/pubsub"
	"github.com/goredisson/redisson/internal/redistest"
)

// A waiter queued behind a local waiter that gave up is bounded by the
// holder's lease, not by the watchdog timeout.
func TestLockQueuedWaiterBoundedByHolderLease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	mustTryLock(t, ctx, newClient(t, rdb, nil).GetLock(name), 0, time.Second) // never unlocked
	start := time.Now()
	b := newClient(t, srv.Client(t), nil)
	w1 := make(chan error, 1)
	go func() {
		ok, err := b.GetLock(name).TryLock(ctx, 500*time.Millisecond, 0)
		if ok {
			err = errors.New("W1 acquired a lock held for 1s within 500ms")
		}
		w1 <- err
	}()
	eventually(t, 10*time.Second, "W1 subscribed", func() bool { return b.pubsub.listening(prefixName("redisson_lock__channel", name)) })
	wctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	w2 := b.GetLock(name)
	err := w2.Lock(wctx)
	waited := time.Since(start)
	if werr := <-w1; werr != nil {
		t.Errorf("W1: %v", werr)
	}
	if err != nil {
		t.Fatalf("W2 Lock after %v: %v (holder's lease 1s)", waited, err)
	}
	if waited > 5*time.Second {
		t.Errorf("W2 acquired after %v; holder's lease was 1s", waited)
	}
	unlockN(t, ctx, w2, 1)
}

// A wake-up that reaches a waiter just as its context ends is passed on
// to the next waiter. The wake-up is delivered to W1, blocked in its wait,
// and W1's context cancelled at once: W1 returns with the wake-up in hand
// but its context ended, which must not swallow it.
func TestLockWakeUpPassedOnWhenWaiterContextEnds(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	a := newClient(t, rdb, nil)
	b := newClient(t, srv.Client(t), nil)
	ctx := testCtx(t, 3*time.Minute)
	waiters := func(channel string) int { return b.pubsub.engine.Waiters(pubsub.Object{Name: channel}) }
	type result struct {
		ok  bool
		err error
		l   *Lock
	}
	for i := 0; i < 6; i++ {
		name := uniqueName(t, rdb)
		channel := prefixName("redisson_lock__channel", name)
		mustTryLock(t, ctx, a.GetLock(name), 0, time.Minute)
		ctx1, cancel1 := context.WithCancel(ctx)
		w1 := make(chan result, 1)
		go func() { l := b.GetLock(name); err := l.Lock(ctx1); w1 <- result{err == nil, err, l} }()
		eventually(t, 10*time.Second, "W1 waiting", func() bool { return waiters(channel) == 1 })
		w2 := make(chan result, 1)
		go func() { l := b.GetLock(name); ok, err := l.TryLock(ctx, 15*time.Second, 0); w2 <- result{ok, err, l} }()
		eventually(t, 10*time.Second, "W2 waiting", func() bool { return waiters(channel) == 2 })

		// W1's context ends as the release's message is delivered: a hook on
		// the lock's channel, told each message under the engine's lock just
		// after the waiters were woken, cancels it.
		hooked, err := b.pubsub.listen(ctx, chanKey{name: channel}, &listener{hook: cancelOnMessage(cancel1)})
		if err != nil {
			t.Fatal(err)
		}
		rdb.Del(ctx, name) // the holder's release; its message:
		if err := rdb.Publish(ctx, channel, "0").Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if r := <-w1; r.ok {
			if err := r.l.Unlock(ctx); err != nil { // W1 won after all: hand on
				t.Fatal(err)
			}
		}
		r := <-w2
		waited := time.Since(start)
		if !r.ok || r.err != nil || waited > 5*time.Second {
			t.Fatalf("round %d: W2 TryLock(15s) = %v, %v after %v on a free lock; the wake-up given to W1 as its context ended was lost", i, r.ok, r.err, waited)
		}
		unlockN(t, ctx, r.l, 1)
		hooked.close()
	}
}

// cancelOnMessage is a channelHook that calls itself on every message.
type cancelOnMessage func()

func (f cancelOnMessage) message(string) { f() }
func (cancelOnMessage) lost()            {}
func (cancelOnMessage) resumed()         {}

// The lease-change message: a negative number wakes every waiter to try
// again; 0, 1 and the taken announcements keep their meaning.
func TestLockWakePolicyLeaseChange(t *testing.T) {
	for _, tc := range []struct {
		payload string
		want    wake
	}{
		{"0", wake{n: 1, handoff: true}},
		{"1", wake{n: -1}},
		{"2", wake{taken: true, age: -time.Millisecond}},
		{"1303", wake{taken: true, age: 1300 * time.Millisecond}},
		{"-1", wake{n: -1}},
		{"-1301", wake{n: -1}},
		{"x", wake{ignored: true}},
	} {
		if got := lockWakePolicy(tc.payload); got != tc.want {
			t.Errorf("lockWakePolicy(%q) = %+v; want %+v", tc.payload, got, tc.want)
		}
	}
}

// A holder that re-enters with a shorter lease and goes away: the waiter,
// whose wait was bounded by the long lease, hears the lease-change message,
// re-arms its bound and takes the lock soon after the short lease ends
// (before the fix it slept the full 8s).
func TestLockWaiterHearsReentryShortenLease(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	channel := prefixName("redisson_lock__channel", name)
	holder := newClient(t, rdb, nil).GetLock(name)
	mustTryLock(t, ctx, holder, 0, 8*time.Second)
	spy := rwiSpy(t, rdb, channel)
	b := newClient(t, sharedRedis(t), nil)
	w := b.GetLock(name)
	done := async(func() error {
		ok, err := w.TryLock(ctx, 30*time.Second, 0)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		return err
	})
	eventually(t, 10*time.Second, "waiter subscribed", func() bool { return b.pubsub.listening(channel) })
	time.Sleep(300 * time.Millisecond) // the waiter is in its 8s wait
	const short = 1300 * time.Millisecond
	mustTryLock(t, holdCtx(t, ctx, holder), holder, 0, short) // re-entry, and the holder goes away
	start := time.Now()
	await(t, done, 4*short, "waiter after the lease shrank to 1.3s")
	t.Logf("waiter took the lock %v after the re-entry", time.Since(start))
	found := false
	for _, m := range spy() {
		if n, err := strconv.ParseInt(m, 10, 64); err == nil && n < 0 && n >= -1-short.Milliseconds() {
			found = true
		}
	}
	if !found {
		t.Errorf("channel messages %v; want a lease-change message -1-ms with ms <= %d", spy(), short.Milliseconds())
	}
	unlockN(t, ctx, w, 1)
}

// With Redis going down during a wait (go-redis's default retries and
// dials, about 1.8s a command against a refused port), TryLock and
// Semaphore.TryAcquire return by the end of their wait plus the undo of
// the try cut off (one command), with an error naming the object.
func TestTryWithWaitRespectsWaitWhenRedisGoesDown(t *testing.T) {
	t.Parallel() // its own servers; mostly waiting, so it overlaps the other parallel tests
	const wait = 2 * time.Second
	// One command with go-redis's retries, and a margin for a loaded machine
	// (parallel tests, -race): a call that ignored the wait would run into
	// ctx's 30s instead.
	const undo = 8 * time.Second
	for _, what := range []string{"lock", "semaphore"} {
		t.Run(what, func(t *testing.T) {
			srv := redistest.Start(t)
			c := newClient(t, srv.Client(t), nil)
			other := newClient(t, srv.Client(t), nil)
			ctx := testCtx(t, 30*time.Second)
			name := "outage:" + what
			var try func() (bool, error)
			switch what {
			case "lock":
				mustTryLock(t, ctx, other.GetLock(name), 0, time.Minute)
				l := c.GetLock(name)
				try = func() (bool, error) { return l.TryLock(ctx, wait, 0) }
			case "semaphore":
				s := c.GetSemaphore(name)
				try = func() (bool, error) { return s.TryAcquire(ctx, 1, wait) }
			}
			go func() { time.Sleep(300 * time.Millisecond); srv.Stop() }()
			start := time.Now()
			ok, err := try()
			took := time.Since(start)
			t.Logf("%v, %v after %v", ok, err, took)
			if ok {
				t.Fatal("took the object")
			}
			if took > wait+undo {
				t.Errorf("returned after %v; want by the wait (%v) plus one command", took, wait)
			}
			if err != nil && !strings.Contains(err.Error(), `"`+name+`"`) {
				t.Errorf("error %q does not name the %s", err, what)
			}
		})
	}
}
