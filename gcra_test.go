package redisson

import (
	"github.com/redis/go-redis/v9"
	"testing"
	"time"
)

// GCRA grants a burst at once, then one permit per interval; a rejection
// changes nothing and its RetryAfter is when the request fits; the key
// expires when the identity is back to a full burst.
func TestGCRALimiter(t *testing.T) {
	forTopologies(t, testGCRALimiter)
}

func testGCRALimiter(t *testing.T, rdb redis.UniversalClient) {
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	// 10 per second: one permit every 100ms, burst 4.
	l := c.GetGCRALimiter(name, 10, time.Second, 4)
	if l.Interval() != 100*time.Millisecond {
		t.Fatalf("Interval = %v; want 100ms", l.Interval())
	}
	if p := l.Policy(); p != (RatePolicy{Name: name, Limit: 10, Window: time.Second, Burst: 4}) {
		t.Errorf("Policy = %+v", p)
	}
	key := identityKey(name, "alice")

	d, err := l.Allow(ctx, "alice", 3)
	if err != nil || !d.Allowed || d.Remaining != 1 || d.Limit != 4 || d.RetryAfter != 0 {
		t.Fatalf("Allow(3) = %+v, %v; want allowed, Remaining 1", d, err)
	}
	if d.ResetAfter <= 200*time.Millisecond || d.ResetAfter > 300*time.Millisecond {
		t.Errorf("ResetAfter = %v; want in (200ms, 300ms]", d.ResetAfter)
	}
	if ttl := rdb.PTTL(ctx, key).Val(); ttl <= 0 || ttl > 300*time.Millisecond {
		t.Errorf("PTTL = %v; want in (0, 300ms]", ttl)
	}
	before := rdb.Get(ctx, key).Val()

	// 3 more do not fit: at most 2 can be regained quickly... RetryAfter is
	// about 2 intervals (minus the time spent since).
	d, err = l.Allow(ctx, "alice", 3)
	if err != nil || d.Allowed || d.Remaining > 1 || d.RetryAfter <= 0 || d.RetryAfter > 200*time.Millisecond {
		t.Fatalf("Allow(3) again = %+v, %v; want rejected, RetryAfter in (0, 200ms]", d, err)
	}
	if after := rdb.Get(ctx, key).Val(); after != before {
		t.Errorf("a rejection changed the TAT: %s -> %s", before, after)
	}
	time.Sleep(d.RetryAfter)
	d, err = l.Allow(ctx, "alice", 3)
	if err != nil || !d.Allowed {
		t.Fatalf("after RetryAfter: Allow(3) = %+v, %v; want allowed", d, err)
	}
	eventually(t, 5*time.Second, "identity's key expires once back to a full burst", func() bool {
		return rdb.Exists(ctx, key).Val() == 0
	})
	// Back to full: the whole burst at once.
	if d, err := l.Allow(ctx, "alice", 4); err != nil || !d.Allowed || d.Remaining != 0 {
		t.Errorf("after expiry: Allow(4) = %+v, %v; want allowed, Remaining 0", d, err)
	}
}

// Remaining and RetryAfter follow the rate exactly for a slow rate: with a
// burst of 3 at one per hour, the 4th request waits about an hour.
func TestGCRASlowRate(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	l := c.GetGCRALimiter(name, 1, time.Hour, 3)
	for want := int64(2); want >= 0; want-- {
		d, err := l.Allow(ctx, "k", 1)
		if err != nil || !d.Allowed || d.Remaining != want {
			t.Fatalf("Allow = %+v, %v; want allowed, Remaining %d", d, err, want)
		}
	}
	d, err := l.Allow(ctx, "k", 1)
	if err != nil || d.Allowed || d.Remaining != 0 {
		t.Fatalf("4th Allow = %+v, %v; want rejected", d, err)
	}
	if d.RetryAfter <= 59*time.Minute || d.RetryAfter > time.Hour {
		t.Errorf("RetryAfter = %v; want about 1h", d.RetryAfter)
	}
	if d.ResetAfter <= 2*time.Hour+59*time.Minute || d.ResetAfter > 3*time.Hour {
		t.Errorf("ResetAfter = %v; want about 3h", d.ResetAfter)
	}
	if ttl := rdb.PTTL(ctx, identityKey(name, "k")).Val(); ttl <= 2*time.Hour+59*time.Minute || ttl > 3*time.Hour {
		t.Errorf("PTTL = %v; want about 3h", ttl)
	}
}
