package redisson

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// servedGrant is one allowed decision as a caller saw it: wall-clock µs just
// before Allow was called and just after it returned. The Redis server runs
// on this machine, so its TIME and the key expiries are on the same clock.
type servedGrant struct{ before, after int64 }

// quotaClients returns k Clients, each on its own go-redis client (its own
// pool), as k processes would have.
func quotaClients(t *testing.T, k int) []*Client {
	cs := make([]*Client, k)
	for i := range cs {
		cs[i] = newClient(t, sharedRedis(t), nil)
	}
	return cs
}

// hammerer is one client's load: goroutines asking for 1 permit in a
// loop, pausing pace after each grant.
type hammerer struct {
	l          *LocalQuotaLimiter
	goroutines int
	pace       time.Duration
}

// hammer runs each client's load on key until ctx ends and returns the
// grants.
func hammer(t *testing.T, ctx context.Context, hs []hammerer, key string) []servedGrant {
	var mu sync.Mutex
	var log []servedGrant
	var wg sync.WaitGroup
	for _, h := range hs {
		l := h.l
		for range h.goroutines {
			wg.Go(func() {
				var mine []servedGrant
				for ctx.Err() == nil {
					b := time.Now().UnixMicro()
					d, err := l.Allow(ctx, key, 1)
					a := time.Now().UnixMicro()
					if err != nil {
						if ctx.Err() == nil {
							t.Errorf("Allow: %v", err)
						}
						break
					}
					if d.Allowed {
						mine = append(mine, servedGrant{b, a})
						time.Sleep(h.pace)
					} else {
						time.Sleep(200 * time.Microsecond)
					}
				}
				mu.Lock()
				log = append(log, mine...)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return log
}

// Three clients on one hot identity of a fixed window, two of them with
// eight goroutines that use up every window (1,600 requests/s against a
// limit of 1,200/s, so each window runs out late) and one slow client that
// often holds permits when its windows end: every server window (read from the key's
// PEXPIRETIME while they run) holds at most the limit of grants, no grant
// falls outside a window, and of what each full window counted at most
// clients × (Chunk-1) permits went unserved.
func TestLocalQuotaFixedWindowNeverExceedsLimit(t *testing.T) {
	redistest.RequireServer(t, 7, "PEXPIRETIME, which reads the windows' ends")
	const (
		clients      = 3
		limit, chunk = 300, 20
		window       = 250 * time.Millisecond
	)
	rdb := sharedRedis(t)
	name := limiterName(t, rdb)
	key := identityKey(name, "hot")
	var hs []hammerer
	for i, c := range quotaClients(t, clients) {
		h := hammerer{c.GetFixedWindowLimiter(name, limit, window).WithLocalQuota(LocalQuota{Chunk: chunk}), 8, 10 * time.Millisecond}
		if i == 0 {
			h.goroutines, h.pace = 2, 10*time.Millisecond
		}
		hs = append(hs, h)
	}

	// The poller records each window's end (server ms) as the server has it.
	ctx, cancel := context.WithTimeout(testCtx(t, time.Minute), 3*time.Second)
	defer cancel()
	// With it, the largest count Redis had in each window: what all clients
	// took from it, served or not.
	ends := map[int64]int64{}
	poll := redis.NewScript(`return {redis.call('pexpiretime', KEYS[1]), tonumber(redis.call('get', KEYS[1]) or '0')}`)
	var pollWG sync.WaitGroup
	stop := make(chan struct{})
	pollWG.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if v, err := poll.Run(context.Background(), rdb, []string{key}).Int64Slice(); err == nil && len(v) == 2 && v[0] > 0 {
				ends[v[0]] = max(ends[v[0]], v[1])
			}
			time.Sleep(500 * time.Microsecond)
		}
	})
	log := hammer(t, ctx, hs, "hot")
	close(stop)
	pollWG.Wait()

	var ws []int64
	for e := range ends {
		ws = append(ws, e*1000) // µs
	}
	slices.Sort(ws)
	if len(ws) < 8 {
		t.Fatalf("%d windows seen in 3s of %v windows; want at least 8", len(ws), window)
	}
	w := window.Microseconds()
	in := func(ts int64) int { // index of the window holding ts, or -1
		for i, e := range ws {
			if ts >= e-w && ts < e {
				return i
			}
		}
		return -1
	}
	definite := make([]int, len(ws))
	touching := make([]int, len(ws))
	ambiguous := 0
	for _, g := range log {
		i, j := in(g.before), in(g.after)
		switch {
		case i == j && i >= 0:
			definite[i]++
			touching[i]++
		case i == j:
			t.Errorf("grant at [%d, %d] µs outside every window", g.before, g.after)
		default:
			ambiguous++
			for _, k := range []int{i, j} {
				if k >= 0 {
					touching[k]++
				}
			}
		}
	}
	for i, n := range definite {
		if n > limit {
			t.Errorf("window %d (ending %d µs): %d grants; limit %d", i, ws[i], n, limit)
		}
	}
	// Under-admission: permits taken from a window and not served in it.
	// (Requests the load did not make are not the limiter's: a stalled
	// machine asks less, so the count Redis had is the measure, not the
	// limit.)
	bound := clients * (chunk - 1)
	var under []int
	for i := 1; i < len(ws)-1; i++ { // the first and last are cut by the run
		held := int(ends[ws[i]/1000]) - touching[i]
		under = append(under, limit-touching[i])
		if held > bound {
			t.Errorf("window %d: %d taken from Redis, %d served; %d held unused, bound clients × (Chunk-1) = %d",
				i, ends[ws[i]/1000], touching[i], held, bound)
		}
	}
	t.Logf("%d grants in %d windows (%d straddling a boundary); below the limit per full window %v (bound on held permits %d)",
		len(log), len(ws), ambiguous, under, bound)
}

// Three clients with eight goroutines each on one hot GCRA identity: no
// span of the merged grant log holds more grants than the rate and burst
// allow, and most of the rate is admitted.
func TestLocalQuotaGCRAConforms(t *testing.T) {
	const (
		clients, goroutines = 3, 8
		rate, burst, chunk  = 2000, 100, 20
		run                 = 2 * time.Second
	)
	rdb := sharedRedis(t)
	name := limiterName(t, rdb)
	var hs []hammerer
	for _, c := range quotaClients(t, clients) {
		hs = append(hs, hammerer{c.GetGCRALimiter(name, rate, time.Second, burst).WithLocalQuota(LocalQuota{Chunk: chunk}), goroutines, 0})
	}
	ctx, cancel := context.WithTimeout(testCtx(t, time.Minute), run)
	defer cancel()
	start := time.Now().UnixMicro()
	log := hammer(t, ctx, hs, "hot")
	end := time.Now().UnixMicro()

	// A GCRA grants at most burst + d/interval permits in any span of d.
	// Each grant was served at some moment of [before, after]; counting in
	// [a, a+d] only the grants whose whole interval lies in it never
	// counts one that may have been served outside, so a count above the
	// bound is a real excess.
	slices.SortFunc(log, func(a, b servedGrant) int { return int(a.before - b.before) })
	interval := hs[0].l.policy.Window.Microseconds() / rate
	for i, g := range log {
		for _, d := range []int64{1000, 5000, 20_000, 100_000, 500_000} {
			n := int64(0)
			for _, h := range log[i:] {
				if h.before > g.before+d {
					break
				}
				if h.after <= g.before+d {
					n++
				}
			}
			if most := burst + d/interval; n > most {
				t.Fatalf("%d grants within %d µs from %d µs; the GCRA allows at most %d", n, d, g.before, most)
			}
		}
	}
	ideal := burst + (end-start)/interval
	t.Logf("%d grants of an ideal %d (%.1f%%)", len(log), ideal, 100*float64(len(log))/float64(ideal))
	if int64(len(log)) < ideal/2 {
		t.Errorf("%d grants; want at least half the ideal %d", len(log), ideal)
	}
}

// A hot identity takes chunks that grow to Chunk, so it costs about one
// script call per Chunk decisions; concurrent goroutines share one refill
// at a time; Remaining, ResetAfter and RetryAfter stay within the window.
func TestLocalQuotaChunksAndDecisions(t *testing.T) {
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	const limit, chunk = 1000, 50
	l := c.GetFixedWindowLimiter(name, limit, time.Minute).WithLocalQuota(LocalQuota{Chunk: chunk})
	d, err := l.Allow(ctx, "a", 1)
	if err != nil || !d.Allowed || d.Remaining != limit-1 || d.Limit != limit {
		t.Fatalf("first Allow = %+v, %v; want allowed, Remaining %d", d, err, limit-1)
	}
	if got := rdb.Get(ctx, identityKey(name, "a")).Val(); got != "1" {
		t.Errorf("counter after the first decision (a chunk of 1) = %q; want 1", got)
	}
	if d.ResetAfter <= 0 || d.ResetAfter > time.Minute {
		t.Errorf("ResetAfter = %v; want in (0, 1m]", d.ResetAfter)
	}

	rt0 := h.roundTrips()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 50 {
				if d, err := l.Allow(ctx, "a", 1); err != nil || !d.Allowed {
					t.Errorf("Allow = %+v, %v; want allowed", d, err)
					return
				}
			}
		})
	}
	wg.Wait()
	counted, _ := rdb.Get(ctx, identityKey(name, "a")).Int64()
	// 801 served; Redis counted them plus what this client holds (< Chunk).
	if counted < 801 || counted > 801+chunk-1 {
		t.Errorf("counter = %d after 801 grants; want 801 to %d", counted, 801+chunk-1)
	}
	// Chunks of 2, 4, ..., 32, then 50: 20 calls for 800 grants when one
	// goroutine refills at a time; a stampede would make hundreds.
	if rt := h.roundTrips() - rt0; rt > 30 {
		t.Errorf("%d round trips for 800 grants by 16 goroutines; want at most 30", rt)
	}

	// The rest of the window: 199 more grants at most, then a refusal
	// that stands locally until RetryAfter.
	served := 0
	for {
		d, err := l.Allow(ctx, "a", 1)
		if err != nil {
			t.Fatal(err)
		}
		if !d.Allowed {
			if d.RetryAfter <= 0 || d.RetryAfter > time.Minute+time.Millisecond || d.Remaining != 0 {
				t.Errorf("refusal = %+v; want RetryAfter in (0, 1m+1ms], Remaining 0", d)
			}
			break
		}
		served++
	}
	if served != limit-801 {
		t.Errorf("served %d more; want %d (one client: no under-admission)", served, limit-801)
	}
	if got := rdb.Get(ctx, identityKey(name, "a")).Val(); got != "1000" {
		t.Errorf("counter at the limit = %q; want 1000", got)
	}
}

