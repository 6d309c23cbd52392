package redisson

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// limiterName returns a limiter name no other test uses and deletes its
// identities' keys when the test ends.
func limiterName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	base := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	name := fmt.Sprintf("test:%s:%d", base, nameSeq.Add(1))
	t.Cleanup(func() { deleteIdentityKeys(rdb, name) })
	return name
}

// deleteIdentityKeys deletes every <name>:{...} key, on every master.
func deleteIdentityKeys(rdb redis.UniversalClient, name string) {
	ctx := context.Background()
	pattern := strings.NewReplacer("[", "\\[", "]", "\\]", "*", "\\*", "?", "\\?", "{", "\\{").Replace(name) + ":\\{*"
	del := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			c.Del(ctx, iter.Val())
		}
		return iter.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		_ = cc.ForEachMaster(ctx, del)
		return
	}
	if c, ok := rdb.(*redis.Client); ok {
		_ = del(ctx, c)
	}
}

// forTopologies runs test on the shared single node and on the shared
// 3-master cluster.
func forTopologies(t *testing.T, test func(t *testing.T, rdb redis.UniversalClient)) {
	t.Run("single", func(t *testing.T) { test(t, sharedRedis(t)) })
	t.Run("cluster", func(t *testing.T) { test(t, redistest.SharedCluster(t).Client(t)) })
}

// keyedKinds builds each keyed limiter with "limit" permits at once that
// are not regained during a test (a one-hour window or rate).
var keyedKinds = []struct {
	kind string
	make func(c *Client, name string, limit int64) KeyedLimiter
}{
	{"fixedwindow", func(c *Client, name string, limit int64) KeyedLimiter {
		return c.GetFixedWindowLimiter(name, limit, time.Hour)
	}},
	{"gcra", func(c *Client, name string, limit int64) KeyedLimiter {
		return c.GetGCRALimiter(name, 1, time.Hour, limit)
	}},
}

// Both limiters answer bad input with their sentinel errors and leave
// Redis unchanged.
func TestKeyedLimiterBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	for _, k := range keyedKinds {
		t.Run(k.kind, func(t *testing.T) {
			name := limiterName(t, rdb)
			l := k.make(c, name, 5)
			cancelled, cancel := context.WithCancel(ctx)
			cancel()
			cases := []struct {
				what string
				l    KeyedLimiter
				ctx  context.Context
				key  string
				n    int64
				want error
			}{
				{"empty name", k.make(c, "", 5), ctx, "a", 1, ErrEmptyName},
				{"empty key", l, ctx, "", 1, ErrEmptyKey},
				{"zero permits", l, ctx, "a", 0, ErrInvalidPermits},
				{"negative permits", l, ctx, "a", -1, ErrInvalidPermits},
				{"permits above limit", l, ctx, "a", 6, ErrPermitsExceedRate},
				{"cancelled context", l, cancelled, "a", 1, context.Canceled},
			}
			for _, tc := range cases {
				d, err := tc.l.Allow(tc.ctx, tc.key, tc.n)
				if !errors.Is(err, tc.want) {
					t.Errorf("%s: Allow = %+v, %v; want %v", tc.what, d, err, tc.want)
				}
				if d.Allowed {
					t.Errorf("%s: decision Allowed with an error", tc.what)
				}
			}
			if n := rdb.Exists(ctx, identityKey(name, "a")).Val(); n != 0 {
				t.Errorf("after bad calls the identity key exists (%d); want Redis unchanged", n)
			}

			// Wrong type at the identity's key: a hash, and a string that is
			// not the limiter's state.
			rdb.HSet(ctx, identityKey(name, "h"), "f", "v")
			rdb.Set(ctx, identityKey(name, "s"), "not a number", 0)
			for _, key := range []string{"h", "s"} {
				before := fmt.Sprint(rdb.Dump(ctx, identityKey(name, key)).Val(), rdb.PTTL(ctx, identityKey(name, key)).Val())
				if _, err := l.Allow(ctx, key, 1); !errors.Is(err, ErrWrongType) {
					t.Errorf("key holding a %s: err = %v; want ErrWrongType", key, err)
				}
				after := fmt.Sprint(rdb.Dump(ctx, identityKey(name, key)).Val(), rdb.PTTL(ctx, identityKey(name, key)).Val())
				if after != before {
					t.Errorf("key holding a %s changed: %q -> %q", key, before, after)
				}
			}

			closed := newClient(t, rdb, nil)
			closed.Close()
			if _, err := k.make(closed, name, 5).Allow(ctx, "a", 1); !errors.Is(err, ErrClientClosed) {
				t.Errorf("closed client: err = %v; want ErrClientClosed", err)
			}
		})
	}
}

