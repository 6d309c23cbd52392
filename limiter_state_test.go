package redisson

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// peekKinds are the keyed limiters Peek and Reset are tested on: the two
// plain ones and both in local-quota mode (chunks of 1, so that this
// client never holds permits Redis counted and the arithmetic is exact),
// each with limit permits at once not regained during a test.
var peekKinds = append(keyedKinds[:len(keyedKinds):len(keyedKinds)],
	struct {
		kind string
		make func(c *Client, name string, limit int64) KeyedLimiter
	}{"fixedwindow-localquota", func(c *Client, name string, limit int64) KeyedLimiter {
		return c.GetFixedWindowLimiter(name, limit, time.Hour).WithLocalQuota(LocalQuota{Chunk: 1})
	}},
	struct {
		kind string
		make func(c *Client, name string, limit int64) KeyedLimiter
	}{"gcra-localquota", func(c *Client, name string, limit int64) KeyedLimiter {
		return c.GetGCRALimiter(name, 1, time.Hour, limit).WithLocalQuota(LocalQuota{Chunk: 1})
	}},
)

// Peek spends nothing, and reports the Remaining the next Allow starts
// from: after each Allow of n permits, Peek's Remaining is the previous
// one less n, however often it is called.
func TestKeyedLimiterPeekDoesNotConsume(t *testing.T) {
	forTopologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 30*time.Second)
		c := newClient(t, rdb, nil)
		for _, k := range peekKinds {
			t.Run(k.kind, func(t *testing.T) {
				const limit = 10
				name := limiterName(t, rdb)
				l := k.make(c, name, limit)
				d, err := l.Peek(ctx, "ip-1")
				if err != nil {
					t.Fatal(err)
				}
				if !d.Allowed || d.Remaining != limit || d.Limit != limit || d.RetryAfter != 0 || d.ResetAfter != 0 {
					t.Fatalf("Peek of a new identity = %+v; want allowed, %d of %d remaining, no reset", d, limit, limit)
				}
				if n := rdb.Exists(ctx, identityKey(name, "ip-1")).Val(); n != 0 {
					t.Fatalf("Peek created the identity's key")
				}
				remaining := int64(limit)
				for _, n := range []int64{3, 1, 4} {
					for range 3 { // peeking again changes nothing
						d, err := l.Peek(ctx, "ip-1")
						if err != nil {
							t.Fatal(err)
						}
						if d.Remaining != remaining || !d.Allowed {
							t.Fatalf("Peek = %+v; want %d remaining, allowed", d, remaining)
						}
					}
					a, err := l.Allow(ctx, "ip-1", n)
					if err != nil {
						t.Fatal(err)
					}
					if !a.Allowed || a.Remaining != remaining-n {
						t.Fatalf("Allow(%d) after Peek saw %d = %+v; want allowed, %d remaining", n, remaining, a, remaining-n)
					}
					remaining -= n
				}
				d, err = l.Peek(ctx, "ip-1")
				if err != nil {
					t.Fatal(err)
				}
				if d.Remaining != remaining || d.ResetAfter <= 0 || d.ResetAfter > time.Hour*limit {
					t.Errorf("Peek after %d spent = %+v; want %d remaining and a reset ahead", limit-remaining, d, remaining)
				}
				// Spend the rest: Peek then reports the refusal Allow would make.
				if a, err := l.Allow(ctx, "ip-1", remaining); err != nil || !a.Allowed {
					t.Fatalf("Allow(rest %d) = %+v, %v", remaining, a, err)
				}
				d, err = l.Peek(ctx, "ip-1")
				if err != nil {
					t.Fatal(err)
				}
				if d.Allowed || d.Remaining != 0 || d.RetryAfter <= 0 {
					t.Errorf("Peek of a spent identity = %+v; want refused, 0 remaining, a RetryAfter", d)
				}
				if a, err := l.Allow(ctx, "ip-1", 1); err != nil || a.Allowed {
					t.Errorf("Allow after Peek said refused = %+v, %v; want refused", a, err)
				}
				if d, err := l.Peek(ctx, "ip-2"); err != nil || d.Remaining != limit {
					t.Errorf("Peek of another identity = %+v, %v; want %d remaining", d, err, limit)
				}
			})
		}
	})
}

