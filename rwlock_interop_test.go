package redisson

// Interop tests of ReadWriteLock against foreignRW, a test-only stand-in for
// Java Redisson's RReadWriteLock as seen on the wire. foreignRW's Lua
// paraphrases the step-by-step description of RedissonReadLock and
// RedissonWriteLock in the wire-format reference (§1.4.3), sent with plain
// EVAL. Like foreignLock (foreign_test.go) it shares no code with the library
// (key names are built here, not with prefixName/suffixName), so that the
// tests check the library against the reference, not against itself. It is
// test code: no watchdog, no retries.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// ---------------------------------------------------------------------------
// The foreign read-write lock.

// foreignRW is one Java thread's view of an RReadWriteLock: a client UUID and
// a thread id. Its read and write sides share them, as in Redisson.
type foreignRW struct {
	rdb      *redis.Client
	uuid     string
	threadID int64
	name     string

	mu         sync.Mutex
	writeLease int64    // internalLockLeaseTime of the write side, ms
	heard      []string // messages received while blocked in readLock/writeLock
	subscribed atomic.Int32
}

// newForeignRW returns the lock called name as seen by a thread of a new
// foreign client (a random UUID and a random thread id).
func newForeignRW(rdb *redis.Client, name string) *foreignRW {
	return &foreignRW{
		rdb:        rdb,
		uuid:       uuid.NewString(),
		threadID:   1000 + mrand.Int64N(1<<40),
		name:       name,
		writeLease: 30000,
	}
}

// thread returns the same lock as seen by another thread of the same client.
func (f *foreignRW) thread() *foreignRW {
	g := newForeignRW(f.rdb, f.name)
	g.uuid = f.uuid
	for g.threadID == f.threadID {
		g.threadID = 1000 + mrand.Int64N(1<<40)
	}
	return g
}

// fwPrefix is Redisson's prefixName; fwSuffix its suffixName.
func fwPrefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

func fwSuffix(name, s string) string {
	if strings.Contains(name, "{") {
		return name + ":" + s
	}
	return "{" + name + "}:" + s
}

func (f *foreignRW) me() string      { return f.uuid + ":" + strconv.FormatInt(f.threadID, 10) }
func (f *foreignRW) writeMe() string { return f.me() + ":write" }
func (f *foreignRW) channel() string { return fwPrefix("redisson_rwlock", f.name) }

// timeoutPrefix is getReadWriteTimeoutNamePrefix: "{L}:<ME>:rwlock_timeout".
func (f *foreignRW) timeoutPrefix() string { return fwSuffix(f.name, f.me()+":rwlock_timeout") }

// keyPrefix is getKeyPrefix: the timeout prefix cut before ":<ME>" ("{L}").
func (f *foreignRW) keyPrefix() string {
	p, _, _ := strings.Cut(f.timeoutPrefix(), ":"+f.me())
	return p
}

// timeoutKey returns the read-hold timeout key of owner at level n.
func fwTimeoutKey(name, owner string, n int) string {
	return fwSuffix(name, owner+":rwlock_timeout:"+strconv.Itoa(n))
}

func (f *foreignRW) latch() string {
	var id [16]byte
	_, _ = rand.Read(id[:])
	return fwPrefix("redisson_unlock_latch", f.name) + ":" + hex.EncodeToString(id[:])
}

// Read acquire: KEYS=[L, timeoutPrefix]; ARGV=[lease, ME, ME:write].
// nil = acquired, else PTTL of L.
const fwReadAcquireLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1)
    redis.call('pexpire', KEYS[2] .. ':1', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[3]) == 1) then
    local n = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local key = KEYS[2] .. ':' .. n
    redis.call('set', key, 1)
    redis.call('pexpire', key, ARGV[1])
    local remain = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], math.max(remain, tonumber(ARGV[1])))
    return nil
end
return redis.call('pttl', KEYS[1])`

// Read unlock: KEYS=[L, ch, timeoutPrefix, keyPrefix, latch];
// ARGV=[0 (UNLOCK), ME, PUB, latchTTL]. nil = not held by ME, 0 = holds
// remain, 1 = L deleted and 0 published.
const fwReadUnlockLua = `
local v = redis.call('get', KEYS[5])
if v ~= false then
    return tonumber(v)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    redis.call('set', KEYS[5], 1, 'px', ARGV[4])
    return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 0 then
    return nil
end
local c = redis.call('hincrby', KEYS[1], ARGV[2], -1)
if c == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
redis.call('del', KEYS[3] .. ':' .. (c + 1))
if redis.call('hlen', KEYS[1]) > 1 then
    local maxRemain = -3
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local n = tonumber(redis.call('hget', KEYS[1], field))
        if type(n) == 'number' then
            for i = n, 1, -1 do
                local r = redis.call('pttl', KEYS[4] .. ':' .. field .. ':rwlock_timeout:' .. i)
                maxRemain = math.max(r, maxRemain)
            end
        end
    end
    if maxRemain > 0 then
        redis.call('pexpire', KEYS[1], maxRemain)
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
    if mode == 'write' then
        redis.call('set', KEYS[5], 0, 'px', ARGV[4])
        return 0
    end
end
redis.call('del', KEYS[1])
redis.call(ARGV[3], KEYS[2], ARGV[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[4])
return 1`

// Write acquire: KEYS=[L]; ARGV=[lease, ME:write]. nil = acquired, else PTTL.
const fwWriteAcquireLua = `
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'write')
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if mode == 'write' and redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local cur = redis.call('pttl', KEYS[1])
    redis.call('pexpire', KEYS[1], cur + tonumber(ARGV[1]))
    return nil
end
return redis.call('pttl', KEYS[1])`

// Write unlock: KEYS=[L, ch, latch]; ARGV=[1 (READ_UNLOCK), lease, ME:write,
// PUB, latchTTL]. nil = not held, 0 = holds remain, 1 = released (deleted
// with 1 published, or downgraded to read mode without a message).
const fwWriteUnlockLua = `
local v = redis.call('get', KEYS[3])
if v ~= false then
    return tonumber(v)
end
local mode = redis.call('hget', KEYS[1], 'mode')
if mode == false then
    redis.call(ARGV[4], KEYS[2], ARGV[1])
    redis.call('set', KEYS[3], 1, 'px', ARGV[5])
    return nil
end
if mode == 'write' then
    if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
        return nil
    end
    local c = redis.call('hincrby', KEYS[1], ARGV[3], -1)
    if c > 0 then
        redis.call('pexpire', KEYS[1], ARGV[2])
        redis.call('set', KEYS[3], 0, 'px', ARGV[5])
        return 0
    end
    redis.call('hdel', KEYS[1], ARGV[3])
    if redis.call('hlen', KEYS[1]) == 1 then
        redis.call('del', KEYS[1])
        redis.call(ARGV[4], KEYS[2], ARGV[1])
    else
        redis.call('hset', KEYS[1], 'mode', 'read')
    end
    redis.call('set', KEYS[3], 1, 'px', ARGV[5])
    return 1
end
return nil`

// forceUnlock: KEYS=[L, ch]; ARGV=[mode, message].
const fwForceUnlockLua = `
if redis.call('hget', KEYS[1], 'mode') == ARGV[1] then
    redis.call('del', KEYS[1])
    redis.call('publish', KEYS[2], ARGV[2])
    return 1
