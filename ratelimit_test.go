package redisson

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rateName returns a limiter name no other test uses and deletes its
// config and overall state when the test ends (per-client state expires by
// itself within the interval).
func rateName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		permits := suffixName(name, "permits")
		rdb.Del(context.Background(), name, suffixName(name, "value"), permits, suffixName(permits, "sum"))
	})
	return name
}

// rateGrant is one grant seen by a test: its log score, the server's time
// when it was made, and its permits.
type rateGrant struct {
	score, server int64 // ms since the epoch
	n             int64
	foreign       bool
}

// checkRateWindows fails t unless, at every grant, the permits of the
// grants made up to then (by server time) whose log score lies within the
// interval before it add up to at most rate. That is the limiter's
// guarantee; for grants logged at the server's time (score == server) it is
// "at most rate permits in any interval". It returns the largest sum seen.
func checkRateWindows(t *testing.T, grants []rateGrant, rate int64, interval time.Duration) int64 {
	t.Helper()
	gs := append([]rateGrant(nil), grants...)
	sort.Slice(gs, func(i, j int) bool { return gs[i].server < gs[j].server })
	iv := interval.Milliseconds()
	var peak int64
	for i, g := range gs {
		var sum int64
		for j := i; j >= 0 && gs[j].server > g.server-2*iv; j-- {
			if gs[j].score > g.server-iv {
				sum += gs[j].n
			}
		}
		for j := i + 1; j < len(gs) && gs[j].server == g.server; j++ { // same ms: order unknown
			sum += gs[j].n
		}
		if sum > rate {
			t.Fatalf("at %d: %d permits granted within %v; want at most %d", g.server, sum, interval, rate)
		}
		peak = max(peak, sum)
	}
	return peak
}

// rateState snapshots every key of a limiter as seen by client c (type,
// DUMP, expiry or not), to check that a call left Redis unchanged.
func rateState(t *testing.T, rdb redis.UniversalClient, r *RateLimiter) string {
	t.Helper()
	ctx := context.Background()
	s := ""
	for _, k := range r.keys {
		d, _ := rdb.Dump(ctx, k).Result()
		s += fmt.Sprintf("%s:%s:%q:%v;", k, rdb.Type(ctx, k).Val(), d, rdb.PTTL(ctx, k).Val() > 0)
	}
	return s
}

func mustSetRate(t *testing.T, ctx context.Context, r *RateLimiter, scope RateType, rate int64, interval time.Duration) {
	t.Helper()
	if err := r.SetRate(ctx, scope, rate, interval); err != nil {
		t.Fatalf("SetRate(%v, %d, %v): %v", scope, rate, interval, err)
	}
}

func mustTryAcquireRate(t *testing.T, ctx context.Context, r *RateLimiter, n int64, want bool) {
	t.Helper()
	if ok, err := r.TryAcquire(ctx, n); err != nil || ok != want {
		t.Fatalf("TryAcquire(%d) = %v, %v; want %v, nil", n, ok, err, want)
	}
}

