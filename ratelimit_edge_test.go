package redisson

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A RateLimiter decision whose context ends while the call is in flight
// is undone: the lost-reply undo takes the grant back. The undo is sent
// while the server is still paused, on another connection than the grant.
func TestRateLimiterCancelInFlightGrantUndone(t *testing.T) {
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
// at least interval apart. A script that floored TIME to the millisecond
// would grant both at t.999ms and at (t+interval).000ms, less than
// interval apart. A pair fails the test only when the second's "after"
// is less than interval past the first's "before", so the time the server
// may lose between the commands (it can be descheduled) cannot fail it.
func TestRateLimiterGrantsIntervalApartOnServerMicroseconds(t *testing.T) {
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
			ev = p.EvalSha(ctx, scriptRateAcquire.SHA(), r.keys, 1, id[:])
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

// A config hash whose fields are not Redisson's (a Java client that wrote
// an interval of 0ms, a hand edit) is ErrUnexpectedReply, as Config says,
// and the decision writes nothing: no grant logged before a failing SET,
// no log left without expiry, no 1ms window.
func TestRateLimiterForeignConfigFieldIsUnexpectedReplyAndWritesNothing(t *testing.T) {
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