end
return 0`

// tryRead makes one read attempt: nil when held, else the holder's PTTL.
func (f *foreignRW) tryRead(ctx context.Context, leaseMs int64) (*int64, error) {
	return fwTry(f.rdb.Eval(ctx, fwReadAcquireLua, []string{f.name, f.timeoutPrefix()}, leaseMs, f.me(), f.writeMe()))
}

// tryWrite makes one write attempt: nil when held, else the holder's PTTL.
func (f *foreignRW) tryWrite(ctx context.Context, leaseMs int64) (*int64, error) {
	ttl, err := fwTry(f.rdb.Eval(ctx, fwWriteAcquireLua, []string{f.name}, leaseMs, f.writeMe()))
	if err == nil && ttl == nil {
		f.mu.Lock()
		f.writeLease = leaseMs
		f.mu.Unlock()
	}
	return ttl, err
}

func fwTry(cmd *redis.Cmd) (*int64, error) {
	ttl, err := cmd.Int64()
	if errors.Is(err, redis.Nil) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ttl, nil
}

// readUnlock drops one read hold: 1 when L was deleted, 0 when holds
// remain, errForeignNotHeld when this thread holds no read lock.
func (f *foreignRW) readUnlock(ctx context.Context) (int64, error) {
	latch := f.latch()
	return f.unlockResult(ctx, latch, f.rdb.Eval(ctx, fwReadUnlockLua,
		[]string{f.name, f.channel(), f.timeoutPrefix(), f.keyPrefix(), latch},
		0, f.me(), "publish", 60000))
}

// writeUnlock drops one write hold: 1 when released (deleted, or downgraded
// to read mode), 0 when holds remain, errForeignNotHeld when not held.
func (f *foreignRW) writeUnlock(ctx context.Context) (int64, error) {
	latch := f.latch()
	f.mu.Lock()
	lease := f.writeLease
	f.mu.Unlock()
	return f.unlockResult(ctx, latch, f.rdb.Eval(ctx, fwWriteUnlockLua,
		[]string{f.name, f.channel(), latch}, 1, lease, f.writeMe(), "publish", 60000))
}

func (f *foreignRW) unlockResult(ctx context.Context, latch string, cmd *redis.Cmd) (int64, error) {
	res, err := cmd.Int64()
	if errors.Is(err, redis.Nil) {
		f.rdb.Del(ctx, latch)
		return 0, fmt.Errorf("%w by node id: %s thread-id: %d", errForeignNotHeld, f.uuid, f.threadID)
	}
	if err != nil {
		return 0, err
	}
	f.rdb.Del(ctx, latch) // Redisson deletes the latch once the unlock succeeded
	return res, nil
}

// forceUnlock runs the read (mode "read", message 0) or write (mode
// "write", message 1) side's forceUnlock.
func (f *foreignRW) forceUnlock(ctx context.Context, mode string) (bool, error) {
	msg := 0
	if mode == "write" {
		msg = 1
	}
	n, err := f.rdb.Eval(ctx, fwForceUnlockLua, []string{f.name, f.channel()}, mode, msg).Int64()
	return n == 1, err
}

// readLock and writeLock wait like Redisson's lock(): try; if held,
// subscribe to the channel on a connection of their own, then loop: try
// again, and if still held wait for any message or the holder's TTL.
func (f *foreignRW) readLock(ctx context.Context, leaseMs int64) error {
	return f.lock(ctx, func() (*int64, error) { return f.tryRead(ctx, leaseMs) })
}

func (f *foreignRW) writeLock(ctx context.Context, leaseMs int64) error {
	return f.lock(ctx, func() (*int64, error) { return f.tryWrite(ctx, leaseMs) })
}

func (f *foreignRW) lock(ctx context.Context, try func() (*int64, error)) error {
	ttl, err := try()
	if err != nil || ttl == nil {
		return err
	}
	ps := f.rdb.Subscribe(ctx, f.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		return err
	}
	f.subscribed.Add(1)
	defer f.subscribed.Add(-1)
	msgs := ps.Channel()
	for {
		ttl, err := try()
		if err != nil || ttl == nil {
			return err
		}
		var timeout <-chan time.Time
		var tm *time.Timer
		if *ttl >= 0 {
			tm = time.NewTimer(time.Duration(*ttl) * time.Millisecond)
			timeout = tm.C
		}
		select {
		case m := <-msgs:
			f.mu.Lock()
			f.heard = append(f.heard, m.Payload)
			f.mu.Unlock()
		case <-timeout:
		case <-ctx.Done():
			err = ctx.Err()
		}
		if tm != nil {
			tm.Stop()
		}
		if err != nil {
			return err
		}
	}
}

// messages returns what the thread heard while blocked.
func (f *foreignRW) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.heard...)
}

// ---------------------------------------------------------------------------
// Test helpers.

// rwiName returns a unique lock name whose keys, the read-hold timeout keys
// "{name}:*" included, are deleted when the test ends.
func rwiName(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := rdb.Keys(ctx, rwiGlob(fwSuffix(name, ""))+"*").Result()
		if len(keys) > 0 {
			rdb.Del(ctx, keys...)
		}
	})
	return name
}

func rwiGlob(s string) string {
	return strings.NewReplacer("[", "\\[", "]", "\\]", "*", "\\*", "?", "\\?").Replace(s)
}

// rwiHash returns HGETALL of the lock.
func rwiHash(t *testing.T, rdb *redis.Client, name string) map[string]string {
	t.Helper()
	h, err := rdb.HGetAll(context.Background(), name).Result()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", name, err)
	}
	return h
}

// rwiWantHash fails unless the lock's hash is exactly want.
func rwiWantHash(t *testing.T, rdb *redis.Client, name string, want map[string]string) {
	t.Helper()
	got := rwiHash(t, rdb, name)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("HGETALL %s =\n  %v\nwant\n  %v", name, got, want)
	}
}

// rwiTimeoutKeys returns the read-hold timeout keys of the lock, sorted.
func rwiTimeoutKeys(t *testing.T, rdb *redis.Client, name string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), rwiGlob(fwSuffix(name, ""))+"*:rwlock_timeout:*").Result()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	sort.Strings(keys)
	return keys
}

// rwiWantTimeoutKeys fails unless the timeout keys are exactly want, each
// with a positive TTL of at most maxTTL.
func rwiWantTimeoutKeys(t *testing.T, rdb *redis.Client, name string, maxTTL time.Duration, want ...string) {
	t.Helper()
	sort.Strings(want)
	got := rwiTimeoutKeys(t, rdb, name)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("timeout keys =\n  %v\nwant\n  %v", got, want)
	}
	for _, k := range want {
		ttl := rdb.PTTL(context.Background(), k).Val()
		if ttl <= 0 || ttl > maxTTL {
			t.Fatalf("PTTL %s = %v, want in (0, %v]", k, ttl, maxTTL)
		}
	}
}

// rwiPTTL returns the lock hash's remaining TTL.
func rwiPTTL(t *testing.T, rdb *redis.Client, name string) time.Duration {
	t.Helper()
	return rdb.PTTL(context.Background(), name).Val()
}

// rwiSpy subscribes to channel on a connection of its own and records every
// message; it returns the recorder. The subscription ends with the test.
func rwiSpy(t *testing.T, rdb *redis.Client, channel string) func() []string {
	t.Helper()
	ctx := context.Background()
	ps := rdb.Subscribe(ctx, channel)
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatalf("spy SUBSCRIBE: %v", err)
	}
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ps.Channel() {
			mu.Lock()
			got = append(got, m.Payload)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() { ps.Close(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// rwiWaitNumSub waits until channel has at least n subscribers.
func rwiWaitNumSub(t *testing.T, rdb *redis.Client, channel string, n int64) {
	t.Helper()
	eventually(t, wakeBound, fmt.Sprintf("%d subscribers of %s", n, channel), func() bool {
		return rdb.PubSubNumSub(context.Background(), channel).Val()[channel] >= n
	})
	time.Sleep(150 * time.Millisecond) // from subscribed to waiting
}

// rwiHeard waits until recorder has recorded msg.
func rwiHeard(t *testing.T, recorder func() []string, msg, what string) {
	t.Helper()
	eventually(t, wakeBound, what+": message "+msg, func() bool {
		for _, m := range recorder() {
			if m == msg {
				return true
			}
		}
		return false
	})
}

func rwiTryRead(t *testing.T, ctx context.Context, f *foreignRW, leaseMs int64) {
	t.Helper()
	if ttl, err := f.tryRead(ctx, leaseMs); err != nil || ttl != nil {
		t.Fatalf("foreign tryRead = %v, %v; want acquired", ptrVal(ttl), err)
	}
}

func rwiTryWrite(t *testing.T, ctx context.Context, f *foreignRW, leaseMs int64) {
	t.Helper()
	if ttl, err := f.tryWrite(ctx, leaseMs); err != nil || ttl != nil {
		t.Fatalf("foreign tryWrite = %v, %v; want acquired", ptrVal(ttl), err)
	}
}

// rwiExcluded fails unless a foreign read (write == false) or write attempt
// is refused with a positive TTL.
func rwiExcluded(t *testing.T, ctx context.Context, f *foreignRW, write bool) {
	t.Helper()
	try, what := f.tryRead, "read"
	if write {
		try, what = f.tryWrite, "write"
	}
	if ttl, err := try(ctx, 30000); err != nil || ttl == nil || *ttl <= 0 {
		t.Fatalf("foreign try%s = %v, %v; want refused with a positive ttl", what, ptrVal(ttl), err)
	}
}

func rwiUnlock(t *testing.T, ctx context.Context, unlock func(context.Context) (int64, error), want int64, what string) {
	t.Helper()
	if n, err := unlock(ctx); err != nil || n != want {
		t.Fatalf("%s = %d, %v; want %d", what, n, err, want)
	}
}

// rwiGoRefused fails unless l refuses a single attempt.
func rwiGoRefused(t *testing.T, ctx context.Context, l *Lock, what string) {
	t.Helper()
	if ok, err := l.TryLock(ctx, 0, 0); ok || err != nil {
		t.Fatalf("%s TryLock = %v, %v; want false, nil", what, ok, err)
	}
}

func rwiGoUnlock(t *testing.T, ctx context.Context, l *Lock, what string) {
	t.Helper()
	if err := l.Unlock(ctx); err != nil {
		t.Fatalf("%s Unlock: %v", what, err)
	}
}

// ---------------------------------------------------------------------------
// The stand-in itself.

// TestRWForeignSelf checks foreignRW against the reference on its own: hash
// layout, timeout keys, reentrancy, sharing, exclusion, TTL recomputation,
// downgrade and the not-held errors.
func TestRWForeignSelf(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	a := newForeignRW(rdb, name)
	b := a.thread()
	other := newForeignRW(rdb, name)
	spy := rwiSpy(t, rdb, a.channel())
	if a.keyPrefix() != "{"+name+"}" {
		t.Fatalf("keyPrefix = %q", a.keyPrefix())
	}

	// Reentrant read + a reader of another client.
	rwiTryRead(t, ctx, a, 30000)
	rwiTryRead(t, ctx, a, 30000)
	rwiTryRead(t, ctx, other, 5000)
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", a.me(): "2", other.me(): "1"})
	rwiWantTimeoutKeys(t, rdb, name, 30*time.Second,
		fwTimeoutKey(name, a.me(), 1), fwTimeoutKey(name, a.me(), 2), fwTimeoutKey(name, other.me(), 1))
	rwiExcluded(t, ctx, b, true)
	if _, err := b.readUnlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("readUnlock by a non-reader: %v, want errForeignNotHeld", err)
	}
	if _, err := a.writeUnlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("writeUnlock in read mode: %v, want errForeignNotHeld", err)
	}
	// a lets go: the hash lives as long as other's 5 s hold.
	rwiUnlock(t, ctx, a.readUnlock, 0, "a readUnlock 1")
	rwiUnlock(t, ctx, a.readUnlock, 0, "a readUnlock 2")
	if ttl := rwiPTTL(t, rdb, name); ttl <= 0 || ttl > 5*time.Second {
		t.Fatalf("PTTL after a's unlocks = %v, want recomputed to other's <= 5s", ttl)
	}
	rwiWantTimeoutKeys(t, rdb, name, 5*time.Second, fwTimeoutKey(name, other.me(), 1))
	rwiUnlock(t, ctx, other.readUnlock, 1, "other readUnlock")
	if rdb.Exists(ctx, name).Val() != 0 || len(rwiTimeoutKeys(t, rdb, name)) != 0 {
		t.Fatal("keys left after the last read unlock")
	}
	rwiHeard(t, spy, "0", "last read unlock")

	// Writer, reentrant; the same thread may read; others are excluded.
	rwiTryWrite(t, ctx, a, 30000)
	rwiTryWrite(t, ctx, a, 30000)
	if ttl := rwiPTTL(t, rdb, name); ttl <= 30*time.Second {
		t.Fatalf("PTTL after a reentrant write = %v, want PTTL + lease (> 30s)", ttl)
	}
	rwiTryRead(t, ctx, a, 30000)
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", a.writeMe(): "2", a.me(): "1"})
	rwiExcluded(t, ctx, b, false)
	rwiExcluded(t, ctx, b, true)
	rwiExcluded(t, ctx, other, false)
	rwiUnlock(t, ctx, a.writeUnlock, 0, "writeUnlock 1")
	n := len(spy())
	rwiUnlock(t, ctx, a.writeUnlock, 1, "writeUnlock 2 (downgrade)")
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", a.me(): "1"})
	rwiTryRead(t, ctx, b, 30000) // downgraded: readers get in
	rwiUnlock(t, ctx, a.readUnlock, 0, "a readUnlock")
	rwiUnlock(t, ctx, b.readUnlock, 1, "b readUnlock")
	// Per the reference, a downgrade publishes nothing; the last read
	// unlock publishes 0.
	time.Sleep(100 * time.Millisecond)
	if got := spy()[n:]; fmt.Sprint(got) != "[0]" {
		t.Fatalf("messages after the downgrade: %v, want [0]", got)
	}
	rwiTryWrite(t, ctx, a, 30000)
	n = len(spy())
	rwiUnlock(t, ctx, a.writeUnlock, 1, "writeUnlock")
	rwiHeard(t, spy, "1", "write unlock")
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Fatal("lock left after the write unlock")
	}
	if _, err := a.readUnlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("readUnlock of a free lock: %v, want errForeignNotHeld", err)
	}
	if ok, err := a.forceUnlock(ctx, "read"); ok || err != nil {
		t.Fatalf("forceUnlock(read) of a free lock = %v, %v", ok, err)
	}
	if latches := rdb.Keys(ctx, rwiGlob(fwPrefix("redisson_unlock_latch", name))+":*").Val(); len(latches) != 0 {
		t.Fatalf("latches left behind: %v", latches)
	}
}

// ---------------------------------------------------------------------------
// Exclusion, both directions.

// A foreign writer excludes Go readers and Go writers; the Go side reads the
// foreign hash correctly; after the foreign unlock Go gets in.
func TestRWInteropForeignWriterExcludesGo(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	fw := newForeignRW(rdb, name)
	rwiTryWrite(t, ctx, fw, 30000)
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", fw.writeMe(): "1"})

	rw := c.GetReadWriteLock(name)
	rwiGoRefused(t, ctx, rw.ReadLock(), "Go reader")
	rwiGoRefused(t, ctx, rw.WriteLock(), "Go writer")
	start := time.Now()
	if ok, err := rw.ReadLock().TryLock(ctx, 300*time.Millisecond, 0); ok || err != nil {
		t.Fatalf("Go reader TryLock(300ms) = %v, %v; want false", ok, err)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Fatalf("Go reader gave up after %v, want about 300ms", d)
	}
	if ok, err := rw.WriteLock().IsLocked(ctx); !ok || err != nil {
		t.Fatalf("WriteLock().IsLocked = %v, %v; want true", ok, err)
	}
	if ok, err := rw.ReadLock().IsLocked(ctx); ok || err != nil {
		t.Fatalf("ReadLock().IsLocked = %v, %v; want false (writer only)", ok, err)
	}
	if d, err := rw.WriteLock().RemainingLease(ctx); err != nil || d <= 25*time.Second || d > 30*time.Second {
		t.Fatalf("RemainingLease = %v, %v; want the foreign 30s lease", d, err)
	}
	if err := rw.WriteLock().Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Go Unlock of a foreign write hold: %v, want ErrNotHeld", err)
	}
	if err := rw.ReadLock().Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("Go read Unlock under a foreign writer: %v, want ErrNotHeld", err)
	}
	// Nothing of the Go side's attempts is left in the hash.
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", fw.writeMe(): "1"})
	if keys := rwiTimeoutKeys(t, rdb, name); len(keys) != 0 {
		t.Fatalf("timeout keys after refused reads: %v", keys)
	}

	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
	mustTryLock(t, ctx, rw.ReadLock(), 0, 0)
	rwiGoUnlock(t, ctx, rw.ReadLock(), "Go reader")
	mustTryLock(t, ctx, rw.WriteLock(), 0, 0)
	rwiGoUnlock(t, ctx, rw.WriteLock(), "Go writer")
}

// A Go writer excludes foreign readers and writers (of another client, and
// another thread of a client that shares nothing with Go); the foreign side
// sees the Go layout "<client id>:<n>:write".
func TestRWInteropGoWriterExcludesForeign(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lease time.Duration
	}{
		{"watchdog", 0},
		{"lease", 20 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rdb := sharedRedis(t)
			c := newClient(t, rdb, nil)
			ctx := testCtx(t, 30*time.Second)
			name := rwiName(t, rdb)
			rw := c.GetReadWriteLock(name)
			mustTryLock(t, ctx, rw.WriteLock(), 0, tc.lease)
			owner := rw.WriteLock().Owner()
			// The read side is another owner: a write hold's owner reads
			// only through the write hold's context.
			if owner == rw.ReadLock().Owner() || !strings.HasPrefix(owner, c.ID()+":") {
				t.Fatalf("owners: write %q, read %q, client %q", owner, rw.ReadLock().Owner(), c.ID())
			}
			rwiWantHash(t, rdb, name, map[string]string{"mode": "write", owner + ":write": "1"})
			if ttl := rwiPTTL(t, rdb, name); ttl <= 15*time.Second || ttl > 30*time.Second {
				t.Fatalf("PTTL = %v", ttl)
			}

			fr, fw := newForeignRW(rdb, name), newForeignRW(rdb, name)
			rwiExcluded(t, ctx, fr, false)
			rwiExcluded(t, ctx, fw, true)
			rwiExcluded(t, ctx, fr.thread(), true)
			if _, err := fw.writeUnlock(ctx); !errors.Is(err, errForeignNotHeld) {
				t.Fatalf("foreign writeUnlock of a Go hold: %v, want errForeignNotHeld", err)
			}
			if _, err := fr.readUnlock(ctx); !errors.Is(err, errForeignNotHeld) {
				t.Fatalf("foreign readUnlock under a Go writer: %v, want errForeignNotHeld", err)
			}
			rwiWantHash(t, rdb, name, map[string]string{"mode": "write", owner + ":write": "1"})

			rwiGoUnlock(t, ctx, rw.WriteLock(), "Go writer")
			if rdb.Exists(ctx, name).Val() != 0 {
				t.Fatal("lock left after the Go write unlock")
			}
			rwiTryRead(t, ctx, fr, 30000)
			rwiGoRefused(t, ctx, rw.WriteLock(), "Go writer under a foreign reader")
			rwiUnlock(t, ctx, fr.readUnlock, 1, "foreign readUnlock")
		})
	}
}

// Go readers (on two clients, one reentrant) and foreign readers (one
// reentrant) share the lock; the layout has every reader's field and timeout
// key; together they exclude a writer on either side until the last one
// leaves; each side's unlock recomputes the hash TTL from the other side's
// timeout keys.
func TestRWInteropReadersShare(t *testing.T) {
	rdb := sharedRedis(t)
	c1, c2 := newClient(t, rdb, nil), newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	g1, g2 := c1.GetReadWriteLock(name), c2.GetReadWriteLock(name)
	f1, f2 := newForeignRW(rdb, name), newForeignRW(rdb, name)

	mustTryLock(t, ctx, g1.ReadLock(), 0, 0) // watchdog: 30 s
	rwiTryRead(t, ctx, f1, 30000)
	mustTryLock(t, ctx, g1.ReadLock(), 0, 0) // reentrant
	rwiTryRead(t, ctx, f1, 30000)            // reentrant
	mustTryLock(t, ctx, g2.ReadLock(), 0, 20*time.Second)
	rwiTryRead(t, ctx, f2, 10000)
	o1, o2 := g1.ReadLock().Owner(), g2.ReadLock().Owner()
	rwiWantHash(t, rdb, name, map[string]string{
		"mode": "read", o1: "2", o2: "1", f1.me(): "2", f2.me(): "1",
	})
	rwiWantTimeoutKeys(t, rdb, name, 30*time.Second,
		"{"+name+"}:"+o1+":rwlock_timeout:1", "{"+name+"}:"+o1+":rwlock_timeout:2",
		"{"+name+"}:"+o2+":rwlock_timeout:1",
		fwTimeoutKey(name, f1.me(), 1), fwTimeoutKey(name, f1.me(), 2),
		fwTimeoutKey(name, f2.me(), 1))
	if n, err := g1.ReadLock().HoldCount(ctx); n != 2 || err != nil {
		t.Fatalf("Go HoldCount = %d, %v; want 2", n, err)
	}
	if ok, err := g2.ReadLock().IsLocked(ctx); !ok || err != nil {
		t.Fatalf("ReadLock().IsLocked = %v, %v", ok, err)
	}

	// Writers on both sides are excluded, whoever of the readers remains.
	gw := c2.GetReadWriteLock(name)
	fw := newForeignRW(rdb, name)
	excluded := func(stage string) {
		t.Helper()
		rwiGoRefused(t, ctx, gw.WriteLock(), stage+": Go writer")
		rwiExcluded(t, ctx, fw, true)
	}
	excluded("all readers")

	// The foreign reader with the longest lease leaves: the hash TTL falls
	// to the longest remaining hold, found among Go's timeout keys (g1's
	// watchdog 30 s) by the foreign script.
	rwiUnlock(t, ctx, f1.readUnlock, 0, "f1 readUnlock 1")
	rwiUnlock(t, ctx, f1.readUnlock, 0, "f1 readUnlock 2")
	excluded("after f1")
	// g1 (30 s) leaves: the library recomputes from g2 (20 s) and f2 (10 s).
	rwiGoUnlock(t, ctx, g1.ReadLock(), "g1 1")
	rwiGoUnlock(t, ctx, g1.ReadLock(), "g1 2")
	if ttl := rwiPTTL(t, rdb, name); ttl <= 15*time.Second || ttl > 20*time.Second {
		t.Fatalf("PTTL after g1 left = %v, want recomputed to g2's 20s lease", ttl)
	}
	excluded("after g1")
	// g2 (20 s) leaves: the library finds f2's key (10 s).
	rwiGoUnlock(t, ctx, g2.ReadLock(), "g2")
	if ttl := rwiPTTL(t, rdb, name); ttl <= 5*time.Second || ttl > 10*time.Second {
		t.Fatalf("PTTL after g2 left = %v, want recomputed to f2's 10s lease", ttl)
	}
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", f2.me(): "1"})
	rwiWantTimeoutKeys(t, rdb, name, 10*time.Second, fwTimeoutKey(name, f2.me(), 1))
	excluded("after g2")
	// A Go reader can still join the foreign one.
	g3 := c1.GetReadWriteLock(name)
	mustTryLock(t, ctx, g3.ReadLock(), 0, 0)
	rwiUnlock(t, ctx, f2.readUnlock, 0, "f2 readUnlock")
	// The foreign unlock kept the hash for g3's watchdog hold.
	if ttl := rwiPTTL(t, rdb, name); ttl <= 15*time.Second {
		t.Fatalf("PTTL after f2 left = %v, want g3's 30s watchdog lease", ttl)
	}
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", g3.ReadLock().Owner(): "1"})
	excluded("g3 alone")
	rwiGoUnlock(t, ctx, g3.ReadLock(), "g3")
	if rdb.Exists(ctx, name).Val() != 0 || len(rwiTimeoutKeys(t, rdb, name)) != 0 {
		t.Fatalf("keys left after the last reader: hash %v, timeouts %v", rwiHash(t, rdb, name), rwiTimeoutKeys(t, rdb, name))
	}
	mustTryLock(t, ctx, gw.WriteLock(), 0, 0)
	rwiExcluded(t, ctx, fw, true)
	rwiGoUnlock(t, ctx, gw.WriteLock(), "Go writer")
	rwiTryWrite(t, ctx, fw, 30000)
	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
}

// A Go reader whose hold only a foreign reader's unlock can keep alive: the
// foreign script must find the Go timeout key, or it would delete the lock
// under the Go reader.
func TestRWInteropForeignUnlockKeepsGoReader(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	g := c.GetReadWriteLock(name)
	f := newForeignRW(rdb, name)
	spy := rwiSpy(t, rdb, f.channel())
	rwiTryRead(t, ctx, f, 40000)
	mustTryLock(t, ctx, g.ReadLock(), 0, 20*time.Second)
	if ttl := rwiPTTL(t, rdb, name); ttl <= 35*time.Second {
		t.Fatalf("PTTL = %v, want the foreign 40s lease (max of both)", ttl)
	}
	rwiUnlock(t, ctx, f.readUnlock, 0, "foreign readUnlock")
	if ttl := rwiPTTL(t, rdb, name); ttl <= 15*time.Second || ttl > 20*time.Second {
		t.Fatalf("PTTL after the foreign unlock = %v, want the Go reader's 20s", ttl)
	}
	if held, err := g.ReadLock().IsHeld(ctx); !held || err != nil {
		t.Fatalf("Go IsHeld = %v, %v", held, err)
	}
	time.Sleep(100 * time.Millisecond)
	if m := spy(); len(m) != 0 {
		t.Fatalf("messages while a reader remains: %v", m)
	}
	rwiGoUnlock(t, ctx, g.ReadLock(), "Go reader")
	rwiHeard(t, spy, "0", "Go's last read unlock")
	if g.ReadLock().Err() != ErrNotHeld {
		t.Fatalf("Err after Unlock = %v", g.ReadLock().Err())
	}
}

// ---------------------------------------------------------------------------
// Wake-ups across the two sides.

// Go readers (three, on two clients) blocked by a foreign writer are all
// woken by the foreign write unlock's message 1, long before its 30 s lease.
func TestRWInteropGoReadersWokenByForeignWriteUnlock(t *testing.T) {
	rdb := sharedRedis(t)
	c1, c2 := newClient(t, rdb, nil), newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	fw := newForeignRW(rdb, name)
	spy := rwiSpy(t, rdb, fw.channel())
	rwiTryWrite(t, ctx, fw, 30000)

	readers := []*ReadWriteLock{c1.GetReadWriteLock(name), c1.GetReadWriteLock(name), c2.GetReadWriteLock(name)}
	var got [3]atomic.Int64 // when Lock returned, unix ns
	var chans []<-chan error
	for i, r := range readers {
		chans = append(chans, async(func() error {
			if err := r.ReadLock().Lock(ctx); err != nil {
				return err
			}
			got[i].Store(time.Now().UnixNano())
			return nil
		}))
	}
	rwiWaitNumSub(t, rdb, fw.channel(), 3) // the spy and both Go clients
	time.Sleep(200 * time.Millisecond)
	for i, ch := range chans {
		stillBlocked(t, ch, fmt.Sprintf("Go reader %d", i))
	}
	t0 := time.Now()
	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
	for i, ch := range chans {
		await(t, ch, wakeBound, fmt.Sprintf("Go reader %d", i))
	}
	for i := range got {
		if d := time.Duration(got[i].Load() - t0.UnixNano()); d > wakeBound {
			t.Errorf("Go reader %d woke %v after the unlock", i, d)
		} else {
			t.Logf("Go reader %d woke %v after the unlock", i, d.Round(time.Millisecond))
		}
	}
	rwiHeard(t, spy, "1", "foreign write unlock")
	want := map[string]string{"mode": "read"}
	for _, r := range readers {
		want[r.ReadLock().Owner()] = "1"
	}
	rwiWantHash(t, rdb, name, want)
	rwiExcluded(t, ctx, fw, true)
	for i, r := range readers {
		rwiGoUnlock(t, ctx, r.ReadLock(), fmt.Sprintf("Go reader %d", i))
	}
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Fatal("lock left after the readers")
	}
}

// A foreign writer blocked by Go readers (two clients) is woken by the last
// Go reader's unlock (message 0), not by the first's, and well before the
// readers' 30 s watchdog lease.
func TestRWInteropForeignWriterWokenByLastGoReader(t *testing.T) {
	rdb := sharedRedis(t)
	c1, c2 := newClient(t, rdb, nil), newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	g1, g2 := c1.GetReadWriteLock(name), c2.GetReadWriteLock(name)
	mustTryLock(t, ctx, g1.ReadLock(), 0, 0)
	mustTryLock(t, ctx, g2.ReadLock(), 0, 0)
	fw := newForeignRW(rdb, name)
	var gotAt atomic.Int64
	done := async(func() error {
		if err := fw.writeLock(ctx, 30000); err != nil {
			return err
		}
		gotAt.Store(time.Now().UnixNano())
		return nil
	})
	eventually(t, wakeBound, "foreign writer subscribed", func() bool { return fw.subscribed.Load() == 1 })
	time.Sleep(150 * time.Millisecond)

	rwiGoUnlock(t, ctx, g1.ReadLock(), "g1")
	time.Sleep(300 * time.Millisecond)
	stillBlocked(t, done, "foreign writer after the first Go reader left")
	if m := fw.messages(); len(m) != 0 {
		t.Fatalf("foreign writer heard %v while a Go reader remained", m)
	}
	t0 := time.Now()
	rwiGoUnlock(t, ctx, g2.ReadLock(), "g2")
	await(t, done, wakeBound, "foreign writer")
	d := time.Duration(gotAt.Load() - t0.UnixNano())
	t.Logf("foreign writer woke %v after the last Go read unlock; heard %v", d.Round(time.Millisecond), fw.messages())
	if d > wakeBound {
		t.Fatalf("foreign writer woke %v after the unlock", d)
	}
	if m := fw.messages(); len(m) == 0 || m[len(m)-1] != "0" {
		t.Fatalf("foreign writer heard %v, want the unlock message 0 last", m)
	}
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", fw.writeMe(): "1"})
	rwiGoRefused(t, ctx, g1.ReadLock(), "Go reader under the foreign writer")
	rwiGoRefused(t, ctx, g2.WriteLock(), "Go writer under the foreign writer")
	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
}

// A Go writer blocked by a foreign reader is woken by the foreign read
// unlock (message 0); a foreign writer blocked by a Go writer is woken by
// the Go write unlock (message 1).
func TestRWInteropWritersWokenAcross(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	fr := newForeignRW(rdb, name)
	spy := rwiSpy(t, rdb, fr.channel())
	rwiTryRead(t, ctx, fr, 30000)
	gw := c.GetReadWriteLock(name)
	var gotAt atomic.Int64
	done := async(func() error {
		if err := gw.WriteLock().Lock(ctx); err != nil {
			return err
		}
		gotAt.Store(time.Now().UnixNano())
		return nil
	})
	rwiWaitNumSub(t, rdb, fr.channel(), 2)
	stillBlocked(t, done, "Go writer")
	t0 := time.Now()
	rwiUnlock(t, ctx, fr.readUnlock, 1, "foreign readUnlock")
	await(t, done, wakeBound, "Go writer")
	if d := time.Duration(gotAt.Load() - t0.UnixNano()); d > wakeBound {
		t.Fatalf("Go writer woke %v after the foreign read unlock", d)
	} else {
		t.Logf("Go writer woke %v after the foreign read unlock", d.Round(time.Millisecond))
	}
	rwiHeard(t, spy, "0", "foreign read unlock")
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", gw.WriteLock().Owner() + ":write": "1"})

	// Now a foreign writer and a foreign reader wait for the Go writer.
	fw := newForeignRW(rdb, name)
	fr2 := newForeignRW(rdb, name)
	wDone := async(func() error { return fw.writeLock(ctx, 30000) })
	eventually(t, wakeBound, "foreign writer subscribed", func() bool { return fw.subscribed.Load() == 1 })
	time.Sleep(150 * time.Millisecond)
	stillBlocked(t, wDone, "foreign writer")
	t0 = time.Now()
	rwiGoUnlock(t, ctx, gw.WriteLock(), "Go writer")
	await(t, wDone, wakeBound, "foreign writer")
	t.Logf("foreign writer woke %v after the Go write unlock; heard %v", time.Since(t0).Round(time.Millisecond), fw.messages())
	if m := fw.messages(); len(m) == 0 || m[len(m)-1] != "1" {
		t.Fatalf("foreign writer heard %v, want the read-unlock message 1 last", m)
	}
	rwiExcluded(t, ctx, fr2, false)
	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
}

// Foreign readers (two threads of one client, one of another) blocked by a
// Go writer are all woken by its unlock.
func TestRWInteropForeignReadersWokenByGoWriteUnlock(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	gw := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, gw.WriteLock(), 0, 0)
	f1 := newForeignRW(rdb, name)
	frs := []*foreignRW{f1, f1.thread(), newForeignRW(rdb, name)}
	var chans []<-chan error
	for _, f := range frs {
		chans = append(chans, async(func() error { return f.readLock(ctx, 30000) }))
	}
	eventually(t, wakeBound, "foreign readers subscribed", func() bool {
		for _, f := range frs {
			if f.subscribed.Load() != 1 {
				return false
			}
		}
		return true
	})
	time.Sleep(150 * time.Millisecond)
	for i, ch := range chans {
		stillBlocked(t, ch, fmt.Sprintf("foreign reader %d", i))
	}
	rwiGoUnlock(t, ctx, gw.WriteLock(), "Go writer")
	for i, ch := range chans {
		await(t, ch, wakeBound, fmt.Sprintf("foreign reader %d", i))
	}
	want := map[string]string{"mode": "read"}
	for _, f := range frs {
		want[f.me()] = "1"
	}
	rwiWantHash(t, rdb, name, want)
	rwiGoRefused(t, ctx, gw.WriteLock(), "Go writer under foreign readers")
	for i, f := range frs {
		want := int64(0)
		if i == len(frs)-1 {
			want = 1
		}
		rwiUnlock(t, ctx, f.readUnlock, want, fmt.Sprintf("foreign reader %d readUnlock", i))
	}
}

// ---------------------------------------------------------------------------
// Downgrade.

// A Go owner holding the write lock takes the read lock (layout: mode write,
// "<o>:write", "<o>", and the timeout key), then releases the write lock:
// the lock is downgraded to read mode and a foreign reader blocked meanwhile
// gets in at once; foreign writers stay out until the Go read unlock.
func TestRWInteropGoDowngradeLetsForeignReadersIn(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 60*time.Second)
	name := rwiName(t, rdb)
	g := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, g.WriteLock(), 0, 0)
	mustTryLock(t, holdCtx(t, ctx, g.WriteLock()), g.ReadLock(), 0, 0) // the writer reads
	o := g.WriteLock().Owner()
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", o + ":write": "1", o: "1"})
	rwiWantTimeoutKeys(t, rdb, name, 30*time.Second, fwTimeoutKey(name, o, 1))
	if ok, err := g.ReadLock().IsLocked(ctx); !ok || err != nil {
		t.Fatalf("ReadLock().IsLocked under write+read = %v, %v", ok, err)
	}

	fr := newForeignRW(rdb, name)
	rwiExcluded(t, ctx, fr, false)
	var gotAt atomic.Int64
	done := async(func() error {
		if err := fr.readLock(ctx, 30000); err != nil {
			return err
		}
		gotAt.Store(time.Now().UnixNano())
		return nil
	})
	eventually(t, wakeBound, "foreign reader subscribed", func() bool { return fr.subscribed.Load() == 1 })
	time.Sleep(150 * time.Millisecond)
	stillBlocked(t, done, "foreign reader")

	t0 := time.Now()
	rwiGoUnlock(t, ctx, g.WriteLock(), "Go write (downgrade)")
	await(t, done, wakeBound, "foreign reader after the downgrade")
	t.Logf("foreign reader got in %v after the downgrade; heard %v",
		time.Duration(gotAt.Load()-t0.UnixNano()).Round(time.Millisecond), fr.messages())
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", o: "1", fr.me(): "1"})
	rwiWantTimeoutKeys(t, rdb, name, 30*time.Second, fwTimeoutKey(name, o, 1), fwTimeoutKey(name, fr.me(), 1))
	fw := newForeignRW(rdb, name)
	rwiExcluded(t, ctx, fw, true)
	rwiGoRefused(t, ctx, g.WriteLock(), "Go re-write while reading (no upgrade)")
	rwiGoUnlock(t, ctx, g.ReadLock(), "Go read")
	rwiExcluded(t, ctx, fw, true)
	rwiUnlock(t, ctx, fr.readUnlock, 1, "foreign readUnlock")
	rwiTryWrite(t, ctx, fw, 30000)
	rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
}

// A foreign thread's downgrade (write, read, write unlock) is seen by Go as
// read mode: Go readers get in, Go writers stay out.
func TestRWInteropForeignDowngradeLetsGoReadersIn(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	f := newForeignRW(rdb, name)
	rwiTryWrite(t, ctx, f, 30000)
	rwiTryRead(t, ctx, f, 30000)
	rwiWantHash(t, rdb, name, map[string]string{"mode": "write", f.writeMe(): "1", f.me(): "1"})
	g := c.GetReadWriteLock(name)
	rwiGoRefused(t, ctx, g.ReadLock(), "Go reader before the downgrade")
	if ok, err := g.ReadLock().IsLocked(ctx); !ok || err != nil {
		t.Fatalf("ReadLock().IsLocked under foreign write+read = %v, %v", ok, err)
	}
	rwiUnlock(t, ctx, f.writeUnlock, 1, "foreign writeUnlock (downgrade)")
	mustTryLock(t, ctx, g.ReadLock(), 0, 0)
	rwiWantHash(t, rdb, name, map[string]string{"mode": "read", f.me(): "1", g.ReadLock().Owner(): "1"})
	rwiGoRefused(t, ctx, c.GetReadWriteLock(name).WriteLock(), "Go writer after the downgrade")
	// The foreign read unlock keeps the hash for the Go watchdog hold.
	rwiUnlock(t, ctx, f.readUnlock, 0, "foreign readUnlock")
	if ttl := rwiPTTL(t, rdb, name); ttl <= 15*time.Second {
		t.Fatalf("PTTL = %v, want the Go reader's watchdog lease", ttl)
	}
	rwiGoUnlock(t, ctx, g.ReadLock(), "Go reader")
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Fatal("lock left")
	}
}

// ---------------------------------------------------------------------------
// Force unlock and lost holds across the sides.

func TestRWInteropForceUnlockAcross(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	g := c.GetReadWriteLock(name)

	// Go force-unlocks a foreign writer only from the write side.
	f := newForeignRW(rdb, name)
	rwiTryWrite(t, ctx, f, 30000)
	if ok, err := g.ReadLock().ForceUnlock(ctx); ok || err != nil {
		t.Fatalf("ReadLock().ForceUnlock of a foreign writer = %v, %v; want false", ok, err)
	}
	if ok, err := g.WriteLock().ForceUnlock(ctx); !ok || err != nil {
		t.Fatalf("WriteLock().ForceUnlock of a foreign writer = %v, %v; want true", ok, err)
	}
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Fatal("lock left after ForceUnlock")
	}

	// A foreign forceUnlock of a Go read hold: the Go watchdog finds the
	// hold gone and reports it lost.
	mustTryLock(t, ctx, g.ReadLock(), 0, 0)
	if ok, err := f.forceUnlock(ctx, "write"); ok || err != nil {
		t.Fatalf("foreign write forceUnlock of a read lock = %v, %v; want false", ok, err)
	}
	if ok, err := f.forceUnlock(ctx, "read"); !ok || err != nil {
		t.Fatalf("foreign read forceUnlock = %v, %v; want true", ok, err)
	}
	select {
	case <-g.ReadLock().Done():
	case <-time.After(wakeBound):
		t.Fatal("Go read hold not reported lost after a foreign forceUnlock")
	}
	if err := g.ReadLock().Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Err = %v, want ErrLeaseLost", err)
	}
	if err := g.ReadLock().Unlock(ctx); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("Unlock after loss: %v, want ErrLeaseLost", err)
	}
	// The foreign side now takes the write lock and Go is excluded.
	rwiTryWrite(t, ctx, f, 30000)
	rwiGoRefused(t, ctx, c.GetReadWriteLock(name).ReadLock(), "Go reader")
	rwiUnlock(t, ctx, f.writeUnlock, 1, "foreign writeUnlock")
}

// ---------------------------------------------------------------------------
// Mixed load.

// Two Go clients and two foreign threads take the read or the write lock at
// random for a while; a writer never overlaps anyone, readers do overlap.
func TestRWInteropMixedExclusion(t *testing.T) {
	rdb := sharedRedis(t)
	cs := []*Client{newClient(t, rdb, nil), newClient(t, rdb, nil)}
	ctx := testCtx(t, 90*time.Second)
	name := rwiName(t, rdb)
	var readers, writers, maxReaders, violations, reads, writes atomic.Int64
	enter := func(write bool) {
		if write {
			if writers.Add(1) != 1 || readers.Load() != 0 {
				violations.Add(1)
			}
			writes.Add(1)
			return
		}
		n := readers.Add(1)
		if writers.Load() != 0 {
			violations.Add(1)
		}
		for m := maxReaders.Load(); n > m && !maxReaders.CompareAndSwap(m, n); m = maxReaders.Load() {
		}
		reads.Add(1)
	}
	leave := func(write bool) {
		if write {
			writers.Add(-1)
		} else {
			readers.Add(-1)
		}
	}
	const dur = 2 * time.Second
	stop := time.Now().Add(dur)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(i), 7))
			var f *foreignRW
			if i >= 2 {
				f = newForeignRW(rdb, name)
			}
			for time.Now().Before(stop) {
				write := rng.IntN(4) == 0
				hold := time.Duration(rng.IntN(3)) * time.Millisecond
				var err error
				if f == nil {
					rw := cs[i].GetReadWriteLock(name)
					l := rw.ReadLock()
					if write {
						l = rw.WriteLock()
					}
					if err = l.Lock(ctx); err == nil {
						enter(write)
						time.Sleep(hold)
						leave(write)
						err = l.Unlock(ctx)
					}
				} else {
					lock, unlock := f.readLock, f.readUnlock
					if write {
						lock, unlock = f.writeLock, f.writeUnlock
					}
					if err = lock(ctx, 5000); err == nil {
						enter(write)
						time.Sleep(hold)
						leave(write)
						_, err = unlock(ctx)
					}
				}
				if err != nil {
					errs <- fmt.Errorf("worker %d (write %v): %w", i, write, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d reads, %d writes, up to %d readers at once", reads.Load(), writes.Load(), maxReaders.Load())
	if n := violations.Load(); n > 0 {
		t.Fatalf("exclusion violated %d times", n)
	}
	if reads.Load() == 0 || writes.Load() == 0 {
		t.Fatalf("%d reads, %d writes: want both", reads.Load(), writes.Load())
	}
	if rdb.Exists(ctx, name).Val() != 0 {
		t.Fatalf("lock left: %v", rwiHash(t, rdb, name))
	}
}

// ---------------------------------------------------------------------------
// Regression tests for two bugs this suite found (both fixed).

// After the write side lost a hold, its next write hold (under a new owner
// number, as every acquisition) can still read under its own write lock:
// the read goes through the write hold's context, so it takes the write
// hold's owner, whatever owner the read side had.
func TestRWInteropOwnerSharedAfterLostHold(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := rwiName(t, rdb)
	g := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, g.WriteLock(), 0, 300*time.Millisecond)
	select {
	case <-g.WriteLock().Done():
	case <-time.After(wakeBound):
		t.Fatal("300ms write lease not reported lost")
	}
	eventually(t, wakeBound, "lease expired in Redis", func() bool { return rdb.Exists(ctx, name).Val() == 0 })
	mustTryLock(t, ctx, g.WriteLock(), 0, 0)
	defer g.WriteLock().Unlock(ctx)
	wctx := holdCtx(t, ctx, g.WriteLock())
	ok, err := g.ReadLock().TryLock(wctx, 0, 0)
	if ok {
		defer g.ReadLock().Unlock(wctx)
	}
	if got := rdb.HGet(ctx, name, g.WriteLock().Owner()).Val(); ok && got != "1" {
		t.Errorf("read field of the write hold's owner = %q; want 1 (hash %v)", got, rwiHash(t, rdb, name))
	}
	if !ok || err != nil {
		t.Fatalf("ReadLock().TryLock under the owner's own write lock = %v, %v; want true (hash %v)",
			ok, err, rwiHash(t, rdb, name))
	}
}

// rwiLateHook delays one watchdog renewal of a write hold (the first armed
// one that comes more than late/4 after the previous renewal) until late
// after the previous renewal was sent: after the watchdog gave the hold up
// (lease - lease/20) but before its lease ran out in Redis.
type rwiLateHook struct {
	sha   string
	late  time.Duration
	armed atomic.Bool
	mu    sync.Mutex
	last  time.Time
	sent  chan time.Time // when the delayed renewal was sent
}

func (h *rwiLateHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *rwiLateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *rwiLateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		renew := false
		for _, c := range cmds {
			if a := c.Args(); len(a) > 1 && c.Name() == "evalsha" && a[1] == h.sha {
				renew = true
			}
		}
		if !renew {
			return next(ctx, cmds)
		}
		h.mu.Lock()
		prev := h.last
		h.last = time.Now()
		h.mu.Unlock()
		// (A NOSCRIPT retry follows its first attempt at once: not armed.)
		if !prev.IsZero() && time.Since(prev) > h.late/4 && h.armed.CompareAndSwap(true, false) {
			time.Sleep(time.Until(prev.Add(h.late)))
			h.sent <- time.Now()
			return next(context.WithoutCancel(ctx), cmds)
		}
		return next(ctx, cmds)
	}
}

// A write hold whose watchdog renewal reached Redis after the watchdog had
// given it up: the watchdog then drops the stale field with lockKind.drop,
// which for the write side is the plain lock's lock_drop_owner
// (lockkind.go writeLock.drop = scriptLockDrop). On a read-write hash it
// HDELs "<owner>:write" but, the "mode" field remaining, neither deletes the
// hash nor publishes: a phantom {mode: write} with no owner, its TTL just
// renewed to WatchdogTimeout, blocks every reader and writer, Go or Java,
// until it expires. The stale write hold should release the lock as a write
// unlock does (delete, or downgrade, and publish 1).
func TestRWInteropLateRenewalLeavesNoPhantomWriter(t *testing.T) {
	const T = 4 * time.Second
	for attempt := 1; ; attempt++ {
		rdb := sharedRedis(t)
		hook := &rwiLateHook{sha: writeLock.renew.SHA(), late: T * 39 / 40, sent: make(chan time.Time, 1)}
		rdb.AddHook(hook)
		c := newClient(t, rdb, &Options{WatchdogTimeout: T})
		ctx := testCtx(t, 60*time.Second)
		name := rwiName(t, rdb)
		g := c.GetReadWriteLock(name)
		mustTryLock(t, ctx, g.WriteLock(), 0, 0)
		hook.armed.Store(true)
		var sent time.Time
		select {
		case sent = <-hook.sent:
		case <-time.After(3 * T):
			t.Fatal("no renewal was delayed")
		}
		var lostBefore bool
		select {
		case <-g.WriteLock().Done():
			lostBefore = true
		default:
		}
		if !lostBefore {
			// The watchdog had not given the hold up yet (a slow machine):
			// no stale field; try again.
			g.WriteLock().Unlock(ctx)
			if attempt == 3 {
				t.Fatal("could not time the late renewal in 3 attempts (machine too slow for a 4s watchdog?)")
			}
			continue
		}
		// The lock is no longer held by anyone: a foreign writer must get it
		// well before the phantom's renewed TTL (T) would run out.
		fw := newForeignRW(rdb, name)
		deadline := time.Now().Add(T / 2)
		for {
			ttl, err := fw.tryWrite(ctx, 30000)
			if err != nil {
				t.Fatal(err)
			}
			if ttl == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%v after the late renewal the lock is still taken: hash %v, PTTL %v; Go hold: %v",
					time.Since(sent).Round(time.Millisecond), rwiHash(t, rdb, name), rwiPTTL(t, rdb, name), g.WriteLock().Err())
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("foreign writer got in %v after the late renewal", time.Since(sent).Round(time.Millisecond))
		rwiUnlock(t, ctx, fw.writeUnlock, 1, "foreign writeUnlock")
		return
	}
}