// Flush gives a fixed window's unused permits back to their own window,
// and never to a window opened after it.
func TestLocalQuotaFlushGivesBack(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	key := identityKey(name, "a")
	l := c.GetFixedWindowLimiter(name, 100, time.Minute).WithLocalQuota(LocalQuota{Chunk: 16})
	for range 4 { // chunks of 1, 2 (1 held, then served), 4 (3 held)
		if _, err := l.Allow(ctx, "a", 1); err != nil {
			t.Fatal(err)
		}
	}
	if got := rdb.Get(ctx, key).Val(); got != "7" {
		t.Fatalf("counter = %q; want 7 (chunks 1+2+4)", got)
	}
	// 7 counted, 4 served: 3 held.
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rdb.Get(ctx, key).Val(); got != "4" {
		t.Errorf("counter after Flush = %q; want 4 (the 4 served)", got)
	}
	if n := l.Identities(); n != 0 {
		t.Errorf("Identities after Flush = %d; want 0", n)
	}

	// A new window in between: nothing goes back to it.
	rdb.Del(ctx, key)
	for range 2 { // chunks of 1, 2: 1 held
		if _, err := l.Allow(ctx, "a", 1); err != nil {
			t.Fatal(err)
		}
	}
	rdb.Del(ctx, key)
	rdb.Set(ctx, key, "5", 30*time.Second) // another window, ending sooner
	if err := l.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got := rdb.Get(ctx, key).Val(); got != "5" {
		t.Errorf("a later window after Flush = %q; want 5 (nothing given back to it)", got)
	}
}

