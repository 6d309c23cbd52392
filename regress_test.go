package redisson

// Regression tests for defects found in review (IDs in the comments).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// regressFaults is a go-redis hook that, once armed, makes the next acquire
// script run in Redis but lose its reply (the caller gets a network error),
// and the next release script fail before being sent (Redis unreachable).
type regressFaults struct{ loseAcquire, failRelease atomic.Bool }

func (f *regressFaults) arm() { f.loseAcquire.Store(true); f.failRelease.Store(true) }

func (f *regressFaults) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *regressFaults) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (f *regressFaults) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		if len(args) < 2 || !strings.EqualFold(fmt.Sprint(args[0]), "evalsha") {
			return next(ctx, cmd)
		}
		sha := fmt.Sprint(args[1])
		if sha == scriptLockRelease.sha && f.failRelease.CompareAndSwap(true, false) {
			err := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused (injected)")}
			cmd.SetErr(err)
			return err
		}
		if err := next(ctx, cmd); err != nil {
			return err // NOSCRIPT and script errors: not a lost reply
		}
		if sha == scriptLockAcquire.sha && f.loseAcquire.CompareAndSwap(true, false) {
			err := &net.OpError{Op: "read", Net: "tcp", Err: errors.New("i/o timeout (injected lost reply)")}
			cmd.SetErr(err)
			return err
		}
		return nil
	}
}

// regressFaultClient returns a go-redis client of srv without retries, with
// a regressFaults hook.
func regressFaultClient(t *testing.T, srv *redistest.Server) (*redis.Client, *regressFaults) {
	f := &regressFaults{}
	rdb := srv.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	rdb.AddHook(f)
	return rdb, f
}

// regressSteal lets other try to acquire every 100ms for d. It reports
// whether other acquired, failing the test if it did while holder still
// reported its hold (two owners).
func regressSteal(t *testing.T, ctx context.Context, holder, other *Lock, d time.Duration) bool {
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

func regressUnlockAll(t *testing.T, ctx context.Context, l *Lock, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("Unlock %d of %d: %v", i+1, n, err)
		}
	}
}

// S1: re-entering a watchdog hold with a short explicit lease must not cut
// the watchdog lease short.
func TestRegressWatchdogReentryShortLease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	l := newClient(t, rdb, nil).GetLock(name)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, l, 0, 300*time.Millisecond)
	t.Logf("PTTL after re-entry: %v", rdb.PTTL(ctx, name).Val())
	if regressSteal(t, ctx, l, newClient(t, srv.Client(t), nil).GetLock(name), 2*time.Second) {
		t.Fatal("watchdog hold re-entered with a 300ms lease was lost within 2s")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err() = %v while held", err)
	}
	regressUnlockAll(t, ctx, l, 2)
}

// S1 (reverse): an explicit-lease hold re-entered with lease 0 is renewed
// by the watchdog from then on.
func TestRegressLeaseReentryBecomesWatched(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	l := newClient(t, rdb, &Options{WatchdogTimeout: time.Second}).GetLock(name)
	mustTryLock(t, ctx, l, 0, 500*time.Millisecond)
	mustTryLock(t, ctx, l, 0, 0)
	// 3 s: six times the original lease, three watchdog timeouts.
	if regressSteal(t, ctx, l, newClient(t, srv.Client(t), nil).GetLock(name), 3*time.Second) {
		t.Fatal("hold re-entered with lease 0 was not kept alive by the watchdog")
	}
	if err := l.Err(); err != nil {
		t.Fatalf("Err() = %v while held", err)
	}
	if n, err := l.HoldCount(ctx); n != 2 || err != nil {
		t.Fatalf("HoldCount = %d, %v; want 2", n, err)
	}
	regressUnlockAll(t, ctx, l, 2)
}

// S2: an acquire whose reply was lost and whose compensation failed leaves
// an orphan field; a retry on the same handle must not adopt it with the
// orphan's short lease while reporting the long one.
func TestRegressOrphanAdoptedWithRequestedLease(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	rdb, faults := regressFaultClient(t, srv)
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
	if regressSteal(t, ctx, l, newClient(t, direct, nil).GetLock(name), 1500*time.Millisecond) && ok {
		t.Fatal("hold taken with a 60s lease was lost within 1.5s")
	}
	if ok {
		regressUnlockAll(t, ctx, l, 1)
	}
}

// S3: with Redis one hold above the handle (a re-entry whose reply was lost
// and whose compensation failed), the handle's final Unlock must free the
// lock, or else the handle must report the loss when the key expires.
func TestRegressUnlockCountMismatch(t *testing.T) {
	srv := redistest.Start(t)
	direct := srv.Client(t)
	rdb, faults := regressFaultClient(t, srv)
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
	regressSteal(t, ctx, l, newClient(t, direct, nil).GetLock(name), 3*time.Second)
}