func TestRateLimiterConfig(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))

	if _, err := r.Config(ctx); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("Config before TrySetRate: %v; want ErrNotInitialized", err)
	}
	if ok, err := r.TrySetRate(ctx, Overall, 10, time.Second); err != nil || !ok {
		t.Fatalf("TrySetRate = %v, %v; want true", ok, err)
	}
	if ok, err := r.TrySetRate(ctx, PerClient, 20, time.Second); err != nil || ok {
		t.Fatalf("second TrySetRate = %v, %v; want false", ok, err)
	}
	want := RateLimiterConfig{Type: Overall, Rate: 10, Interval: time.Second}
	if got, err := r.Config(ctx); err != nil || got != want {
		t.Fatalf("Config = %+v, %v; want %+v", got, err, want)
	}
	if ttl := rdb.PTTL(ctx, r.Name()).Val(); ttl != -1 {
		t.Fatalf("config PTTL without keep-alive = %v; want none", ttl)
	}
	if err := r.SetRateKeepAlive(ctx, PerClient, 20, 2*time.Second, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	want = RateLimiterConfig{Type: PerClient, Rate: 20, Interval: 2 * time.Second, KeepAlive: 5 * time.Second}
	if got, err := r.Config(ctx); err != nil || got != want {
		t.Fatalf("Config after SetRateKeepAlive = %+v, %v; want %+v", got, err, want)
	}
	if ttl := rdb.PTTL(ctx, r.Name()).Val(); ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("config PTTL with a 5s keep-alive = %v", ttl)
	}
	// A decision slides the keep-alive.
	rdb.PExpire(ctx, r.Name(), time.Second)
	mustTryAcquireRate(t, ctx, r, 1, true)
	if ttl := rdb.PTTL(ctx, r.Name()).Val(); ttl <= time.Second {
		t.Fatalf("config PTTL after a decision = %v; want the keep-alive renewed", ttl)
	}
	// SetRate without keep-alive removes the expiry.
	mustSetRate(t, ctx, r, Overall, 3, time.Second)
	if ttl := rdb.PTTL(ctx, r.Name()).Val(); ttl != -1 {
		t.Fatalf("config PTTL after SetRate without keep-alive = %v; want none", ttl)
	}
}

// Redisson's "test" and testPermitsExceeding: rate permits, then refusals,
// then the window moves on.
func TestRateLimiterWindow(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 3, 400*time.Millisecond)
	if n, err := r.AvailablePermits(ctx); err != nil || n != 3 {
		t.Fatalf("AvailablePermits = %d, %v; want 3", n, err)
	}
	if _, err := r.TryAcquire(ctx, 4); !errors.Is(err, ErrPermitsExceedRate) {
		t.Fatalf("TryAcquire(4) with rate 3: %v; want ErrPermitsExceedRate", err)
	}
	for round := range 2 {
		start := time.Now()
		mustTryAcquireRate(t, ctx, r, 2, true)
		mustTryAcquireRate(t, ctx, r, 1, true)
		if time.Since(start) < 300*time.Millisecond { // else the machine is too slow to tell
			mustTryAcquireRate(t, ctx, r, 1, false)
			if n, err := r.AvailablePermits(ctx); err != nil || n != 0 {
				t.Fatalf("round %d: AvailablePermits = %d, %v; want 0", round, n, err)
			}
		}
		time.Sleep(450 * time.Millisecond)
	}
}

// Acquire sleeps until the script says the oldest grant leaves the window:
// one refused try and one granted, not a poll, and the grant comes an
// interval after the first.
func TestRateLimiterAcquireSleepsUntilWindow(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	h := newBenchHook(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	const interval = 500 * time.Millisecond
	mustSetRate(t, ctx, r, Overall, 2, interval)
	g1, err := r.try(ctx, 2)
	if err != nil || !g1.ok {
		t.Fatalf("first grant = %+v, %v", g1, err)
	}
	rt0 := h.roundTrips()
	g2, err := r.acquire(ctx, 1, time.Time{})
	if err != nil || !g2.ok {
		t.Fatalf("acquire = %+v, %v", g2, err)
	}
	if d := g2.at - g1.at; d < interval.Milliseconds() {
		t.Fatalf("second grant %dms after the first; want at least the interval %v", d, interval)
	}
	// Exactly two on an idle limiter; one more allowed should the timer
	// fire in the same millisecond as the expiry.
	if n := h.roundTrips() - rt0; n < 2 || n > 3 {
		t.Fatalf("Acquire made %d round trips; want 2 (one refused try, one grant)", n)
	}
	if err := r.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
}

func TestRateLimiterTryAcquireWait(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 1, 300*time.Millisecond)
	mustTryAcquireRate(t, ctx, r, 1, true)
	if ok, err := r.TryAcquireWait(ctx, 1, 10*time.Second); err != nil || !ok {
		t.Fatalf("TryAcquireWait(1, 10s) = %v, %v; want true", ok, err)
	}
	// A wait shorter than the window's: false at once, not after the wait.
	mustSetRate(t, ctx, r, Overall, 1, time.Minute)
	mustTryAcquireRate(t, ctx, r, 1, true)
	start := time.Now()
	if ok, err := r.TryAcquireWait(ctx, 1, 20*time.Second); err != nil || ok {
		t.Fatalf("TryAcquireWait(1, 20s) with a 1m window = %v, %v; want false", ok, err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("TryAcquireWait took %v; want it to give up without sleeping out the wait", d)
	}
	if ok, err := r.TryAcquireWait(ctx, 1, 0); err != nil || ok {
		t.Fatalf("TryAcquireWait(1, 0) = %v, %v; want false", ok, err)
	}
}

// A cancelled context ends a wait with its error and leaves no grant.
func TestRateLimiterCancel(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 1, time.Minute)
	mustTryAcquireRate(t, ctx, r, 1, true)
	state := rateState(t, rdb, r)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := r.Acquire(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with a 200ms context: %v; want DeadlineExceeded", err)
	}
	done, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := r.TryAcquire(done, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("TryAcquire with a cancelled context: %v; want Canceled", err)
	}
	if ok, err := r.TryAcquireWait(done, 1, time.Second); ok || !errors.Is(err, context.Canceled) {
		t.Fatalf("TryAcquireWait with a cancelled context: %v, %v; want Canceled", ok, err)
	}
	if got := rateState(t, rdb, r); got != state {
		t.Fatalf("cancelled calls changed Redis:\n got %s\nwant %s", got, state)
	}
}

func TestRateLimiterBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)

	good := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, good, Overall, 5, time.Second)
	fresh := c.GetRateLimiter(rateName(t, rdb))
	empty := c.GetRateLimiter("")
	// Wrong types: at the config, at the count, at the log.
	cfgWrong := c.GetRateLimiter(rateName(t, rdb))
	rdb.Set(ctx, cfgWrong.Name(), "x", 0)
	valWrong := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, valWrong, Overall, 5, time.Second)
	rdb.RPush(ctx, suffixName(valWrong.Name(), "value"), "x")
	logWrong := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, logWrong, Overall, 5, time.Second)
	rdb.Set(ctx, suffixName(logWrong.Name(), "permits"), "x", 0)
	// An hour's window: the malformed entry must still be live when its
	// case runs, however slow the machine (an expired entry is dropped
	// unread, which is not the case under test).
	badEntry := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, badEntry, Overall, 5, time.Hour)
	rdb.ZAdd(ctx, suffixName(badEntry.Name(), "permits"), redis.Z{Score: float64(time.Now().UnixMilli()), Member: "short"})
	badCfg := c.GetRateLimiter(rateName(t, rdb))
	rdb.HSet(ctx, badCfg.Name(), "rate", "ten", "interval", "1000", "type", "0")

	type tc struct {
		what string
		r    *RateLimiter
		call func(r *RateLimiter) error
		want error
	}
	set := func(scope RateType, rate int64, interval, keepAlive time.Duration) func(r *RateLimiter) error {
		return func(r *RateLimiter) error {
			if keepAlive != 0 {
				_, err := r.TrySetRateKeepAlive(ctx, scope, rate, interval, keepAlive)
				return err
			}
			if _, err := r.TrySetRate(ctx, scope, rate, interval); err != nil {
				return err
			}
			return r.SetRate(ctx, scope, rate, interval)
		}
	}
	acquire := func(n int64) func(r *RateLimiter) error {
		return func(r *RateLimiter) error { _, err := r.TryAcquire(ctx, n); return err }
	}
	tcs := []tc{
		{"empty name", empty, acquire(1), ErrEmptyName},
		{"empty name set", empty, set(Overall, 1, time.Second, 0), ErrEmptyName},
		{"empty name config", empty, func(r *RateLimiter) error { _, err := r.Config(ctx); return err }, ErrEmptyName},
		{"empty name delete", empty, func(r *RateLimiter) error { _, err := r.Delete(ctx); return err }, ErrEmptyName},
		{"zero rate", fresh, set(Overall, 0, time.Second, 0), ErrInvalidRate},
		{"negative rate", fresh, set(Overall, -1, time.Second, 0), ErrInvalidRate},
		{"rate above uint32", fresh, set(Overall, 1<<32, time.Second, 0), ErrInvalidRate},
		{"zero interval", fresh, set(Overall, 1, 0, 0), ErrInvalidRate},
		{"negative interval", fresh, set(Overall, 1, -time.Second, 0), ErrInvalidRate},
		{"sub-ms interval", fresh, set(Overall, 1, 1500*time.Microsecond, 0), ErrInvalidRate},
		{"unknown scope", fresh, set(RateType(2), 1, time.Second, 0), ErrInvalidRate},
		{"keep-alive below interval", fresh, set(Overall, 1, time.Second, 500*time.Millisecond), ErrInvalidRate},
		{"negative keep-alive", fresh, set(Overall, 1, time.Second, -time.Second), ErrInvalidRate},
		{"zero keep-alive", fresh, func(r *RateLimiter) error { return r.SetRateKeepAlive(ctx, Overall, 1, time.Second, 0) }, ErrInvalidRate},
		{"zero permits", good, acquire(0), ErrInvalidPermits},
		{"negative permits", good, acquire(-1), ErrInvalidPermits},
		{"permits above rate", good, acquire(6), ErrPermitsExceedRate},
		{"permits above uint32", good, acquire(1 << 32), ErrPermitsExceedRate},
		{"negative wait", good, func(r *RateLimiter) error { _, err := r.TryAcquireWait(ctx, 1, -time.Second); return err }, ErrNegativeDuration},
		{"acquire zero", good, func(r *RateLimiter) error { return r.Acquire(ctx, 0) }, ErrInvalidPermits},
		{"not initialized", fresh, acquire(1), ErrNotInitialized},
		{"not initialized acquire", fresh, func(r *RateLimiter) error { return r.Acquire(ctx, 1) }, ErrNotInitialized},
		{"not initialized available", fresh, func(r *RateLimiter) error { _, err := r.AvailablePermits(ctx); return err }, ErrNotInitialized},
		{"config wrong type", cfgWrong, acquire(1), ErrWrongType},
		{"config wrong type set", cfgWrong, set(Overall, 1, time.Second, 0), ErrWrongType},
		{"config wrong type read", cfgWrong, func(r *RateLimiter) error { _, err := r.Config(ctx); return err }, ErrWrongType},
		{"config wrong type available", cfgWrong, func(r *RateLimiter) error { _, err := r.AvailablePermits(ctx); return err }, ErrWrongType},
		{"count wrong type", valWrong, acquire(1), ErrWrongType},
		{"log wrong type", logWrong, acquire(1), ErrWrongType},
		{"log wrong type available", logWrong, func(r *RateLimiter) error { _, err := r.AvailablePermits(ctx); return err }, ErrWrongType},
		{"log entry not Redisson's", badEntry, acquire(1), ErrUnexpectedReply},
		{"config field not a number", badCfg, func(r *RateLimiter) error { _, err := r.Config(ctx); return err }, ErrUnexpectedReply},
	}
	for _, tc := range tcs {
		before := rateState(t, rdb, tc.r)
		if err := tc.call(tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v; want %v", tc.what, err, tc.want)
		}
		if after := rateState(t, rdb, tc.r); after != before {
			t.Errorf("%s changed Redis:\n got %s\nwant %s", tc.what, after, before)
		}
	}
	c.Close()
	if _, err := good.TryAcquire(ctx, 1); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("TryAcquire after Close: %v; want ErrClientClosed", err)
	}
}