// An invalid configuration is reported by every call, without panics.
func TestKeyedLimiterInvalidConfig(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	bad := map[string]KeyedLimiter{
		"fixed limit 0":         c.GetFixedWindowLimiter(name, 0, time.Second),
		"fixed limit -1":        c.GetFixedWindowLimiter(name, -1, time.Second),
		"fixed window 0":        c.GetFixedWindowLimiter(name, 1, 0),
		"fixed window -1s":      c.GetFixedWindowLimiter(name, 1, -time.Second),
		"fixed window 500µs":    c.GetFixedWindowLimiter(name, 1, 500*time.Microsecond),
		"gcra rate 0":           c.GetGCRALimiter(name, 0, time.Second, 1),
		"gcra rate -1":          c.GetGCRALimiter(name, -1, time.Second, 1),
		"gcra period 0":         c.GetGCRALimiter(name, 1, 0, 1),
		"gcra period -1s":       c.GetGCRALimiter(name, 1, -time.Second, 1),
		"gcra burst 0":          c.GetGCRALimiter(name, 1, time.Second, 0),
		"gcra interval < 1µs":   c.GetGCRALimiter(name, 2000, time.Millisecond, 1),
		"gcra tolerance > 100y": c.GetGCRALimiter(name, 1, time.Hour, 1<<40),
	}
	for what, l := range bad {
		for _, n := range []int64{1, 0} {
			if _, err := l.Allow(ctx, "a", n); !errors.Is(err, ErrInvalidRate) {
				t.Errorf("%s: Allow(%d) err = %v; want ErrInvalidRate", what, n, err)
			}
		}
	}
	if n := rdb.Exists(ctx, identityKey(name, "a")).Val(); n != 0 {
		t.Errorf("identity key exists after invalid calls")
	}
}

// concurrentAllowed runs goroutines on each limiter (one per Client), each
// asking for one permit for each key `rounds` times, and returns the number
// of allowed decisions per key.
func concurrentAllowed(t *testing.T, ctx context.Context, ls []KeyedLimiter, keys []string, goroutines, rounds int) map[string]int64 {
	t.Helper()
	counts := make(map[string]*atomic.Int64, len(keys))
	for _, k := range keys {
		counts[k] = new(atomic.Int64)
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := range goroutines {
		l := ls[i%len(ls)]
		wg.Go(func() {
			for r := range rounds {
				for _, k := range keys {
					d, err := l.Allow(ctx, k, 1)
					if err != nil {
						failed.Store(fmt.Sprintf("round %d key %s: %v", r, k, err))
						return
					}
					if d.Allowed {
						counts[k].Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	if f := failed.Load(); f != nil {
		t.Fatalf("Allow failed: %v", f)
	}
	out := make(map[string]int64, len(keys))
	for k, n := range counts {
		out[k] = n.Load()
	}
	return out
}

// Several Clients and many goroutines never get more than the limit in
// total, per identity, and get exactly the limit when they ask for more, on
// a single node and on the 3-master cluster.
func TestKeyedLimiterConcurrentExact(t *testing.T) {
	topologies := []struct {
		name string
		rdbs func(t *testing.T) []redis.UniversalClient
	}{
		{"single", func(t *testing.T) []redis.UniversalClient {
			s := redistest.Shared(t)
			return []redis.UniversalClient{s.Client(t), s.Client(t), s.Client(t)}
		}},
		{"cluster", func(t *testing.T) []redis.UniversalClient {
			cl := redistest.SharedCluster(t)
			return []redis.UniversalClient{cl.Client(t), cl.Client(t), cl.Client(t)}
		}},
	}
	const limit, goroutines, rounds = 40, 24, 5 // 120 requests per key
	keys := []string{"10.0.0.1", "10.0.0.2", "user:7", "api-key-x", "ü", "we{ir}d", "}{"}
	for _, top := range topologies {
		for _, k := range keyedKinds {
			t.Run(top.name+"/"+k.kind, func(t *testing.T) {
				ctx := testCtx(t, time.Minute)
				rdbs := top.rdbs(t)
				name := limiterName(t, rdbs[0])
				var ls []KeyedLimiter
				for _, rdb := range rdbs {
					ls = append(ls, k.make(newClient(t, rdb, nil), name, limit))
				}
				got := concurrentAllowed(t, ctx, ls, keys, goroutines, rounds)
				for _, key := range keys {
					if got[key] != limit {
						t.Errorf("key %q: %d allowed in total; want exactly %d", key, got[key], limit)
					}
				}
				// Rejections are not counted: the state still says the limit,
				// so one more request is rejected with Remaining 0.
				d, err := ls[0].Allow(ctx, keys[0], 1)
				if err != nil || d.Allowed || d.Remaining != 0 || d.Limit != limit {
					t.Errorf("after the run: %+v, %v; want rejected, Remaining 0, Limit %d", d, err, limit)
				}
			})
		}
	}
}

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
