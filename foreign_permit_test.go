package redisson

// A test-only stand-in for Java Redisson's RPermitExpirableSemaphore as seen
// on the wire. Its Lua follows the step-by-step description in the
// wire-format reference (§1.4.8), paraphrased and sent with plain EVAL: it
// passes its own wall clock as "now", as Redisson does, and uses raw 16-byte
// permit ids. It shares no code with the library (its key names come from
// foreignPrefix and its own suffix rule), so that the interop tests check the
// library against the reference. No retries, no multi-permit calls.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const foreignPermitNoExpiry = 922337203685477

// tryAcquire(ids[], expiryAt): KEYS=[S, tz, ch];
// ARGV=[n, expiryAt, now, NONEXPIRING, PUB, id1..idn]. Returns 'OK' when
// acquired, ':' .. score of the nearest expiry, or nil.
const foreignPermitAcquireLua = `
local n = tonumber(ARGV[1])
local exp = redis.call('zrangebyscore', KEYS[2], 0, ARGV[3], 'limit', 0, n)
if #exp > 0 then
    redis.call('zrem', KEYS[2], unpack(exp))
    local v = redis.call('incrby', KEYS[1], #exp)
    if v > 0 then
        redis.call(ARGV[5], KEYS[3], v)
    end
end
local v = redis.call('get', KEYS[1])
if v ~= false and tonumber(v) >= n then
    redis.call('decrby', KEYS[1], n)
    for i = 6, #ARGV do
        redis.call('zadd', KEYS[2], ARGV[2], ARGV[i])
    end
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    return 'OK'
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[1] ~= nil and tonumber(first[2]) ~= tonumber(ARGV[4]) then
    return ':' .. first[2]
end
return nil`

// tryRelease(id): KEYS=[S, tz, ch]; ARGV=[id, now, PUB]. 1 released, 0
// unknown, released or expired.
const foreignPermitReleaseLua = `
local e = redis.call('zscore', KEYS[2], ARGV[1])
if redis.call('zrem', KEYS[2], ARGV[1]) ~= 1 then
    return 0
end
local v = redis.call('incrby', KEYS[1], 1)
redis.call(ARGV[3], KEYS[3], v)
if tonumber(e) <= tonumber(ARGV[2]) then
    return 0
end
return 1`

// foreignPermitSemaphore is one Java client's RPermitExpirableSemaphore.
// skew is added to its wall clock, to play a client whose clock is off.
type foreignPermitSemaphore struct {
	rdb  *redis.Client
	name string
	skew time.Duration
}

func (f *foreignPermitSemaphore) timeoutKey() string {
	if strings.Contains(f.name, "{") {
		return f.name + ":timeout"
	}
	return "{" + f.name + "}:timeout"
}

func (f *foreignPermitSemaphore) channel() string { return foreignPrefix("redisson_sc", f.name) }

func (f *foreignPermitSemaphore) keys() []string {
	return []string{f.name, f.timeoutKey(), f.channel()}
}

func (f *foreignPermitSemaphore) now() int64 { return time.Now().Add(f.skew).UnixMilli() }

// tryAcquire makes one attempt for one permit with leaseMs (0: never
// expires). It returns the raw id when acquired, else the nearest expiry
// score (0 when none expires).
func (f *foreignPermitSemaphore) tryAcquire(ctx context.Context, leaseMs int64) (id string, nearest int64, err error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	now := f.now()
	expiry := int64(foreignPermitNoExpiry)
	if leaseMs > 0 {
		expiry = now + leaseMs
	}
	res, err := f.rdb.Eval(ctx, foreignPermitAcquireLua, f.keys(),
		1, expiry, now, int64(foreignPermitNoExpiry), "publish", string(b[:])).Text()
	switch {
	case errors.Is(err, redis.Nil):
		return "", 0, nil
	case err != nil:
		return "", 0, err
	case res == "OK":
		return string(b[:]), 0, nil
	case strings.HasPrefix(res, ":"):
		n, err := strconv.ParseFloat(res[1:], 64)
		return "", int64(n), err
	}
	return "", 0, errors.New("foreign: tryAcquire returned " + res)
}

// tryRelease releases the permit with the raw id; true when it was held and
// not expired.
func (f *foreignPermitSemaphore) tryRelease(ctx context.Context, raw string) (bool, error) {
	n, err := f.rdb.Eval(ctx, foreignPermitReleaseLua, f.keys(), raw, f.now(), "publish").Int64()
	return n == 1, err
}

// acquire waits like Redisson's acquire(): try; if none is free, subscribe
// to the channel on a connection of its own, then loop: try again, and wait
// for a message or until the nearest expiry (no bound when none expires).
func (f *foreignPermitSemaphore) acquire(ctx context.Context, leaseMs int64) (string, error) {
	id, _, err := f.tryAcquire(ctx, leaseMs)
	if err != nil || id != "" {
		return id, err
	}
	ps := f.rdb.Subscribe(ctx, f.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return "", err
	}
	msgs := ps.Channel()
	for {
		id, nearest, err := f.tryAcquire(ctx, leaseMs)
		if err != nil || id != "" {
			return id, err
		}
		wait := int64(-1)
		if nearest > 0 {
			wait = max(nearest-f.now(), 0)
		}
		if err := waitMessage(ctx, msgs, wait); err != nil {
			return "", err
		}
	}
}

// foreignHex is how Redisson shows a raw permit id.
func foreignHex(raw string) string { return hex.EncodeToString([]byte(raw)) }

// ---------------------------------------------------------------------------
// Interop: the library's PermitExpirableSemaphore against the stand-in.