// PerClient gives each Client its own budget, in keys named after the
// client's ID; Overall shares one.
func TestRateLimiterPerClient(t *testing.T) {
	rdb := sharedRedis(t)
	c1, c2 := newClient(t, rdb, nil), newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rateName(t, rdb)
	r1, r2 := c1.GetRateLimiter(name), c2.GetRateLimiter(name)
	mustSetRate(t, ctx, r1, PerClient, 2, time.Minute)
	mustTryAcquireRate(t, ctx, r1, 2, true)
	mustTryAcquireRate(t, ctx, r1, 1, false)
	mustTryAcquireRate(t, ctx, r2, 2, true)
	mustTryAcquireRate(t, ctx, r2, 1, false)
	for _, c := range []*Client{c1, c2} {
		k := "{" + name + "}:permits:" + c.ID()
		if n := rdb.ZCard(ctx, k).Val(); n != 1 {
			t.Fatalf("%s holds %d entries; want 1", k, n)
		}
	}
	if n := rdb.Exists(ctx, "{"+name+"}:permits").Val(); n != 0 {
		t.Fatal("PerClient grants wrote the overall log")
	}
	mustSetRate(t, ctx, r1, Overall, 2, time.Minute)
	mustTryAcquireRate(t, ctx, r1, 2, true)
	mustTryAcquireRate(t, ctx, r2, 1, false)
}