// Reset gives a spent identity a full allowance back at once: its next
// Allow may take the whole limit (burst). Other identities are untouched.
func TestKeyedLimiterReset(t *testing.T) {
	forTopologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 30*time.Second)
		c := newClient(t, rdb, nil)
		for _, k := range peekKinds {
			t.Run(k.kind, func(t *testing.T) {
				const limit = 5
				name := limiterName(t, rdb)
				l := k.make(c, name, limit)
				for _, key := range []string{"a", "b"} {
					if d, err := l.Allow(ctx, key, limit); err != nil || !d.Allowed {
						t.Fatalf("Allow(%s, %d) = %+v, %v", key, limit, d, err)
					}
					if d, err := l.Allow(ctx, key, 1); err != nil || d.Allowed {
						t.Fatalf("Allow(%s) past the limit = %+v, %v; want refused", key, d, err)
					}
				}
				if err := l.Reset(ctx, "a"); err != nil {
					t.Fatal(err)
				}
				if n := rdb.Exists(ctx, identityKey(name, "a")).Val(); n != 0 {
					t.Errorf("after Reset the identity's key exists")
				}
				if d, err := l.Peek(ctx, "a"); err != nil || d.Remaining != limit || !d.Allowed {
					t.Errorf("Peek after Reset = %+v, %v; want a full %d", d, err, limit)
				}
				if d, err := l.Allow(ctx, "a", limit); err != nil || !d.Allowed || d.Remaining != 0 {
					t.Errorf("Allow(%d) after Reset = %+v, %v; want the full burst allowed", limit, d, err)
				}
				if d, err := l.Allow(ctx, "b", 1); err != nil || d.Allowed {
					t.Errorf("Reset of a touched b: Allow(b) = %+v, %v; want still refused", d, err)
				}
				if err := l.Reset(ctx, "never-seen"); err != nil {
					t.Errorf("Reset of an identity without state = %v; want nil", err)
				}
			})
		}
	})
}

// Peek and Reset answer bad input with their sentinels and leave Redis
// unchanged; Reset never deletes a key that is not a limiter's state.
func TestKeyedLimiterPeekResetBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	for _, k := range peekKinds {
		t.Run(k.kind, func(t *testing.T) {
			name := limiterName(t, rdb)
			l := k.make(c, name, 5)
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			closed := newClient(t, rdb, nil)
			closed.Close()
			for _, tc := range []struct {
				what string
				l    KeyedLimiter
				ctx  context.Context
				key  string
				want error
			}{
				{"empty name", k.make(c, "", 5), ctx, "a", ErrEmptyName},
				{"empty key", l, ctx, "", ErrEmptyKey},
				{"bad rate", k.make(c, name, 0), ctx, "a", ErrInvalidRate},
				{"closed client", k.make(closed, name, 5), ctx, "a", ErrClientClosed},
				{"cancelled context", l, cancelled, "a", context.Canceled},
			} {
				if d, err := tc.l.Peek(tc.ctx, tc.key); !errors.Is(err, tc.want) || d != (RateDecision{}) {
					t.Errorf("%s: Peek = %+v, %v; want %v and a zero decision", tc.what, d, err, tc.want)
				}
				if err := tc.l.Reset(tc.ctx, tc.key); !errors.Is(err, tc.want) {
					t.Errorf("%s: Reset = %v; want %v", tc.what, err, tc.want)
				}
			}
			rdb.HSet(ctx, identityKey(name, "h"), "f", "v")
			rdb.Set(ctx, identityKey(name, "s"), "not a number", time.Hour)
			for _, key := range []string{"h", "s"} {
				k := identityKey(name, key)
				before := fmt.Sprint(rdb.Dump(ctx, k).Val(), rdb.PTTL(ctx, k).Val() > 0)
				if _, err := l.Peek(ctx, key); !errors.Is(err, ErrWrongType) {
					t.Errorf("Peek of a key holding %s: %v; want ErrWrongType", key, err)
				}
				if err := l.Reset(ctx, key); !errors.Is(err, ErrWrongType) {
					t.Errorf("Reset of a key holding %s: %v; want ErrWrongType", key, err)
				}
				if after := fmt.Sprint(rdb.Dump(ctx, k).Val(), rdb.PTTL(ctx, k).Val() > 0); after != before {
					t.Errorf("the key holding %s changed: %q -> %q", key, before, after)
				}
			}
		})
	}
}

// In local-quota mode Peek adds the permits this client holds, and Reset
// drops them with the state in Redis.
func TestLocalQuotaPeekCountsHeldChunk(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	const limit = 100
	l := c.GetFixedWindowLimiter(name, limit, time.Hour).WithLocalQuota(LocalQuota{Chunk: 8})
	plain := c.GetFixedWindowLimiter(name, limit, time.Hour)
	spent := int64(0)
	for range 12 { // chunks grow 1, 2, 4, 8: the client ends up holding some
		d, err := l.Allow(ctx, "k", 1)
		if err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
		spent++
	}
	inRedis, err := plain.Peek(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if inRedis.Remaining >= limit-spent {
		t.Fatalf("Redis has %d left after %d served; want fewer (a chunk held)", inRedis.Remaining, spent)
	}
	d, err := l.Peek(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if d.Remaining != limit-spent {
		t.Errorf("local-quota Peek Remaining = %d; want %d (Redis's %d plus the chunk held)", d.Remaining, limit-spent, inRedis.Remaining)
	}
	if a, err := l.Allow(ctx, "k", 1); err != nil || a.Remaining != d.Remaining-1 {
		t.Errorf("Allow after Peek = %+v, %v; want %d remaining", a, err, d.Remaining-1)
	}
	if err := l.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if d, err := l.Peek(ctx, "k"); err != nil || d.Remaining != limit {
		t.Errorf("Peek after Reset = %+v, %v; want %d (no chunk held, no state)", d, err, limit)
	}
	if l.Identities() != 0 {
		t.Errorf("after Reset %d identities kept in process; want 0", l.Identities())
	}
}
