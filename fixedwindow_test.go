package redisson

import (
	"errors"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A fixed window grants the limit, rejects without counting, reports
// remaining and reset, expires with its window, and admits the request
// again once RetryAfter has passed.
func TestFixedWindowLimiter(t *testing.T) {
	forTopologies(t, testFixedWindowLimiter)
}

func testFixedWindowLimiter(t *testing.T, rdb redis.UniversalClient) {
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	const window = 400 * time.Millisecond
	l := c.GetFixedWindowLimiter(name, 5, window)
	if p := l.Policy(); p != (RatePolicy{Name: name, Limit: 5, Window: window, Burst: 5}) {
		t.Errorf("Policy = %+v", p)
	}
	key := identityKey(name, "alice")

	for i, want := range []int64{4, 2} { // 1 permit, then 2
		d, err := l.Allow(ctx, "alice", int64(i+1))
		if err != nil || !d.Allowed || d.Remaining != want || d.Limit != 5 || d.RetryAfter != 0 {
			t.Fatalf("Allow #%d = %+v, %v; want allowed, Remaining %d", i, d, err, want)
		}
		if d.ResetAfter <= 0 || d.ResetAfter > window {
			t.Errorf("ResetAfter = %v; want in (0, %v]", d.ResetAfter, window)
		}
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > window {
		t.Errorf("PTTL = %v; want in (0, %v]", ttl, window)
	}

	// 3 permits do not fit (2 left): rejected, not counted.
	d, err := l.Allow(ctx, "alice", 3)
	if err != nil || d.Allowed || d.Remaining != 2 || d.RetryAfter <= 0 || d.RetryAfter > window+time.Millisecond ||
		d.RetryAfter != d.ResetAfter+time.Millisecond {
		t.Fatalf("Allow(3) = %+v, %v; want rejected, Remaining 2, RetryAfter in (0, window+1ms], ResetAfter+1ms", d, err)
	}
	if got := rdb.Get(ctx, key).Val(); got != "3" {
		t.Errorf("counter after a rejection = %q; want 3", got)
	}
	// Another identity has its own window.
	if d, err := l.Allow(ctx, "bob", 5); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Errorf("bob Allow(5) = %+v, %v; want allowed, Remaining 0", d, err)
	}
	// The 2 left are still there.
	if d, err := l.Allow(ctx, "alice", 2); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Allow(2) = %+v, %v; want allowed, Remaining 0", d, err)
	}
	d, err = l.Allow(ctx, "alice", 1)
	if err != nil || d.Allowed {
		t.Fatalf("Allow over the limit = %+v, %v; want rejected", d, err)
	}
	time.Sleep(d.RetryAfter)
	if d, err := l.Allow(ctx, "alice", 5); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Errorf("after RetryAfter: Allow(5) = %+v, %v; want allowed (new window)", d, err)
	}
	eventually(t, 5*time.Second, "idle identity's key expires", func() bool {
		return rdb.Exists(ctx, identityKey(name, "bob")).Val() == 0
	})
}

// A counter left without expiry (by a foreign writer) gets one window, so
// the identity is never blocked for ever.
func TestFixedWindowRepairsMissingTTL(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	l := c.GetFixedWindowLimiter(name, 2, time.Minute)
	rdb.Set(ctx, identityKey(name, "x"), "2", 0)
	d, err := l.Allow(ctx, "x", 1)
	if err != nil || d.Allowed {
		t.Fatalf("Allow = %+v, %v; want rejected", d, err)
	}
	if ttl := rdb.PTTL(ctx, identityKey(name, "x")).Val(); ttl <= 0 || ttl > time.Minute {
		t.Errorf("PTTL = %v; want in (0, 1m]", ttl)
	}
}

// Counts near the largest limit the script counts exactly (2^53-1) stay
// exact integers, stored as decimal digits; a larger limit is refused with
// ErrInvalidRate rather than miscounted (Lua's numbers are doubles).
func TestFixedWindowHugeLimits(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	for _, limit := range []int64{maxExactCount + 1, 1 << 62, math.MaxInt64} {
		l := c.GetFixedWindowLimiter(limiterName(t, rdb), limit, time.Minute)
		if d, err := l.Allow(ctx, "k", 1); !errors.Is(err, ErrInvalidRate) {
			t.Errorf("limit %d: Allow = %+v, %v; want ErrInvalidRate", limit, d, err)
		}
	}
	const limit = maxExactCount
	name := limiterName(t, rdb)
	l := c.GetFixedWindowLimiter(name, limit, time.Minute)
	const big = 1e15 + 1
	for i, want := range []int64{limit - big, limit - 2*big} {
		d, err := l.Allow(ctx, "k", big)
		if err != nil || !d.Allowed || d.Remaining != want {
			t.Fatalf("Allow #%d of %d = %+v, %v; want allowed, Remaining %d", i, int64(big), d, err, want)
		}
	}
	if v := rdb.Get(ctx, identityKey(name, "k")).Val(); v != strconv.FormatInt(2*big, 10) {
		t.Fatalf("counter = %q; want %d", v, int64(2*big))
	}
	rest := int64(limit - 2*big)
	if d, err := l.Allow(ctx, "k", rest+1); err != nil || d.Allowed || d.Remaining != rest {
		t.Fatalf("Allow(%d) = %+v, %v; want rejected, Remaining %d", rest+1, d, err, rest)
	}
	if d, err := l.Allow(ctx, "k", rest); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Fatalf("Allow(%d) = %+v, %v; want allowed, Remaining 0", rest, d, err)
	}
	if d, err := l.Allow(ctx, "k", 1); err != nil || d.Allowed {
		t.Fatalf("Allow(1) on a full window = %+v, %v; want rejected", d, err)
	}
}