// Identities beyond MaxIdentities are pushed out, least recently used
// first.
func TestLocalQuotaBoundedIdentities(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	l := c.GetGCRALimiter(limiterName(t, rdb), 100, time.Second, 10).WithLocalQuota(LocalQuota{MaxIdentities: 5})
	for i := range 20 {
		if _, err := l.Allow(ctx, string(rune('a'+i)), 1); err != nil {
			t.Fatal(err)
		}
	}
	if n := l.Identities(); n != 5 {
		t.Errorf("Identities = %d; want 5", n)
	}
}

// Bad input and a bad LocalQuota give their sentinels and leave Redis
// unchanged; a closed client gives ErrClientClosed.
func TestLocalQuotaBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	fw := c.GetFixedWindowLimiter(name, 10, time.Minute)
	g := c.GetGCRALimiter(name, 10, time.Minute, 10)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	cases := []struct {
		what string
		l    *LocalQuotaLimiter
		ctx  context.Context
		key  string
		n    int64
		want error
	}{
		{"chunk above the limit", fw.WithLocalQuota(LocalQuota{Chunk: 11}), ctx, "a", 1, ErrInvalidOption},
		{"negative chunk", g.WithLocalQuota(LocalQuota{Chunk: -1}), ctx, "a", 1, ErrInvalidOption},
		{"negative max identities", fw.WithLocalQuota(LocalQuota{MaxIdentities: -1}), ctx, "a", 1, ErrInvalidOption},
		{"bad rate", c.GetFixedWindowLimiter(name, 0, time.Minute).WithLocalQuota(LocalQuota{}), ctx, "a", 1, ErrInvalidRate},
		{"empty key", fw.WithLocalQuota(LocalQuota{}), ctx, "", 1, ErrEmptyKey},
		{"zero permits", g.WithLocalQuota(LocalQuota{}), ctx, "a", 0, ErrInvalidPermits},
		{"above the limit", fw.WithLocalQuota(LocalQuota{}), ctx, "a", 11, ErrPermitsExceedRate},
		{"cancelled", g.WithLocalQuota(LocalQuota{}), cancelled, "a", 1, context.Canceled},
	}
	for _, tc := range cases {
		if d, err := tc.l.Allow(tc.ctx, tc.key, tc.n); !errors.Is(err, tc.want) || d.Allowed {
			t.Errorf("%s: Allow = %+v, %v; want %v", tc.what, d, err, tc.want)
		}
	}
	if n := rdb.Exists(ctx, identityKey(name, "a")).Val(); n != 0 {
		t.Errorf("identity key exists after bad calls; want Redis unchanged")
	}
	rdb.HSet(ctx, identityKey(name, "h"), "f", "v")
	for _, l := range []*LocalQuotaLimiter{fw.WithLocalQuota(LocalQuota{}), g.WithLocalQuota(LocalQuota{})} {
		if _, err := l.Allow(ctx, "h", 1); !errors.Is(err, ErrWrongType) {
			t.Errorf("a hash at the identity: err = %v; want ErrWrongType", err)
		}
	}
	c2 := newClient(t, rdb, nil)
	l := c2.GetFixedWindowLimiter(name, 10, time.Minute).WithLocalQuota(LocalQuota{})
	c2.Close()
	if _, err := l.Allow(ctx, "a", 1); !errors.Is(err, ErrClientClosed) {
		t.Errorf("after Close: err = %v; want ErrClientClosed", err)
	}
	var _ KeyedLimiter = l
	var _ redis.UniversalClient = rdb
}