// SetRate resets the state (Redisson's testChangeRate); a lowered rate
// counts the grants already in another client's log.
func TestRateLimiterSetRateResets(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	for _, scope := range []RateType{PerClient, Overall} {
		mustSetRate(t, ctx, r, scope, 10, time.Minute)
		mustTryAcquireRate(t, ctx, r, 1, true)
		if n, err := r.AvailablePermits(ctx); err != nil || n != 9 {
			t.Fatalf("%v: AvailablePermits = %d, %v; want 9", scope, n, err)
		}
		mustSetRate(t, ctx, r, scope, 20, time.Minute)
		mustTryAcquireRate(t, ctx, r, 1, true)
		if n, err := r.AvailablePermits(ctx); err != nil || n != 19 {
			t.Fatalf("%v: AvailablePermits after SetRate = %d, %v; want 19", scope, n, err)
		}
	}
	other := newClient(t, rdb, nil).GetRateLimiter(r.Name())
	mustSetRate(t, ctx, r, PerClient, 10, time.Minute)
	mustTryAcquireRate(t, ctx, other, 8, true)
	mustSetRate(t, ctx, r, PerClient, 5, time.Minute) // other's log stays
	if n, err := other.AvailablePermits(ctx); err != nil || n != 0 {
		t.Fatalf("AvailablePermits with 8 logged and rate 5 = %d, %v; want 0", n, err)
	}
	mustTryAcquireRate(t, ctx, other, 1, false)
	if v := rdb.Get(ctx, other.keys[2]).Val(); v != "-3" {
		t.Fatalf("count with 8 logged and rate 5 = %q; want -3 (Redisson clients add to it)", v)
	}
}

// A count that drifted from the log (Redisson #7329 and kin) is recomputed,
// never trusted: it grants neither too much nor too little.
func TestRateLimiterCountRecomputed(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 4, time.Minute)
	mustTryAcquireRate(t, ctx, r, 4, true)
	value := suffixName(r.Name(), "value")
	rdb.Set(ctx, value, 4, redis.KeepTTL) // too high
	mustTryAcquireRate(t, ctx, r, 1, false)
	if v := rdb.Get(ctx, value).Val(); v != "0" {
		t.Fatalf("count after a refusal = %q; want 0", v)
	}
	r2 := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r2, Overall, 4, time.Minute)
	mustTryAcquireRate(t, ctx, r2, 1, true)
	rdb.Set(ctx, suffixName(r2.Name(), "value"), -10, redis.KeepTTL) // too low
	mustTryAcquireRate(t, ctx, r2, 3, true)
}