// S4: a token key of the wrong type fails the acquire before it writes
// anything.
func TestRegressTokenWrongType(t *testing.T) {
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

// L2: a waiter queued behind a local waiter that gave up is bounded by the
// holder's lease, not by the watchdog timeout.
func TestRegressQueuedWaiterBoundedByLease(t *testing.T) {
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
	regressUnlockAll(t, ctx, w2, 1)
}

// L3: a wake-up that reaches a waiter just as its context ends is passed on
// to the next waiter. The wake-up is delivered to W1, blocked in its wait,
// and W1's context cancelled at once: W1 returns with the wake-up in hand
// but its context ended, which must not swallow it.
func TestRegressWakePassedOnWhenContextEnds(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	a := newClient(t, rdb, nil)
	b := newClient(t, srv.Client(t), nil)
	ctx := testCtx(t, 3*time.Minute)
	waiters := func(channel string) int {
		b.pubsub.mu.Lock()
		defer b.pubsub.mu.Unlock()
		if e := b.pubsub.entries[b.pubsub.objectKey(objectChannel{name: channel})]; e != nil && e.confirmed {
			return len(e.waiters)
		}
		return -1
	}
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

		rdb.Del(ctx, name) // the holder's release; its message is delivered here:
		b.pubsub.mu.Lock()
		conn := b.pubsub.entries[b.pubsub.objectKey(objectChannel{name: channel})].conn
		b.pubsub.mu.Unlock()
		b.pubsub.dispatch(conn, &redis.Message{Channel: channel, Payload: "0"})
		cancel1()
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
		regressUnlockAll(t, ctx, r.l, 1)
	}
}

// L1: a pub/sub connection that goes silent (no RST) is noticed by the
// health check and replaced, so that waiters still hear unlocks. Only the
// pub/sub connection goes through the proxy.
func TestRegressDeadPubSubReplaced(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, direct)
	holder := newClient(t, direct, nil).GetLock(name)
	mustTryLock(t, ctx, holder, 0, time.Minute)

	var armed atomic.Bool // the next dial goes through the proxy; CLIENT SETNAME viaproxy
	rw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if !armed.CompareAndSwap(true, false) {
			return d.DialContext(ctx, network, addr)
		}
		conn, err := d.DialContext(ctx, network, proxy.Addr())
		if err != nil {
			return nil, err
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err = conn.Write([]byte("*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$8\r\nviaproxy\r\n")); err == nil {
			_, err = io.ReadFull(conn, make([]byte, 5)) // +OK\r\n
		}
		conn.SetDeadline(time.Time{})
		if err != nil {
			conn.Close()
		}
		return conn, err
	}})
	t.Cleanup(func() { rw.Close() })
	if err := rw.Ping(ctx).Err(); err != nil { // a direct command connection, idle in the pool
		t.Fatal(err)
	}
	armed.Store(true)
	c := newClient(t, rw, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	got := make(chan error, 1)
	w := c.GetLock(name)
	go func() { got <- w.Lock(ctx) }()
	eventually(t, 10*time.Second, "waiter subscribed through the proxy", func() bool {
		for _, line := range strings.Split(direct.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, " name=viaproxy ") && !strings.Contains(line, " sub=0 ") {
				return true
			}
		}
		return false
	})
	proxy.Partition(true)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rw.Ping(pctx).Err(); err != nil {
		t.Fatalf("commands go through the proxy too: %v", err)
	}
	time.Sleep(time.Second) // about 5 health-check intervals
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken 5s after the unlock (holder's lease 60s): the silent pub/sub connection was not replaced")
	}
	regressUnlockAll(t, ctx, w, 1)
}

// C1: IsHeld and HoldCount may run while another goroutine's acquire gives
// the handle a new identity after a lost hold (run with -race).
func TestRegressIdentityChangeRaceFree(t *testing.T) {
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

// L8: a fair lock's state calls (IsLocked, IsHeld, HoldCount,
// RemainingLease) read the plain lock state, and used to refuse its
// three-value reply as unexpected.
func TestRegressFairLockState(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	l := c.GetFairLock(uniqueName(t, rdb))
	if locked, err := l.IsLocked(ctx); err != nil || locked {
		t.Fatalf("free: IsLocked = %v, %v", locked, err)
	}
	mustTryLock(t, ctx, l, 0, time.Minute)
	mustTryLock(t, ctx, l, 0, time.Minute)
	if n, err := l.HoldCount(ctx); err != nil || n != 2 {
		t.Fatalf("HoldCount = %d, %v; want 2", n, err)
	}
	if d, err := l.RemainingLease(ctx); err != nil || d <= 0 || d > time.Minute {
		t.Fatalf("RemainingLease = %v, %v", d, err)
	}
	other := c.GetFairLock(l.Name())
	if held, err := other.IsHeld(ctx); err != nil || held {
		t.Fatalf("other owner: IsHeld = %v, %v", held, err)
	}
	l.Unlock(ctx)
	l.Unlock(ctx)
}

// L9: a renewal pass that takes longer than a renewal period (a third of
// the lease) still renews. Passes used to be cut off at one period, so on a
// link (or a pass of 100,000 leases) slower than that, every pass failed
// and every lease was lost, although each round trip fitted in the lease.
func TestRegressSlowRenewalPassKeepsLeases(t *testing.T) {
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