// Permits held when their chunk stops being valid (a fixed window's end;
// for GCRA, Chunk-1 emission intervals after it was taken) are not served:
// the next decision goes to Redis.
func TestLocalQuotaChunkExpires(t *testing.T) {
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	for _, tc := range []struct {
		what string
		l    *LocalQuotaLimiter
		wait time.Duration
	}{
		{"fixed window", c.GetFixedWindowLimiter(name+":fw", 100, time.Second).WithLocalQuota(LocalQuota{Chunk: 8}), 1100 * time.Millisecond},
		// 2/s: chunks of 2 live 500ms, chunks of 4 1.5s
		{"gcra", c.GetGCRALimiter(name+":gcra", 2, time.Second, 10).WithLocalQuota(LocalQuota{Chunk: 4}), 1600 * time.Millisecond},
	} {
		t.Cleanup(func() { deleteIdentityKeys(rdb, tc.l.Name()) })
		for range 2 { // chunks of 1 and 2: 1 held
			if d, err := tc.l.Allow(ctx, "a", 1); err != nil || !d.Allowed {
				t.Fatalf("%s: Allow = %+v, %v", tc.what, d, err)
			}
		}
		rt := h.roundTrips()
		if d, err := tc.l.Allow(ctx, "a", 1); err != nil || !d.Allowed || h.roundTrips() != rt {
			t.Fatalf("%s: Allow from the held permit = %+v, %v, %d round trips; want allowed, none", tc.what, d, err, h.roundTrips()-rt)
		}
		for range 2 { // chunk of 4: 3 held
			if _, err := tc.l.Allow(ctx, "a", 1); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(tc.wait)
		rt = h.roundTrips()
		if d, err := tc.l.Allow(ctx, "a", 1); err != nil || !d.Allowed || h.roundTrips() == rt {
			t.Errorf("%s: Allow after the chunk expired = %+v, %v, served without Redis; want a new chunk", tc.what, d, err)
		}
	}
}

// A GCRA chunk is taken as if its lifetime had passed: an identity at rest
// that takes a chunk of 2 (served for up to one interval) has its TAT set
// one interval beyond now + 2 intervals, so a permit served at the end of
// that lifetime still conforms.
func TestLocalQuotaGCRALookahead(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := limiterName(t, rdb)
	l := c.GetGCRALimiter(name, 10, time.Second, 4).WithLocalQuota(LocalQuota{Chunk: 2})
	if _, err := l.Allow(ctx, "a", 1); err != nil { // a plain decision (chunk of 1)
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond) // back at rest: the TAT is in the past
	before := time.Now()               // the server's clock is this machine's
	if d, err := l.Allow(ctx, "a", 1); err != nil || !d.Allowed {
		t.Fatalf("Allow = %+v, %v", d, err)
	}
	tat, _ := rdb.Get(ctx, identityKey(name, "a")).Int64()
	if ahead := time.Duration(tat-before.UnixMicro()) * time.Microsecond; ahead < 300*time.Millisecond {
		t.Errorf("TAT %v after the call; want at least 300ms (100ms lookahead + 2 intervals)", ahead)
	}
}

// Local quota works on a single node and on Redis Cluster (each identity's
// key in its own slot): chunks, decisions from them, and Flush.
func TestLocalQuotaTopologies(t *testing.T) {
	forTopologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 30*time.Second)
		c := newClient(t, rdb, nil)
		name := limiterName(t, rdb)
		q := LocalQuota{Chunk: 4}
		for _, l := range []*LocalQuotaLimiter{
			c.GetFixedWindowLimiter(name+":fw", 10, time.Minute).WithLocalQuota(q),
			c.GetGCRALimiter(name+":gcra", 1, time.Hour, 10).WithLocalQuota(q),
		} {
			t.Cleanup(func() { deleteIdentityKeys(rdb, l.Name()) })
			allowed := 0
			for _, key := range []string{"a", "b", "c"} {
				for range 12 {
					d, err := l.Allow(ctx, key, 1)
					if err != nil {
						t.Fatalf("%s: Allow(%s) = %v", l.Name(), key, err)
					}
					if d.Allowed {
						allowed++
					}
				}
			}
			if allowed > 30 || allowed < 30-3*(4-1) {
				t.Errorf("%s: %d of 36 allowed over 3 identities of 10; want %d to 30", l.Name(), allowed, 30-3*3)
			}
			if err := l.Flush(ctx); err != nil {
				t.Errorf("%s: Flush = %v", l.Name(), err)
			}
		}
	})
}