// Every key a decision writes expires once the last grant leaves the
// window; an idle limiter keeps only its config hash.
func TestRateLimiterExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	const interval = 300 * time.Millisecond
	mustSetRate(t, ctx, r, Overall, 2, interval)
	mustTryAcquireRate(t, ctx, r, 1, true)
	for _, k := range []string{r.keys[1], r.keys[3], r.keys[5]} {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > interval+time.Millisecond {
			t.Fatalf("PTTL %s = %v; want in (0, %v]", k, ttl, interval+time.Millisecond)
		}
	}
	eventually(t, 10*time.Second, "state keys expire", func() bool {
		return rdb.Exists(ctx, r.keys[1:]...).Val() == 0
	})
	if rdb.Exists(ctx, r.Name()).Val() != 1 {
		t.Fatal("config hash gone without a keep-alive")
	}
	// With a keep-alive the config goes too.
	if err := r.SetRateKeepAlive(ctx, PerClient, 2, interval, 400*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	mustTryAcquireRate(t, ctx, r, 1, true)
	eventually(t, 10*time.Second, "every key expires", func() bool {
		return rdb.Exists(ctx, r.keys...).Val() == 0
	})
	if _, err := r.TryAcquire(ctx, 1); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("TryAcquire after the keep-alive ran out: %v; want ErrNotInitialized", err)
	}
}

func TestRateLimiterDelete(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	if ok, err := r.Delete(ctx); err != nil || ok {
		t.Fatalf("Delete of a missing limiter = %v, %v; want false", ok, err)
	}
	mustSetRate(t, ctx, r, Overall, 2, time.Minute)
	mustTryAcquireRate(t, ctx, r, 1, true)
	if ok, err := r.Delete(ctx); err != nil || !ok {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if n := rdb.Exists(ctx, r.keys...).Val(); n != 0 {
		t.Fatalf("%d keys left after Delete", n)
	}
}

// TryAcquire is exactly one round trip.
func TestRateLimiterOneRoundTrip(t *testing.T) {
	rdb := redistest.Shared(t).Client(t)
	h := newBenchHook(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 3, time.Minute)
	mustTryAcquireRate(t, ctx, r, 1, true) // loads the script
	for _, want := range []bool{true, true, false, false} {
		rt0 := h.roundTrips()
		mustTryAcquireRate(t, ctx, r, 1, want)
		if n := h.roundTrips() - rt0; n != 1 {
			t.Fatalf("TryAcquire (granted %v) made %d round trips; want 1", want, n)
		}
	}
}

// A grant whose reply is lost counts once: go-redis resends the call with
// the same entry, which the script recognises.
func TestRateLimiterLostReply(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	ctx := testCtx(t, 30*time.Second)
	for _, retries := range []int{0, -1} {
		via := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: retries})
		t.Cleanup(func() { via.Close() })
		c := newClient(t, via, nil)
		r := c.GetRateLimiter(rateName(t, direct))
		mustSetRate(t, ctx, r, Overall, 5, time.Minute)
		mustTryAcquireRate(t, ctx, r, 1, true)
		dropped := proxy.Dropped()
		proxy.DropNextReply()
		ok, err := r.TryAcquire(ctx, 2)
		if proxy.Dropped() != dropped+1 {
			t.Fatalf("retries %d: no reply was dropped", retries)
		}
		n, aerr := c.GetRateLimiter(r.Name()).AvailablePermits(ctx)
		switch {
		case aerr != nil:
			t.Fatal(aerr)
		case retries >= 0 && (err != nil || !ok || n != 2):
			t.Fatalf("with retries: TryAcquire = %v, %v, available %d; want true, nil, 2", ok, err, n)
		case retries < 0 && (err == nil || n != 4):
			t.Fatalf("without retries: TryAcquire = %v, %v, available %d; want an error and 4 (undone)", ok, err, n)
		}
	}
}

// The guarantee under load: several Clients, many goroutines, permits of
// 1 to 3 at a time; at most rate permits in any interval of the server's
// clock, over every grant of the run.
func TestRateLimiterGuarantee(t *testing.T) {
	rdbs := func() redis.UniversalClient { return sharedRedis(t) }
	testRateGuarantee(t, rdbs, 1500*time.Millisecond)
}

func TestRateLimiterGuaranteeCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	testRateGuarantee(t, func() redis.UniversalClient { return cl.Client(t) }, 1500*time.Millisecond)
}

