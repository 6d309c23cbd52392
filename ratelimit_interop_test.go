package redisson

// Interop tests of RateLimiter against foreignRateLimiter, a test-only
// stand-in for Java Redisson's RRateLimiter as seen on the wire. Its Lua
// paraphrases the step-by-step description of RedissonRateLimiter in the
// wire-format reference (§1.4.10) and is sent with plain EVAL: it passes its
// own wall clock as "now", trusts the cached counter {R}:value (recomputing
// it from the log only when reclaimed permits would push it above the rate),
// and packs log members with Lua's struct library, as Redisson does. It
// shares no code with the library (key names are built here), so that the
// tests check the library against the reference, not against itself.

import (
	"context"
	"crypto/rand"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// foreignRateTryAcquireLua: KEYS=[R, value, clientValue, permits,
// clientPermits]; ARGV=[n, now, random]. Returns {-1, serverMs} when
// granted, {delay, serverMs} when not (delay = ms until the oldest entry
// leaves the window, +3). The server time in the reply is test
// instrumentation only (Redisson's script returns nil or the delay): it lets
// the tests place the grant on the server's clock as well as at its score.
const foreignRateTryAcquireLua = `
local rate = redis.call('hget', KEYS[1], 'rate')
local interval = redis.call('hget', KEYS[1], 'interval')
local kind = redis.call('hget', KEYS[1], 'type')
assert(rate ~= false and interval ~= false and kind ~= false, 'RateLimiter is not initialized')
rate, interval = tonumber(rate), tonumber(interval)
local valueName, permitsName = KEYS[2], KEYS[4]
if kind == '1' then
    valueName, permitsName = KEYS[3], KEYS[5]
end
local n, now = tonumber(ARGV[1]), tonumber(ARGV[2])
assert(rate >= n, 'Requested permits amount cannot exceed defined rate')
local t = redis.call('time')
local server = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local res
local value = redis.call('get', valueName)
if value ~= false then
    value = tonumber(value)
    local expired = redis.call('zrangebyscore', permitsName, 0, '(' .. (now - interval))
    local released = 0
    for _, v in ipairs(expired) do
        local random, p = struct.unpack('Bc0I', v)
        released = released + p
    end
    if released > 0 then
        redis.call('zremrangebyscore', permitsName, 0, '(' .. (now - interval))
        if value + released > rate then
            local used = 0
            for _, v in ipairs(redis.call('zrange', permitsName, 0, -1)) do
                local random, p = struct.unpack('Bc0I', v)
                used = used + p
            end
            value = rate - used
        else
            value = value + released
        end
        redis.call('set', valueName, value)
    end
    if value < n then
        local first = redis.call('zrange', permitsName, 0, 0, 'withscores')
        res = {3 + interval - (now - tonumber(first[2])), server}
    else
        redis.call('zadd', permitsName, now, struct.pack('Bc0I', string.len(ARGV[3]), ARGV[3], n))
        redis.call('decrby', valueName, n)
        res = {-1, server}
    end
else
    redis.call('set', valueName, rate)
    redis.call('zadd', permitsName, now, struct.pack('Bc0I', string.len(ARGV[3]), ARGV[3], n))
    redis.call('decrby', valueName, n)
    res = {-1, server}
end
local keepAlive = tonumber(redis.call('hget', KEYS[1], 'keepAliveTime') or '0')
if keepAlive > 0 then
    redis.call('pexpire', KEYS[1], keepAlive)
    redis.call('pexpire', valueName, keepAlive)
    redis.call('pexpire', permitsName, keepAlive)
else
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', valueName, ttl)
        redis.call('pexpire', permitsName, ttl)
    end
end
return res`

// foreignRateTrySetLua: KEYS=[R]; ARGV=[rate, interval, type, keepAlive].
// HSETNX of every field; returns the HSETNX of type.
const foreignRateTrySetLua = `
redis.call('hsetnx', KEYS[1], 'rate', ARGV[1])
redis.call('hsetnx', KEYS[1], 'interval', ARGV[2])
redis.call('hsetnx', KEYS[1], 'keepAliveTime', ARGV[4])
local r = redis.call('hsetnx', KEYS[1], 'type', ARGV[3])
if r == 1 and tonumber(ARGV[4]) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[4])
end
return r`

// foreignRateAvailableLua: KEYS=[R, value, clientValue, permits,
// clientPermits]; ARGV=[now]. Redisson's availablePermits: SET value rate
// when missing, else reclaim expired entries (without re-capping).
const foreignRateAvailableLua = `
local rate = redis.call('hget', KEYS[1], 'rate')
local interval = tonumber(redis.call('hget', KEYS[1], 'interval'))
local kind = redis.call('hget', KEYS[1], 'type')
assert(rate ~= false, 'RateLimiter is not initialized')
local valueName, permitsName = KEYS[2], KEYS[4]
if kind == '1' then
    valueName, permitsName = KEYS[3], KEYS[5]
end
local now = tonumber(ARGV[1])
local value = redis.call('get', valueName)
if value == false then
    redis.call('set', valueName, rate)
    return tonumber(rate)
end
local expired = redis.call('zrangebyscore', permitsName, 0, '(' .. (now - interval))
local released = 0
for _, v in ipairs(expired) do
    local random, p = struct.unpack('Bc0I', v)
    released = released + p
end
if released > 0 then
    redis.call('zremrangebyscore', permitsName, 0, '(' .. (now - interval))
    value = redis.call('incrby', valueName, released)
end
return tonumber(value)`

// foreignRateRelease is Redisson's release (3.52.0), with its bug: the
// counter goes up, the log is untouched.
const foreignRateReleaseLua = `
local rate = tonumber(redis.call('hget', KEYS[1], 'rate'))
local kind = redis.call('hget', KEYS[1], 'type')
local valueName = KEYS[2]
if kind == '1' then
    valueName = KEYS[3]
end
local value = tonumber(redis.call('get', valueName) or rate)
redis.call('set', valueName, math.min(value + tonumber(ARGV[1]), rate))
return 1`

// foreignRateLimiter is one RedissonClient's view of an RRateLimiter.
type foreignRateLimiter struct {
	rdb  redis.UniversalClient
	uuid string
	name string
}

func newForeignRateLimiter(rdb redis.UniversalClient, name string) *foreignRateLimiter {
	return &foreignRateLimiter{rdb: rdb, uuid: uuid.NewString(), name: name}
}

// keys: Redisson's suffixName rule, written out for names without braces.
func (f *foreignRateLimiter) keys() []string {
	v, p := "{"+f.name+"}:value", "{"+f.name+"}:permits"
	return []string{f.name, v, v + ":" + f.uuid, p, p + ":" + f.uuid}
}

// tryAcquire makes one attempt with now = this process's clock. It returns
// whether it was granted, the delay Redisson would sleep otherwise, the
// score it logged (now) and the server's time of the attempt.
func (f *foreignRateLimiter) tryAcquire(ctx context.Context, n int64) (ok bool, delay time.Duration, now, server int64, err error) {
	var random [16]byte
	_, _ = rand.Read(random[:])
	now = time.Now().UnixMilli()
	res, err := f.rdb.Eval(ctx, foreignRateTryAcquireLua, f.keys(), n, now, random[:]).Int64Slice()
	if err != nil {
		return false, 0, now, 0, err
	}
	return res[0] == -1, time.Duration(res[0]) * time.Millisecond, now, res[1], nil
}

func (f *foreignRateLimiter) trySetRate(ctx context.Context, kind int, rate int64, interval, keepAlive time.Duration) (bool, error) {
	r, err := f.rdb.Eval(ctx, foreignRateTrySetLua, []string{f.name}, rate, interval.Milliseconds(), kind, keepAlive.Milliseconds()).Int64()
	return r == 1, err
}

func (f *foreignRateLimiter) availablePermits(ctx context.Context) (int64, error) {
	return f.rdb.Eval(ctx, foreignRateAvailableLua, f.keys(), time.Now().UnixMilli()).Int64()
}

func (f *foreignRateLimiter) release(ctx context.Context, n int64) error {
	return f.rdb.Eval(ctx, foreignRateReleaseLua, f.keys(), n).Err()
}

// getConfig is Redisson's getConfig: HGETALL of the config hash.
func (f *foreignRateLimiter) getConfig(ctx context.Context) (map[string]string, error) {
	return f.rdb.HGetAll(ctx, f.name).Result()
}

// ---------------------------------------------------------------------------

// TestRateLimiterForeignSelf checks the stand-in against Redisson's test
// "test": 10 per interval, then 10 refused.
func TestRateLimiterForeignSelf(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := rateName(t, rdb)
	f := newForeignRateLimiter(rdb, name)
	if ok, err := f.trySetRate(ctx, 0, 10, 10*time.Second, 0); err != nil || !ok {
		t.Fatalf("trySetRate = %v, %v; want true", ok, err)
	}
	if ok, _ := f.trySetRate(ctx, 0, 20, 10*time.Second, 0); ok {
		t.Fatal("second trySetRate = true; want false")
	}
	for i := range 10 {
		if ok, _, _, _, err := f.tryAcquire(ctx, 1); err != nil || !ok {
			t.Fatalf("tryAcquire #%d = %v, %v; want true", i+1, ok, err)
		}
	}
	ok, delay, _, _, err := f.tryAcquire(ctx, 1)
	if err != nil || ok || delay <= 0 {
		t.Fatalf("tryAcquire #11 = %v, %v, %v; want false with a delay", ok, delay, err)
	}
	if _, _, _, _, err := f.tryAcquire(ctx, 11); err == nil || !strings.Contains(err.Error(), "cannot exceed") {
		t.Fatalf("tryAcquire(11) error = %v; want the rate assertion", err)
	}
}

// TestRateLimiterInteropConfig: a config written by either side reads the
// same on the other.
func TestRateLimiterInteropConfig(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)

	name := rateName(t, rdb)
	f := newForeignRateLimiter(rdb, name)
	if ok, err := f.trySetRate(ctx, 1, 7, 3*time.Second, 5*time.Second); err != nil || !ok {
		t.Fatalf("foreign trySetRate = %v, %v", ok, err)
	}
	r := c.GetRateLimiter(name)
	got, err := r.Config(ctx)
	want := RateLimiterConfig{Type: PerClient, Rate: 7, Interval: 3 * time.Second, KeepAlive: 5 * time.Second}
	if err != nil || got != want {
		t.Fatalf("Config = %+v, %v; want %+v", got, err, want)
	}
	if ok, err := r.TrySetRate(ctx, Overall, 1, time.Second); err != nil || ok {
		t.Fatalf("TrySetRate over a foreign config = %v, %v; want false, nil", ok, err)
	}
	// PER_CLIENT: each side has a budget of its own, in keys named after its
	// client id.
	if ok, _, _, _, err := f.tryAcquire(ctx, 7); err != nil || !ok {
		t.Fatalf("foreign tryAcquire(7) = %v, %v; want true", ok, err)
	}
	mustTryAcquireRate(t, ctx, r, 7, true)
	mustTryAcquireRate(t, ctx, r, 1, false)
	for _, id := range []string{f.uuid, c.ID()} {
		if n := rdb.ZCard(ctx, "{"+name+"}:permits:"+id).Val(); n != 1 {
			t.Fatalf("log of client %s holds %d entries; want 1", id, n)
		}
	}

	name2 := rateName(t, rdb)
	if err := c.GetRateLimiter(name2).SetRate(ctx, Overall, 12, 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	h, err := newForeignRateLimiter(rdb, name2).getConfig(ctx)
	wantH := map[string]string{"rate": "12", "interval": "1500", "type": "0", "keepAliveTime": "0"}
	if err != nil || len(h) != len(wantH) {
		t.Fatalf("foreign getConfig = %v, %v; want %v", h, err, wantH)
	}
	for k, v := range wantH {
		if h[k] != v {
			t.Fatalf("foreign getConfig = %v; want %v", h, wantH)
		}
	}
}

// TestRateLimiterInteropLogEntries: each side's log entries are read with
// the right permit count by the other, in both scopes' keys.
func TestRateLimiterInteropLogEntries(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rateName(t, rdb)
	f := newForeignRateLimiter(rdb, name)
	r := c.GetRateLimiter(name)
	if err := r.SetRate(ctx, Overall, 300, time.Minute); err != nil {
		t.Fatal(err)
	}
	// 257 and 3 permits: the count is a little-endian uint32 in both.
	if ok, _, _, _, err := f.tryAcquire(ctx, 257); err != nil || !ok {
		t.Fatalf("foreign tryAcquire(257) = %v, %v", ok, err)
	}
	if got, err := r.AvailablePermits(ctx); err != nil || got != 43 {
		t.Fatalf("AvailablePermits after a foreign grant of 257 = %d, %v; want 43", got, err)
	}
	if ok, err := r.TryAcquire(ctx, 44); err != nil || ok {
		t.Fatalf("TryAcquire(44) = %v, %v; want false", ok, err)
	}
	if ok, err := r.TryAcquire(ctx, 40); err != nil || !ok {
		t.Fatalf("TryAcquire(40) = %v, %v; want true", ok, err)
	}
	if got, err := f.availablePermits(ctx); err != nil || got != 3 {
		t.Fatalf("foreign availablePermits = %d, %v; want 3", got, err)
	}
	if ok, _, _, _, _ := f.tryAcquire(ctx, 4); ok {
		t.Fatal("foreign tryAcquire(4) granted with 3 available")
	}
	// A foreign grant after ours is seen (the checkpoint of our last
	// decision no longer describes the log).
	if ok, _, _, _, err := f.tryAcquire(ctx, 3); err != nil || !ok {
		t.Fatalf("foreign tryAcquire(3) = %v, %v; want true", ok, err)
	}
	if ok, err := r.TryAcquire(ctx, 1); err != nil || ok {
		t.Fatalf("TryAcquire(1) with the window full = %v, %v; want false", ok, err)
	}
	if got, err := r.AvailablePermits(ctx); err != nil || got != 0 {
		t.Fatalf("AvailablePermits with the window full = %d, %v; want 0", got, err)
	}
	// The foreign reclaim sums our permits: a Go entry that leaves the
	// window gives back exactly its permits to the foreign counter.
	name2 := rateName(t, rdb)
	f2 := newForeignRateLimiter(rdb, name2)
	r2 := c.GetRateLimiter(name2)
	if err := r2.SetRate(ctx, Overall, 600, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if ok, err := r2.TryAcquire(ctx, 513); err != nil || !ok {
		t.Fatalf("TryAcquire(513) = %v, %v", ok, err)
	}
	time.Sleep(250 * time.Millisecond)
	if got, err := f2.availablePermits(ctx); err != nil || got != 600 {
		t.Fatalf("foreign availablePermits after the Go grant left the window = %d, %v; want 600", got, err)
	}
}

// TestRateLimiterInteropForeignReleaseBug: Redisson's release raises the
// counter without touching the log (#7329); this library recomputes from
// the log and does not grant the released permits twice.
func TestRateLimiterInteropForeignReleaseBug(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rateName(t, rdb)
	f := newForeignRateLimiter(rdb, name)
	r := c.GetRateLimiter(name)
	if err := r.SetRate(ctx, Overall, 5, time.Minute); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if ok, _, _, _, err := f.tryAcquire(ctx, 1); err != nil || !ok {
			t.Fatalf("foreign tryAcquire = %v, %v", ok, err)
		}
	}
	if err := f.release(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, "{"+name+"}:value").Int64(); v != 5 {
		t.Fatalf("counter after the foreign release = %d; want 5 (the bug this test relies on)", v)
	}
	if ok, err := r.TryAcquire(ctx, 1); err != nil || ok {
		t.Fatalf("TryAcquire with 5 logged grants = %v, %v; want false", ok, err)
	}
	if v, _ := rdb.Get(ctx, "{"+name+"}:value").Int64(); v != 0 {
		t.Fatalf("counter after our decision = %d; want 0, recomputed from the log", v)
	}
}

// TestRateLimiterInteropShared: foreign and Go clients take permits from one
// limiter at once; the combined grants respect the rate. A foreign grant is
// logged at the caller's clock, sampled before its call; the check is the
// one both scripts enforce: at each grant, the permits logged within the
// interval before it (by score) among the grants made before it (by server
// time) are at most the rate.
func TestRateLimiterInteropShared(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 60*time.Second)
	name := rateName(t, rdb)
	const rate, interval = 15, 300 * time.Millisecond
	// With a keep-alive, Redisson clients refresh the expiry of the state on
	// every call (see RateLimiter's doc).
	if ok, err := newForeignRateLimiter(rdb, name).trySetRate(ctx, 0, rate, interval, 10*time.Second); err != nil || !ok {
		t.Fatalf("foreign trySetRate = %v, %v", ok, err)
	}
	var (
		mu     sync.Mutex
		grants []rateGrant
	)
	record := func(g rateGrant) {
		mu.Lock()
		grants = append(grants, g)
		mu.Unlock()
	}
	stop := time.Now().Add(1500 * time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := range 3 {
		c := newClient(t, sharedRedis(t), nil)
		f := newForeignRateLimiter(sharedRedis(t), name)
		r := c.GetRateLimiter(name)
		for j := range 3 {
			wg.Add(3)
			go func() { // a Go caller
				defer wg.Done()
				for time.Now().Before(stop) {
					n := int64(1 + (i+j)%3)
					g, err := r.acquire(ctx, n, time.Now().Add(100*time.Millisecond))
					if err != nil {
						errs <- err
						return
					}
					if g.ok {
						record(rateGrant{score: g.at, server: g.at, n: n})
					}
				}
			}()
			for range 2 {
				// A Java caller as in Redisson's testConcurrency: tryAcquire,
				// and a random 0-10ms sleep when refused. (Sleeping Redisson's
				// delay instead, the oldest grant's expiry + 3ms, it would
				// lose nearly every race to Go callers, which wake on the
				// expiry itself.)
				go func() {
					defer wg.Done()
					for time.Now().Before(stop) {
						n := int64(1 + mrand.IntN(3))
						ok, delay, now, server, err := f.tryAcquire(ctx, n)
						if err != nil {
							errs <- err
							return
						}
						if ok {
							record(rateGrant{score: now, server: server, n: n, foreign: true})
						} else {
							time.Sleep(min(delay, time.Duration(mrand.IntN(11))*time.Millisecond))
						}
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	var foreign, ours int
	for _, g := range grants {
		if g.foreign {
			foreign++
		} else {
			ours++
		}
	}
	if foreign == 0 || ours == 0 {
		t.Fatalf("%d foreign and %d Go grants; want both sides granted", foreign, ours)
	}
	if peak := checkRateWindows(t, grants, rate, interval); peak != rate {
		t.Errorf("busiest window held %d permits; want the rate %d (the load never reached the limit?)", peak, rate)
	}
	t.Logf("%d foreign and %d Go grants", foreign, ours)
}
