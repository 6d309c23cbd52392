package redisson

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A keyed decision whose context ends while the call is in flight returns
// the context's error and no permit; Redis may still run it, and then the
// identity is charged for it (documented on KeyedLimiter.Allow): never more
// than that one decision, so the limit is never exceeded.
func TestKeyedLimiterCancelInFlightChargesAtMostOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	for _, k := range keyedKinds {
		l := k.make(c, limiterName(t, rdb), 3)
		if _, err := l.Allow(ctx, "warm", 1); err != nil { // script loaded, pool warm
			t.Fatal(err)
		}
		srv.Pause()
		short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		d, err := l.Allow(short, "id", 1)
		cancel()
		srv.Resume()
		if !errors.Is(err, context.DeadlineExceeded) || d.Allowed {
			t.Fatalf("%s: Allow on a paused server with a 300ms context: %+v, %v; want DeadlineExceeded and no permit", k.kind, d, err)
		}
		time.Sleep(200 * time.Millisecond) // let the server run what it had queued
		next, err := l.Allow(ctx, "id", 1)
		if err != nil || !next.Allowed {
			t.Fatalf("%s: next Allow: %+v, %v", k.kind, next, err)
		}
		if next.Remaining != 1 && next.Remaining != 2 {
			t.Fatalf("%s: after the lost decision and one more, %d of 3 permits remain; want 2 (lost one not run) or 1 (charged once)", k.kind, next.Remaining)
		}
		t.Logf("%s: lost decision charged: %v", k.kind, next.Remaining == 1)
	}
}

// The same for RateLimiter, whose lost-reply undo should take the grant
// back: the undo is sent while the server is still paused, on another
// connection than the grant.
func TestRateLimiterCancelInFlightUndone(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 3, time.Minute)
	mustTryAcquireRate(t, ctx, r, 1, true)
	srv.Pause()
	go func() { time.Sleep(time.Second); srv.Resume() }() // within CleanupTimeout
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := r.TryAcquire(short, 1)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryAcquire on a paused server with a 300ms context: %v; want DeadlineExceeded", err)
	}
	time.Sleep(200 * time.Millisecond)
	if n, err := r.AvailablePermits(ctx); err != nil || n != 2 {
		t.Fatalf("after the cancelled TryAcquire: AvailablePermits = %d, %v; want 2 (its grant undone)", n, err)
	}
}

// "At most rate permits in any trailing interval": with the server's clock
// read in microseconds (TIME just before and just after the decision, in
// the same MULTI), two grants of a limiter of 1 permit per interval must be
// at least interval apart. The script floors TIME to the millisecond, so a
// grant at t.999ms and one at (t+interval).000ms are both granted, less
// than interval apart. A pair fails the test only when the second's "after"
// is less than interval past the first's "before", so the time the server
// may lose between the commands (it can be descheduled) cannot fail it.
func TestRateLimiterWindowEdgeSubMillisecond(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	const interval = 2 * time.Millisecond
	mustSetRate(t, ctx, r, Overall, 1, interval)
	mustTryAcquireRate(t, ctx, r, 1, true) // loads the script
	var lastBefore int64 = -1
	var grants int
	for stop := time.Now().Add(3 * time.Second); time.Now().Before(stop); {
		var id [16]byte
		_, _ = rand.Read(id[:])
		var before, after *redis.TimeCmd
		var ev *redis.Cmd
		if _, err := rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			before = p.Time(ctx)
			ev = p.EvalSha(ctx, scriptRateAcquire.sha, r.keys, 1, id[:])
			after = p.Time(ctx)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		res, err := ev.Int64Slice()
		if err != nil {
			t.Fatal(err)
		}
		if res[0] != 1 {
			continue
		}
		grants++
		if a := after.Val().UnixMicro(); lastBefore >= 0 && a-lastBefore < interval.Microseconds() {
			t.Fatalf("two grants of a 1 per %v limiter at most %dµs apart (server clock)", interval, a-lastBefore)
		}
		lastBefore = before.Val().UnixMicro()
	}
	t.Logf("%d grants, all at least %v apart", grants, interval)
}

// A string the limiter never writes is ErrWrongType and is left as it is,
// also when Lua's tonumber accepts it (exponents, hex, spaces, decimals,
// out-of-range times): never a decision with a zero or negative RetryAfter
// on a rejection, nor a bare Redis error.
func TestKeyedLimiterForeignNumberIsWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	for _, k := range keyedKinds {
		name := limiterName(t, rdb)
		l := k.make(c, name, 5)
		for _, v := range []string{"1e300", "9e18", "inf", "1e3", "1.0", " 2", "0x3", "-5"} {
			key := identityKey(name, v)
			rdb.Set(ctx, key, v, time.Minute)
			before := fmt.Sprint(rdb.Dump(ctx, key).Val())
			d, err := l.Allow(ctx, v, 1)
			if !errors.Is(err, ErrWrongType) {
				t.Errorf("%s: key holding %q: Allow = %+v, %v; want ErrWrongType", k.kind, v, d, err)
			}
			if after := fmt.Sprint(rdb.Dump(ctx, key).Val()); after != before {
				t.Errorf("%s: key holding %q changed", k.kind, v)
			}
		}
	}
}

// A config hash whose fields are not Redisson's (a Java client that wrote
// an interval of 0ms, a hand edit) is ErrUnexpectedReply, as Config says,
// and the decision writes nothing: no grant logged before a failing SET,
// no log left without expiry, no 1ms window.
func TestRateLimiterBadConfigFieldWritesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	for _, f := range [][2]string{{"interval", "0"}, {"interval", "-5"}, {"interval", "1.5"},
		{"rate", "1e3"}, {"rate", "2.5"}, {"type", "2"}, {"keepAliveTime", "0.5"}, {"keepAliveTime", "-1"}} {
		r := c.GetRateLimiter(rateName(t, rdb))
		mustSetRate(t, ctx, r, Overall, 3, time.Second)
		rdb.HSet(ctx, r.Name(), f[0], f[1])
		before := rateState(t, rdb, r)
		ok, err := r.TryAcquire(ctx, 1)
		if !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("%s=%s: TryAcquire = %v, %v; want ErrUnexpectedReply", f[0], f[1], ok, err)
		}
		if after := rateState(t, rdb, r); after != before {
			t.Errorf("%s=%s: TryAcquire changed Redis:\n got %s\nwant %s", f[0], f[1], after, before)
		}
		if n, err := r.AvailablePermits(ctx); !errors.Is(err, ErrUnexpectedReply) {
			t.Errorf("%s=%s: AvailablePermits = %d, %v; want ErrUnexpectedReply", f[0], f[1], n, err)
		}
	}
}