func testRateGuarantee(t *testing.T, newRedis func() redis.UniversalClient, run time.Duration) {
	const clients, goroutines, rate, interval = 3, 6, 20, 250 * time.Millisecond
	ctx := testCtx(t, run+time.Minute)
	admin := newRedis()
	name := rateName(t, admin)
	mustSetRate(t, ctx, newClient(t, admin, nil).GetRateLimiter(name), Overall, rate, interval)
	var (
		mu     sync.Mutex
		grants []rateGrant
		wg     sync.WaitGroup
	)
	stop := time.Now().Add(run)
	errs := make(chan error, clients*goroutines)
	for i := range clients {
		r := newClient(t, newRedis(), nil).GetRateLimiter(name)
		for j := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := int64(1 + (i*goroutines+j)%3)
				for time.Now().Before(stop) {
					deadline := time.Time{} // Acquire
					if j%2 == 1 {
						deadline = time.Now().Add(50 * time.Millisecond) // TryAcquireWait
					}
					g, err := r.acquire(ctx, n, deadline)
					if err != nil {
						errs <- err
						return
					}
					if g.ok {
						mu.Lock()
						grants = append(grants, rateGrant{score: g.at, server: g.at, n: n})
						mu.Unlock()
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if peak := checkRateWindows(t, grants, rate, interval); peak != rate {
		t.Errorf("busiest window held %d permits; want the rate %d (the load never reached the limit?)", peak, rate)
	}
	t.Logf("SUMMARY rate limiter: %d clients x %d goroutines for %v: %d grants, every %v window checked, 0 over the rate %d",
		clients, goroutines, run, len(grants), interval, rate)
}

// On Redis Cluster every key of a limiter lands in the name's slot: the
// scripts run for names with and without a hash tag, and a name whose
// braces would split its keys is refused.
func TestRateLimiterCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	base := rateName(t, rdb)
	tagged := "{" + base + "}:tagged"
	t.Cleanup(func() {
		r := c.GetRateLimiter(tagged)
		for _, k := range r.keys {
			rdb.Del(context.Background(), k)
		}
	})
	for _, name := range []string{base, tagged} {
		for _, scope := range []RateType{Overall, PerClient} {
			r := c.GetRateLimiter(name)
			mustSetRate(t, ctx, r, scope, 2, time.Minute)
			mustTryAcquireRate(t, ctx, r, 2, true)
			mustTryAcquireRate(t, ctx, r, 1, false)
			if n, err := r.AvailablePermits(ctx); err != nil || n != 0 {
				t.Fatalf("%s %v: AvailablePermits = %d, %v; want 0", name, scope, n, err)
			}
			for _, k := range r.keys {
				if hashSlot(k) != hashSlot(name) {
					t.Fatalf("key %s is not in the slot of %s", k, name)
				}
			}
		}
	}
	if _, err := c.GetRateLimiter("a{b").TrySetRate(ctx, Overall, 1, time.Second); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("name with an incomplete hash tag: %v; want ErrInvalidName", err)
	}
}

// Close wakes Acquire and TryAcquireWait sleeping until the window has
// room: they return ErrClientClosed at once and take no permit.
func TestRateLimiterWaitEndsOnClose(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testCtx(t, 30*time.Second)
	r := c.GetRateLimiter(rateName(t, rdb))
	mustSetRate(t, ctx, r, Overall, 1, 3*time.Second)
	mustTryAcquireRate(t, ctx, r, 1, true)
	errs := make(chan error, 2)
	go func() { errs <- r.Acquire(ctx, 1) }()
	go func() {
		ok, err := r.TryAcquireWait(ctx, 1, 10*time.Second)
		if ok {
			err = errors.New("TryAcquireWait took a permit")
		}
		errs <- err
	}()
	time.Sleep(300 * time.Millisecond) // both are asleep
	start := time.Now()
	c.Close()
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrClientClosed) {
			t.Errorf("waiting call after Close = %v; want ErrClientClosed", err)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("waiting calls returned %v after Close; want at once", took)
	}
	time.Sleep(3 * time.Second) // the window has room again: no late grant
	n, err := newClient(t, rdb, nil).GetRateLimiter(r.Name()).AvailablePermits(ctx)
	if err != nil || n != 1 {
		t.Fatalf("available permits once the window passed = %d, %v; want 1 (no grant after Close)", n, err)
	}
}