func mustForeignPermit(t *testing.T, ctx context.Context, f *foreignPermitSemaphore, leaseMs int64) string {
	t.Helper()
	id, nearest, err := f.tryAcquire(ctx, leaseMs)
	if err != nil || id == "" {
		t.Fatalf("foreign tryAcquire = %q, %d, %v; want a permit", id, nearest, err)
	}
	return id
}

// Go and foreign permits count against one pool; ids are interchangeable
// (Go shows the foreign raw bytes as hex and releases them, and the other
// way round); the foreign client sees the nearest Go expiry.
func TestPermitInteropSharedPool(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	f := &foreignPermitSemaphore{rdb: rdb, name: name}
	mustTrySetPermits(t, ctx, s, 3)

	goForever := mustTryAcquirePermit(t, ctx, s, 0, 0)
	foreign := mustForeignPermit(t, ctx, f, 0)
	before := serverMs(t, rdb)
	goLeased := mustTryAcquirePermit(t, ctx, s, 0, time.Minute)
	if id, _, err := s.TryAcquire(ctx, 0, 0); err != nil || id != "" {
		t.Fatalf("Go TryAcquire with the pool used up = %q, %v; want none", id, err)
	}
	id, nearest, err := f.tryAcquire(ctx, 0)
	if err != nil || id != "" {
		t.Fatalf("foreign tryAcquire with the pool used up = %q, %v; want none", id, err)
	}
	if float64(nearest) < before+60000 || float64(nearest) > serverMs(t, rdb)+60000 {
		t.Fatalf("foreign sees the nearest expiry at %d; want the Go permit's, server time + 60000 (%.0f)", nearest, before+60000)
	}
	mustAvailable(t, ctx, s, 0)
	ids, _ := heldPermits(t, rdb, name)
	want := []string{goForever, goLeased, foreignHex(foreign)}
	sort.Strings(want)
	if fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("held %v; want %v", ids, want)
	}

	if err := s.Release(ctx, foreignHex(foreign)); err != nil {
		t.Fatalf("Go Release of the foreign permit: %v", err)
	}
	raw, _ := hex.DecodeString(goForever)
	if ok, err := f.tryRelease(ctx, string(raw)); err != nil || !ok {
		t.Fatalf("foreign tryRelease of a Go permit = %v, %v; want true", ok, err)
	}
	if err := s.Release(ctx, goForever); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Go Release of a permit the foreign client released: %v; want ErrUnknownPermit", err)
	}
	if ok, err := f.tryRelease(ctx, foreign); err != nil || ok {
		t.Fatalf("foreign tryRelease of a permit Go released = %v, %v; want false", ok, err)
	}
	mustAvailable(t, ctx, s, 2)
}

// A foreign release wakes a Go waiter, and a Go release wakes a foreign one.
func TestPermitInteropReleaseWakes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	f := &foreignPermitSemaphore{rdb: sharedRedis(t), name: name}
	channel := prefixName("redisson_sc", name)
	mustTrySetPermits(t, ctx, s, 1)

	foreign := mustForeignPermit(t, ctx, f, 0)
	var goID string
	done := async(func() (err error) { goID, err = s.Acquire(ctx, 0); return err })
	waitSubscribers(t, rdb, channel, 1)
	stillBlocked(t, done, "Go Acquire")
	if ok, err := f.tryRelease(ctx, foreign); err != nil || !ok {
		t.Fatalf("foreign tryRelease = %v, %v", ok, err)
	}
	await(t, done, wakeBound, "Go waiter after the foreign release")

	var foreignID string
	done = async(func() (err error) { foreignID, err = f.acquire(ctx, 0); return err })
	// Two subscribers: the foreign waiter and the Go client's lingering one.
	waitSubscribers(t, rdb, channel, 2)
	stillBlocked(t, done, "foreign acquire")
	if err := s.Release(ctx, goID); err != nil {
		t.Fatal(err)
	}
	await(t, done, wakeBound, "foreign waiter after the Go release")
	if foreignID == "" {
		t.Fatal("foreign waiter returned no permit")
	}
	mustAvailable(t, ctx, s, 0)
}

// A permit whose lease ends comes back for the other side: a Go waiter
// wakes when a foreign permit's lease ends, and a foreign waiter (which
// schedules its wake-up from the script's nearest expiry) when a Go
// permit's does.
func TestPermitInteropLeaseEnd(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	f := &foreignPermitSemaphore{rdb: sharedRedis(t), name: name}
	mustTrySetPermits(t, ctx, s, 1)

	mustForeignPermit(t, ctx, f, 500)
	start := time.Now()
	if _, err := s.Acquire(ctx, 500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Go waiter acquired %v after a foreign 500ms lease began", d)
	}
	start = time.Now()
	if _, err := f.acquire(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("foreign waiter acquired %v after a Go 500ms lease began", d)
	}
	mustAvailable(t, ctx, s, 0)
}

// The interop consequence of our clock choice: Redisson decides expiry on
// its own clock. A foreign client whose clock runs 10s ahead of the server
// takes back a Go permit with a 5s lease at once; Go, on the server's clock,
// would have kept it.
func TestPermitInteropForeignClockAhead(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := permitName(t, rdb)
	s := c.GetPermitExpirableSemaphore(name)
	mustTrySetPermits(t, ctx, s, 1)
	id := mustTryAcquirePermit(t, ctx, s, 0, 5*time.Second)
	mustAvailable(t, ctx, s, 0) // Go: still held
	f := &foreignPermitSemaphore{rdb: rdb, name: name, skew: 10 * time.Second}
	mustForeignPermit(t, ctx, f, 0) // the skewed clock reclaimed the Go permit
	if err := s.Release(ctx, id); !errors.Is(err, ErrUnknownPermit) {
		t.Fatalf("Release of the reclaimed permit: %v; want ErrUnknownPermit", err)
	}
}
