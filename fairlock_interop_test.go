package redisson

// Interop tests of the fair lock (GetFairLock) against foreignFair, a
// test-only stand-in for Java Redisson's RFairLock as seen on the wire. Its
// Lua paraphrases the step-by-step description of RedissonFairLock in the
// wire-format reference (§1.4.2), sent with plain EVAL, with the client's
// wall clock as "now" and wait = Redisson's threadWaitTime (the tryLock wait,
// or fairLockWaitTimeout = 5 min for lock()). Like foreignLock and foreignRW
// it shares no code with the library (keys are built with foreignPrefix, not
// prefixName), so that the tests check the library against the reference,
// not against itself. It is test code: no watchdog, no retries.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
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
// The foreign fair lock.

// ffThreadWait is Redisson's fairLockWaitTimeout default: the wait of lock().
const ffThreadWait = 300000

// ffPollFloor bounds a re-poll after the acquire script answered 0 (the lock
// is free but another waiter is first). Redisson would wait 0 ms and spin;
// the stand-in sleeps this long instead, to spare a shared test machine.
const ffPollFloor = 20 * time.Millisecond

// foreignFair is one Java thread's view of an RFairLock: a client UUID and a
// thread id.
type foreignFair struct {
	rdb      *redis.Client
	uuid     string
	threadID int64
	name     string

	mu         sync.Mutex
	lastTTL    int64    // the ttl of lock's latest unsuccessful acquire
	leaseMs    int64    // internalLockLeaseTime: the lease of the last acquisition
	heard      []string // messages received on its own channel while blocked
	polls      int      // acquire script calls made by lock
	subscribed atomic.Int32
}

// newForeignFair returns the lock called name as seen by a thread of a new
// foreign client (a random UUID and a random thread id).
func newForeignFair(rdb *redis.Client, name string) *foreignFair {
	return &foreignFair{
		rdb:      rdb,
		uuid:     uuid.NewString(),
		threadID: 1000 + mrand.Int64N(1<<40),
		name:     name,
		leaseMs:  30000,
	}
}

// thread returns the same lock as seen by another thread of the same client.
func (f *foreignFair) thread() *foreignFair {
	g := newForeignFair(f.rdb, f.name)
	g.uuid = f.uuid
	for g.threadID == f.threadID {
		g.threadID = 1000 + mrand.Int64N(1<<40)
	}
	return g
}

func (f *foreignFair) me() string         { return f.uuid + ":" + strconv.FormatInt(f.threadID, 10) }
func (f *foreignFair) queue() string      { return foreignPrefix("redisson_lock_queue", f.name) }
func (f *foreignFair) timeouts() string   { return foreignPrefix("redisson_lock_timeout", f.name) }
func (f *foreignFair) chPrefix() string   { return foreignPrefix("redisson_lock__channel", f.name) }
func (f *foreignFair) ownChannel() string { return f.chPrefix() + ":" + f.me() }

// ffNow is the client's wall clock in ms, Redisson's "now".
func ffNow() int64 { return time.Now().UnixMilli() }

// The common prologue "purge stale": drop queue heads whose timeout passed.
// KEYS[2] = queue, KEYS[3] = timeouts; the caller sets local now.
const ffPurgeLua = `
while true do
    local head = redis.call('lindex', KEYS[2], 0)
    if head == false then
        break
    end
    local t = redis.call('zscore', KEYS[3], head)
    if t ~= false and tonumber(t) <= now then
        redis.call('zrem', KEYS[3], head)
        redis.call('lpop', KEYS[2])
    else
        break
    end
end
`

// Steps 2 and 3 of the acquire: take a free lock when nobody queues or ME is
// first (moving everyone's timeout up by -wait), or re-enter.
const ffTakeLua = `
if redis.call('exists', KEYS[1]) == 0 and (redis.call('exists', KEYS[2]) == 0 or redis.call('lindex', KEYS[2], 0) == ARGV[2]) then
    redis.call('lpop', KEYS[2])
    redis.call('zrem', KEYS[3], ARGV[2])
    local members = redis.call('zrange', KEYS[3], 0, -1)
    for i = 1, #members do
        redis.call('zincrby', KEYS[3], -tonumber(ARGV[3]), members[i])
    end
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
`

// Acquire, the TTL variant: KEYS=[L, queue, timeouts]; ARGV=[lease, ME,
// wait, now]. nil = acquired; else the ttl to wait (step 4: max(0, PTTL L)
// for a queued waiter; step 5: the ttl it enqueued with).
const ffAcquireLua = `local now = tonumber(ARGV[4])` + ffPurgeLua + ffTakeLua + `
if redis.call('zscore', KEYS[3], ARGV[2]) ~= false then
    return math.max(0, redis.call('pttl', KEYS[1]))
end
local last = redis.call('lindex', KEYS[2], -1)
local ttl
if last ~= false and last ~= ARGV[2] and redis.call('zscore', KEYS[3], last) ~= false then
    ttl = tonumber(redis.call('zscore', KEYS[3], last)) - now
else
    ttl = redis.call('pttl', KEYS[1])
end
local timeout = ttl + tonumber(ARGV[3]) + now
if redis.call('zadd', KEYS[3], timeout, ARGV[2]) == 1 then
    redis.call('rpush', KEYS[2], ARGV[2])
end
return ttl`

// Acquire, the tryLock-without-wait variant (EVAL_NULL_BOOLEAN): same
// arguments; nil = acquired, 1 = not acquired and not enqueued.
const ffTryLockLua = `local now = tonumber(ARGV[4])` + ffPurgeLua + ffTakeLua + `
return 1`

// acquireFailed: KEYS=[queue, timeouts]; ARGV=[ME, wait]. Everyone after ME
// moves up by -wait; ME leaves the queue.
const ffAcquireFailedLua = `
local q = redis.call('lrange', KEYS[1], 0, -1)
local pos = 0
for i = 1, #q do
    if q[i] == ARGV[1] then
        pos = i
        break
    end
end
if pos > 0 then
    for i = pos + 1, #q do
        redis.call('zincrby', KEYS[2], -tonumber(ARGV[2]), q[i])
    end
end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('lrem', KEYS[1], 0, ARGV[1])
return pos`

// unlock: KEYS=[L, queue, timeouts, channel prefix, latch]; ARGV=[0 (UNLOCK),
// lease, ME, now, PUB, latchTTL]. nil = not held by ME, 0 = holds remain,
// 1 = released (or L already gone) and 0 published to the head's channel.
const ffUnlockLua = `
local v = redis.call('get', KEYS[5])
if v then
    return tonumber(v)
end
local now = tonumber(ARGV[4])` + ffPurgeLua + `
if redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head then
        redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
    end
    redis.call('set', KEYS[5], 1, 'px', ARGV[6])
    return 1
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
local c = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if c > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[5], 0, 'px', ARGV[6])
    return 0
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[5], 1, 'px', ARGV[6])
local head = redis.call('lindex', KEYS[2], 0)
if head then
    redis.call(ARGV[5], KEYS[4] .. ':' .. head, ARGV[1])
end
return 1`

// forceUnlock: KEYS=[L, queue, timeouts, channel prefix]; ARGV=[now, PUB].
const ffForceUnlockLua = `local now = tonumber(ARGV[1])` + ffPurgeLua + `
if redis.call('del', KEYS[1]) == 1 then
    local head = redis.call('lindex', KEYS[2], 0)
    if head then
        redis.call(ARGV[2], KEYS[4] .. ':' .. head, 0)
    end
    return 1
end
return 0`

// acquire runs the TTL variant once: nil when held, else the ttl.
func (f *foreignFair) acquire(ctx context.Context, leaseMs, wait int64) (*int64, error) {
	ttl, err := fwTry(f.rdb.Eval(ctx, ffAcquireLua, []string{f.name, f.queue(), f.timeouts()},
		leaseMs, f.me(), wait, ffNow()))
	if err == nil && ttl == nil {
		f.mu.Lock()
		f.leaseMs = leaseMs
		f.mu.Unlock()
	}
	return ttl, err
}

// tryLock is Redisson's tryLock() without a wait: one attempt that never
// enqueues. Its step 2 moves everyone up by fairLockWaitTimeout.
func (f *foreignFair) tryLock(ctx context.Context, leaseMs int64) (bool, error) {
	res, err := f.rdb.Eval(ctx, ffTryLockLua, []string{f.name, f.queue(), f.timeouts()},
		leaseMs, f.me(), ffThreadWait, ffNow()).Int64()
	if errors.Is(err, redis.Nil) {
		f.mu.Lock()
		f.leaseMs = leaseMs
		f.mu.Unlock()
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if res != 1 {
		return false, fmt.Errorf("foreign fair tryLock returned %d", res)
	}
	return false, nil
}

// acquireFailed takes this thread out of the queue (with a bounded context
// of its own, as a clean-up); it returns ME's 1-based queue position, 0 when
// it was not queued.
func (f *foreignFair) acquireFailed(ctx context.Context, wait int64) (int64, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return f.rdb.Eval(cctx, ffAcquireFailedLua, []string{f.queue(), f.timeouts()}, f.me(), wait).Int64()
}

// lock waits like Redisson. waitMs == 0 is tryLock() (one attempt, no
// queue); waitMs > 0 is tryLock(waitMs) (wait = waitMs); waitMs < 0 is
// lock() (wait = fairLockWaitTimeout, no bound but ctx). It subscribes to
// its own channel on a connection of its own, then loops: acquire (which
// enqueues), and if not acquired wait for a message or the returned ttl
// (bounded by what is left of the wait; ttl < 0: no bound). Giving up runs
// acquireFailed.
func (f *foreignFair) lock(ctx context.Context, leaseMs, waitMs int64) (bool, error) {
	if waitMs == 0 {
		return f.tryLock(ctx, leaseMs)
	}
	wait := int64(ffThreadWait)
	var deadline time.Time
	if waitMs > 0 {
		wait = waitMs
		deadline = time.Now().Add(time.Duration(waitMs) * time.Millisecond)
	}
	ps := f.rdb.Subscribe(ctx, f.ownChannel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		return false, err
	}
	f.subscribed.Add(1)
	defer f.subscribed.Add(-1)
	msgs := ps.Channel()
	for {
		f.mu.Lock()
		f.polls++
		f.mu.Unlock()
		ttl, err := f.acquire(ctx, leaseMs, wait)
		if err != nil {
			f.acquireFailed(ctx, wait)
			return false, err
		}
		if ttl == nil {
			return true, nil
		}
		f.mu.Lock()
		f.lastTTL = *ttl
		f.mu.Unlock()
		bound := time.Duration(-1)
		switch {
		case *ttl > 0:
			bound = time.Duration(*ttl) * time.Millisecond
		case *ttl == 0:
			bound = ffPollFloor
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				_, err := f.acquireFailed(ctx, wait)
				return false, err
			}
			if bound < 0 || left < bound {
				bound = left
			}
		}
		var timeout <-chan time.Time
		var tm *time.Timer
		if bound >= 0 {
			tm = time.NewTimer(bound)
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
			f.acquireFailed(ctx, wait)
			return false, err
		}
	}
}

// unlock drops one hold: 1 when released, 0 when holds remain,
// errForeignNotHeld when this thread holds none.
func (f *foreignFair) unlock(ctx context.Context) (int64, error) {
	var id [16]byte
	_, _ = rand.Read(id[:])
	latch := foreignPrefix("redisson_unlock_latch", f.name) + ":" + hex.EncodeToString(id[:])
	f.mu.Lock()
	lease := f.leaseMs
	f.mu.Unlock()
	res, err := f.rdb.Eval(ctx, ffUnlockLua, []string{f.name, f.queue(), f.timeouts(), f.chPrefix(), latch},
		0, lease, f.me(), ffNow(), "publish", 60000).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, fmt.Errorf("%w by node id: %s thread-id: %d", errForeignNotHeld, f.uuid, f.threadID)
	}
	if err != nil {
		return 0, err
	}
	f.rdb.Del(ctx, latch) // Redisson deletes the latch once the unlock succeeded
	return res, nil
}

// forceUnlock deletes the lock whoever holds it; true when there was one.
func (f *foreignFair) forceUnlock(ctx context.Context) (bool, error) {
	n, err := f.rdb.Eval(ctx, ffForceUnlockLua, []string{f.name, f.queue(), f.timeouts(), f.chPrefix()},
		ffNow(), "publish").Int64()
	return n == 1, err
}

// messages returns what the thread heard on its own channel while blocked.
func (f *foreignFair) messages() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.heard...)
}

func (f *foreignFair) pollCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

// ---------------------------------------------------------------------------
// Test helpers.

// ffName returns a unique lock name whose keys, queue and timeout set
// included, are deleted when the test ends.
func ffName(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		rdb.Del(context.Background(), foreignPrefix("redisson_lock_queue", name),
			foreignPrefix("redisson_lock_timeout", name), name+":counter")
	})
	return name
}

// ffQueue returns LRANGE of the lock's queue.
func ffQueue(t *testing.T, rdb *redis.Client, name string) []string {
	t.Helper()
	q, err := rdb.LRange(context.Background(), foreignPrefix("redisson_lock_queue", name), 0, -1).Result()
	if err != nil {
		t.Fatalf("LRANGE queue: %v", err)
	}
	return q
}

// ffTimeouts returns ZRANGE WITHSCORES of the lock's timeout set.
func ffTimeouts(t *testing.T, rdb *redis.Client, name string) []redis.Z {
	t.Helper()
	z, err := rdb.ZRangeWithScores(context.Background(), foreignPrefix("redisson_lock_timeout", name), 0, -1).Result()
	if err != nil {
		t.Fatalf("ZRANGE timeouts: %v", err)
	}
	return z
}

// ffScore returns member's timeout (false when it has none).
func ffScore(t *testing.T, rdb *redis.Client, name, member string) (int64, bool) {
	t.Helper()
	s, err := rdb.ZScore(context.Background(), foreignPrefix("redisson_lock_timeout", name), member).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("ZSCORE: %v", err)
	}
	return int64(s), true
}

// ffNoQueue fails unless neither the queue nor the timeout set exists.
func ffNoQueue(t *testing.T, rdb *redis.Client, name, what string) {
	t.Helper()
	n := rdb.Exists(context.Background(), foreignPrefix("redisson_lock_queue", name),
		foreignPrefix("redisson_lock_timeout", name)).Val()
	if n != 0 {
		t.Fatalf("%s: queue %v, timeouts %v; want neither", what, ffQueue(t, rdb, name), ffTimeouts(t, rdb, name))
	}
}

// ffWantQueue fails unless the queue is exactly want and the timeout set
// holds exactly its members.
func ffWantQueue(t *testing.T, rdb *redis.Client, name string, want ...string) {
	t.Helper()
	q := ffQueue(t, rdb, name)
	if !slices.Equal(q, want) {
		t.Fatalf("queue = %v; want %v", q, want)
	}
	var members []string
	for _, z := range ffTimeouts(t, rdb, name) {
		members = append(members, z.Member.(string))
	}
	slices.Sort(members)
	w := slices.Clone(want)
	slices.Sort(w)
	if !slices.Equal(members, w) {
		t.Fatalf("timeout set members = %v; want %v", members, w)
	}
}

// ffWaitLen waits until the queue holds n waiters.
func ffWaitLen(t *testing.T, rdb *redis.Client, name string, n int64) {
	t.Helper()
	eventually(t, wakeBound, fmt.Sprintf("queue length %d", n), func() bool {
		return rdb.LLen(context.Background(), foreignPrefix("redisson_lock_queue", name)).Val() == n
	})
}

// ffServerNow returns the Redis server's clock in ms.
func ffServerNow(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	tm, err := rdb.Time(context.Background()).Result()
	if err != nil {
		t.Fatalf("TIME: %v", err)
	}
	return tm.UnixMilli()
}

// ffWantHash fails unless the lock hash is exactly {owner: count}.
func ffWantHash(t *testing.T, rdb *redis.Client, name, owner, count string) {
	t.Helper()
	h := rdb.HGetAll(context.Background(), name).Val()
	if len(h) != 1 || h[owner] != count {
		t.Fatalf("HGETALL %s = %v; want {%s: %s}", name, h, owner, count)
	}
}

// ffGoWaiter starts a Go waiter and returns its result and the moment it
// acquired.
func ffGoWaiter(ctx context.Context, l *Lock, wait, lease time.Duration, at *atomic.Int64) <-chan error {
	return async(func() error {
		ok, err := l.TryLock(ctx, wait, lease)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		if err == nil {
			at.Store(time.Now().UnixNano())
		}
		return err
	})
}

// ffForeignWaiter starts a foreign waiter and returns its result and the
// moment it acquired.
func ffForeignWaiter(ctx context.Context, f *foreignFair, leaseMs, waitMs int64, at *atomic.Int64) <-chan error {
	return async(func() error {
		ok, err := f.lock(ctx, leaseMs, waitMs)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		if err == nil {
			at.Store(time.Now().UnixNano())
		}
		return err
	})
}

func ffSince(at *atomic.Int64, t0 time.Time) time.Duration {
	return time.Unix(0, at.Load()).Sub(t0)
}

// slowWaiter is a Go client whose fair waiters re-poll only every 20s, so
// that a waiter acquiring within wakeBound was woken by a message.
var slowWaiter = &Options{FairWaiterTimeout: time.Minute}

// ---------------------------------------------------------------------------
// The stand-in itself.

// TestFairForeignSelf checks the stand-in against the reference's numbers
// (scenarios 6.3 #5 testAcquireFailedTimeoutDrift_Descrete and #6's
// no-queue tryLock): wait 5000, lease 30000.
func TestFairForeignSelf(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := ffName(t, rdb)
	holder := newForeignFair(rdb, name)
	w := []*foreignFair{holder.thread(), holder.thread(), holder.thread(), holder.thread()}
	const lease, wait = 30000, 5000

	if ok, err := holder.tryLock(ctx, lease); err != nil || !ok {
		t.Fatalf("holder tryLock = %v, %v", ok, err)
	}
	ffWantHash(t, rdb, name, holder.me(), "1")
	if ok, err := w[0].tryLock(ctx, lease); err != nil || ok {
		t.Fatalf("no-wait tryLock of a held lock = %v, %v; want false", ok, err)
	}
	ffNoQueue(t, rdb, name, "after a no-wait tryLock")
	near := func(what string, got *int64, want, tol int64) {
		t.Helper()
		if got == nil || *got < want-tol || *got > want+tol {
			t.Fatalf("%s = %v; want %d ± %d", what, ptrVal(got), want, tol)
		}
	}
	for i, f := range w {
		ttl, err := f.acquire(ctx, lease, wait)
		if err != nil {
			t.Fatal(err)
		}
		near(fmt.Sprintf("W%d first ttl", i+1), ttl, lease+int64(i)*wait, 100)
	}
	ffWantQueue(t, rdb, name, w[0].me(), w[1].me(), w[2].me(), w[3].me())
	if pos, err := w[1].acquireFailed(ctx, wait); err != nil || pos != 2 {
		t.Fatalf("acquireFailed(W2) = %d, %v; want position 2", pos, err)
	}
	ffWantQueue(t, rdb, name, w[0].me(), w[2].me(), w[3].me())
	for _, i := range []int{0, 2, 3} {
		ttl, err := w[i].acquire(ctx, lease, wait)
		if err != nil {
			t.Fatal(err)
		}
		near(fmt.Sprintf("W%d re-poll", i+1), ttl, lease, 100)
	}
	// The holder's unlock wakes W1 on its own channel only.
	spies := []func() []string{
		rwiSpy(t, rdb, w[0].ownChannel()), rwiSpy(t, rdb, w[2].ownChannel()), rwiSpy(t, rdb, holder.chPrefix()),
	}
	if n, err := holder.unlock(ctx); err != nil || n != 1 {
		t.Fatalf("holder unlock = %d, %v; want 1", n, err)
	}
	rwiHeard(t, spies[0], "0", "W1's channel")
	if ttl, err := w[0].acquire(ctx, lease, wait); err != nil || ttl != nil {
		t.Fatalf("W1 acquire after the unlock = %v, %v; want acquired", ptrVal(ttl), err)
	}
	for _, i := range []int{2, 3} {
		ttl, err := w[i].acquire(ctx, lease, wait)
		if err != nil {
			t.Fatal(err)
		}
		near(fmt.Sprintf("W%d re-poll after W1 took it", i+1), ttl, lease, 300)
	}
	if got := spies[1](); len(got) != 0 {
		t.Fatalf("W3 heard %v; only the head is woken", got)
	}
	if got := spies[2](); len(got) != 0 {
		t.Fatalf("the plain lock channel heard %v; a fair unlock publishes to the head only", got)
	}
	// W1 re-enters, unlocks twice; the second wakes W3.
	if ttl, err := w[0].acquire(ctx, lease, wait); err != nil || ttl != nil {
		t.Fatalf("W1 re-entry = %v, %v", ptrVal(ttl), err)
	}
	if n, err := w[0].unlock(ctx); err != nil || n != 0 {
		t.Fatalf("W1 unlock = %d, %v; want 0", n, err)
	}
	if _, err := w[2].unlock(ctx); !errors.Is(err, errForeignNotHeld) {
		t.Fatalf("W3 unlock of W1's lock: %v; want errForeignNotHeld", err)
	}
	if n, err := w[0].unlock(ctx); err != nil || n != 1 {
		t.Fatalf("W1 last unlock = %d, %v; want 1", n, err)
	}
	rwiHeard(t, spies[1], "0", "W3's channel")
	// forceUnlock of a free lock: 0; of a held one: 1.
	if ok, err := holder.forceUnlock(ctx); err != nil || ok {
		t.Fatalf("forceUnlock of a free lock = %v, %v", ok, err)
	}
	if ttl, err := w[2].acquire(ctx, lease, wait); err != nil || ttl != nil {
		t.Fatalf("W3 acquire = %v, %v", ptrVal(ttl), err)
	}
	if ok, err := holder.forceUnlock(ctx); err != nil || !ok {
		t.Fatalf("forceUnlock = %v, %v", ok, err)
	}
}

// ---------------------------------------------------------------------------
// Interop.

// Scenario 1: Go holds. A foreign no-wait tryLock fails and leaves no queue;
// a foreign waiter enqueues with timeout = PTTL + wait + now, subscribed to
// its own channel; Go's Unlock wakes it there, well before any lease.
func TestFairInteropGoUnlockWakesForeignWaiter(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := ffName(t, rdb)
	c := newClient(t, rdb, nil)
	holder := c.GetFairLock(name)
	t0 := ffNow()
	mustTryLock(t, ctx, holder, 0, 30*time.Second)

	f := newForeignFair(rdb, name)
	if ok, err := f.lock(ctx, 30000, 0); err != nil || ok {
		t.Fatalf("foreign tryLock() of a Go-held fair lock = %v, %v; want false", ok, err)
	}
	ffNoQueue(t, rdb, name, "after the foreign no-wait tryLock")
	ffWantHash(t, rdb, name, holder.Owner(), "1")

	const waitMs = 20000
	var at atomic.Int64
	done := ffForeignWaiter(ctx, f, 30000, waitMs, &at)
	ffWaitLen(t, rdb, name, 1)
	ffWantQueue(t, rdb, name, f.me())
	z := ffTimeouts(t, rdb, name)
	// timeout = ttl + wait + now with ttl = PTTL L: the lease's end + wait.
	if want, got := t0+30000+waitMs, int64(z[0].Score); got < want-2000 || got > want+2000 {
		t.Fatalf("foreign waiter's timeout %d is %+dms from lease end + wait", got, got-want)
	}
	if n := rdb.PubSubNumSub(ctx, f.ownChannel()).Val()[f.ownChannel()]; n != 1 {
		t.Fatalf("subscribers of the foreign waiter's own channel = %d; want 1", n)
	}
	time.Sleep(100 * time.Millisecond)
	stillBlocked(t, done, "foreign waiter")

	released := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Go Unlock: %v", err)
	}
	await(t, done, wakeBound, "foreign waiter after Go's Unlock")
	t.Logf("foreign waiter acquired %v after Go's Unlock (%d polls)", ffSince(&at, released), f.pollCount())
	if got := f.messages(); !slices.Equal(got, []string{"0"}) {
		t.Fatalf("foreign waiter heard %v on its own channel; want [0]", got)
	}
	ffWantHash(t, rdb, name, f.me(), "1")
	ffNoQueue(t, rdb, name, "after the foreign waiter acquired")
	if ok, err := c.GetFairLock(name).TryLock(ctx, 0, 0); err != nil || ok {
		t.Fatalf("Go TryLock(0) of the foreign-held lock = %v, %v", ok, err)
	}
	if n, err := f.unlock(ctx); err != nil || n != 1 {
		t.Fatalf("foreign unlock = %d, %v", n, err)
	}
}

// Scenario 2: the foreign client holds. Go's TryLock(0) fails without
// queueing; a Go waiter enqueues under its owner field with the server's
// now + FairWaiterTimeout; the foreign unlock publishes 0 to the Go waiter's
// channel and it acquires at once (its own re-poll is 20s away).
func TestFairInteropForeignUnlockWakesGoWaiter(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := ffName(t, rdb)
	c := newClient(t, rdb, slowWaiter)
	f := newForeignFair(rdb, name)
	if ok, err := f.lock(ctx, 30000, 0); err != nil || !ok {
		t.Fatalf("foreign tryLock() = %v, %v", ok, err)
	}
	if ok, err := c.GetFairLock(name).TryLock(ctx, 0, 0); err != nil || ok {
		t.Fatalf("Go TryLock(0) of a foreign-held fair lock = %v, %v; want false", ok, err)
	}
	ffNoQueue(t, rdb, name, "after Go's TryLock(0)")
	ffWantHash(t, rdb, name, f.me(), "1")

	g := c.GetFairLock(name)
	owner := g.Owner()
	spy := rwiSpy(t, rdb, f.chPrefix()+":"+owner)
	var at atomic.Int64
	done := ffGoWaiter(ctx, g, 25*time.Second, 30*time.Second, &at)
	ffWaitLen(t, rdb, name, 1)
	ffWantQueue(t, rdb, name, owner)
	now := ffServerNow(t, rdb)
	// Redisson's arithmetic for the deadline it reads: the holder's TTL
	// (30 s) plus the waiter's allowance, its TryLock wait (25 s); liveness
	// (ours) separately.
	if s, _ := ffScore(t, rdb, name, owner); s < now+45000 || s > now+56000 {
		t.Fatalf("Go waiter's Redisson deadline is now%+dms; want about now + 30s TTL + 25s wait", s-now)
	}
	alive := rdb.ZScore(ctx, prefixName("redisson_lock_alive", name), owner).Val()
	if alive < float64(now+55000) || alive > float64(now+61000) {
		t.Fatalf("Go waiter's liveness is now%+.0fms; want about now + FairWaiterTimeout (60s)", alive-float64(now))
	}
	if n := rdb.PubSubNumSub(ctx, f.chPrefix()+":"+owner).Val()[f.chPrefix()+":"+owner]; n < 2 {
		t.Fatalf("subscribers of the Go waiter's channel = %d; want the waiter and the spy", n)
	}
	time.Sleep(100 * time.Millisecond)
	stillBlocked(t, done, "Go waiter")

	released := time.Now()
	if n, err := f.unlock(ctx); err != nil || n != 1 {
		t.Fatalf("foreign unlock = %d, %v; want 1", n, err)
	}
	await(t, done, wakeBound, "Go waiter after the foreign unlock")
	t.Logf("Go waiter acquired %v after the foreign unlock", ffSince(&at, released))
	rwiHeard(t, spy, "0", "Go waiter's channel")
	ffWantHash(t, rdb, name, owner, "1")
	ffNoQueue(t, rdb, name, "after the Go waiter acquired")
	if ok, err := newForeignFair(rdb, name).lock(ctx, 30000, 0); err != nil || ok {
		t.Fatalf("foreign tryLock() of the Go-held lock = %v, %v", ok, err)
	}
	if err := g.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// fifoEvent is one acquisition in the FIFO test.
type fifoEvent struct {
	label string
	at    time.Duration // since the holder's release
}

// Scenario 3: a Go holder and a queue of alternating Go and foreign
// waiters, each queued before the next starts. The library promises
// exclusion, order among Go waiters, and that nobody starves; strict mixed
// order is measured and logged: a foreign acquisition moves every timeout
// up by its wait, which expires Go waiters (their deadline is only now +
// FairWaiterTimeout) and, through them, the foreign waiters queued behind
// them (a foreign waiter's timeout is its predecessor's plus its wait). The
// dropped Go waiters rejoin on their renewals, whose phases here follow the
// queue order (they queued within a few tens of ms, just before the
// release), so Go order holds in this test; it is not guaranteed in general
// (TestFairInteropGoOrderAfterForeignAcquire).
func TestFairInteropFIFO(t *testing.T) {
	for _, tc := range []struct {
		name   string
		waitMs int64 // the foreign waiters' wait: -1 = lock()
	}{
		{"ForeignTryLock30s", 30000},
		{"ForeignLock", -1},
	} {
		t.Run(tc.name, func(t *testing.T) { fairInteropFIFO(t, tc.waitMs) })
	}
}

func fairInteropFIFO(t *testing.T, waitMs int64) {
	const waiters = 6
	const hold = 50 * time.Millisecond
	const leaseMs = 5000 // bounds a dropped foreign waiter's sleep
	rdb := sharedRedis(t)
	ctx := testCtx(t, 2*time.Minute)
	name := ffName(t, rdb)
	gos := []*Client{newClient(t, rdb, nil), newClient(t, sharedRedis(t), nil)}
	fcs := []*foreignFair{newForeignFair(rdb, name), newForeignFair(sharedRedis(t), name)}
	holder := gos[0].GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 30*time.Second)

	var (
		mu     sync.Mutex
		events []fifoEvent
		inside atomic.Int32
		start  atomic.Int64 // the holder's release, unix ns
	)
	labels := map[string]string{} // owner field -> label
	critical := func(label string) error {
		if n := inside.Add(1); n != 1 {
			inside.Add(-1)
			return fmt.Errorf("%s: %d holders at once", label, n)
		}
		mu.Lock()
		events = append(events, fifoEvent{label, time.Since(time.Unix(0, start.Load()))})
		mu.Unlock()
		time.Sleep(hold)
		inside.Add(-1)
		return nil
	}
	var dones []<-chan error
	var want []string
	for i := 0; i < waiters; i++ {
		var label string
		if i%2 == 0 {
			label = fmt.Sprintf("G%d", i/2+1)
			l := gos[(i/2)%2].GetFairLock(name)
			labels[l.Owner()] = label
			dones = append(dones, async(func() error {
				ok, err := l.TryLock(ctx, 90*time.Second, leaseMs*time.Millisecond)
				if err == nil && !ok {
					err = errors.New("wait ran out")
				}
				if err != nil {
					return fmt.Errorf("%s: %w", label, err)
				}
				err = critical(label)
				if uerr := l.Unlock(ctx); err == nil {
					err = uerr
				}
				return err
			}))
		} else {
			label = fmt.Sprintf("F%d", i/2+1)
			f := fcs[(i/2)%2].thread()
			labels[f.me()] = label
			dones = append(dones, async(func() error {
				ok, err := f.lock(ctx, leaseMs, waitMs)
				if err == nil && !ok {
					err = errors.New("wait ran out")
				}
				if err != nil {
					return fmt.Errorf("%s: %w", label, err)
				}
				err = critical(label)
				if _, uerr := f.unlock(ctx); err == nil {
					err = uerr
				}
				return err
			}))
		}
		want = append(want, label)
		ffWaitLen(t, rdb, name, int64(i+1)) // queued before the next one starts
	}
	q := ffQueue(t, rdb, name)
	for i, field := range q {
		if labels[field] != want[i] {
			t.Fatalf("queue before the release: %v; want the start order %v", q, want)
		}
	}

	// Watch the queue change after the release, for the report.
	start.Store(time.Now().UnixNano())
	var snaps []string
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		last := ""
		for {
			q, _ := rdb.LRange(context.Background(), foreignPrefix("redisson_lock_queue", name), 0, -1).Result()
			var ls []string
			for _, f := range q {
				ls = append(ls, labels[f])
			}
			s := strings.Join(ls, " ")
			if s != last && len(snaps) < 60 {
				snaps = append(snaps, fmt.Sprintf("%6dms [%s]", time.Since(time.Unix(0, start.Load())).Milliseconds(), s))
				last = s
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()

	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("holder Unlock: %v", err)
	}
	for i, d := range dones {
		await(t, d, 90*time.Second, "waiter "+want[i])
	}
	close(stop)
	<-watched

	var got, goGot, fGot []string
	var report []string
	for _, e := range events {
		got = append(got, e.label)
		report = append(report, fmt.Sprintf("%s@%dms", e.label, e.at.Milliseconds()))
		if e.label[0] == 'G' {
			goGot = append(goGot, e.label)
		} else {
			fGot = append(fGot, e.label)
		}
	}
	mixed := slices.Equal(got, want)
	t.Logf("acquisitions: %s", strings.Join(report, " "))
	t.Logf("strict mixed order held: %v (want %v); foreign order %v", mixed, want, fGot)
	t.Logf("queue after the release:\n  %s", strings.Join(snaps, "\n  "))
	if len(got) != waiters {
		t.Fatalf("%d acquisitions; want %d", len(got), waiters)
	}
	if !slices.Equal(goGot, []string{"G1", "G2", "G3"}) {
		t.Errorf("Go waiters acquired in the order %v; want [G1 G2 G3] (full order %v)", goGot, got)
	}
}

// Scenario 4: 2 Go clients x 3 goroutines and 2 foreign clients x 3 threads
// increment a counter with a non-atomic GET and SET under the fair lock. The
// foreign threads use tryLock(2s) and try again when it runs out (lock()
// waiters can be stranded: see TestFairInteropForeignLockWaiterNotStranded).
func TestFairInteropMutualExclusion(t *testing.T) {
	const perWorker = 6
	const leaseMs = 5000
	const foreignWaitMs = 2000
	rdb := sharedRedis(t)
	ctx := testCtx(t, 3*time.Minute)
	name := ffName(t, rdb)
	counter := name + ":counter"
	var inside, maxInside atomic.Int32
	incr := func(rdb *redis.Client) error {
		n := inside.Add(1)
		defer inside.Add(-1)
		for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
		}
		v, err := rdb.Get(ctx, counter).Int()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		time.Sleep(time.Millisecond)
		return rdb.Set(ctx, counter, v+1, 0).Err()
	}
	begin := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	var goMax, fMax atomic.Int64
	var giveUps atomic.Int32
	note := func(m *atomic.Int64, d time.Duration) {
		for v := m.Load(); int64(d) > v && !m.CompareAndSwap(v, int64(d)); v = m.Load() {
		}
	}
	for ci := 0; ci < 2; ci++ {
		crdb := sharedRedis(t)
		c := newClient(t, crdb, nil)
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := c.GetFairLock(name)
				for i := 0; i < perWorker; i++ {
					t0 := time.Now()
					ok, err := l.TryLock(ctx, 2*time.Minute, leaseMs*time.Millisecond)
					if err == nil && !ok {
						err = errors.New("Go wait ran out")
					}
					if err != nil {
						errs <- err
						return
					}
					note(&goMax, time.Since(t0))
					err = incr(crdb)
					if uerr := l.Unlock(ctx); err == nil {
						err = uerr
					}
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		fc := newForeignFair(sharedRedis(t), name)
		for th := 0; th < 3; th++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f := fc.thread()
				for i := 0; i < perWorker; i++ {
					t0 := time.Now()
					for {
						ok, err := f.lock(ctx, leaseMs, foreignWaitMs)
						if err != nil {
							errs <- fmt.Errorf("foreign: %w", err)
							return
						}
						if ok {
							break
						}
						giveUps.Add(1)
					}
					note(&fMax, time.Since(t0))
					err := incr(f.rdb)
					if _, uerr := f.unlock(ctx); err == nil {
						err = uerr
					}
					if err != nil {
						errs <- fmt.Errorf("foreign: %w", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d increments in %v; longest wait: Go %v, foreign %v; foreign tryLock(2s) gave up %d times",
		12*perWorker, time.Since(begin), time.Duration(goMax.Load()), time.Duration(fMax.Load()), giveUps.Load())
	if m := maxInside.Load(); m != 1 {
		t.Errorf("%d holders at once", m)
	}
	if got, err := rdb.Get(context.Background(), counter).Int(); err != nil || got != 12*perWorker {
		t.Fatalf("counter = %d, %v; want %d", got, err, 12*perWorker)
	}
	ffNoQueue(t, rdb, name, "after the run")
}

// ffDump logs the lock's hash, queue and timeouts (relative to now).
func ffDump(t *testing.T, rdb *redis.Client, name string, labels map[string]string) {
	t.Helper()
	ctx := context.Background()
	now := ffNow()
	var q, z []string
	for _, f := range ffQueue(t, rdb, name) {
		q = append(q, labels[f])
	}
	for _, e := range ffTimeouts(t, rdb, name) {
		z = append(z, fmt.Sprintf("%s:now%+dms", labels[e.Member.(string)], int64(e.Score)-now))
	}
	var h []string
	for k, v := range rdb.HGetAll(ctx, name).Val() {
		h = append(h, labels[k]+"="+v)
	}
	t.Logf("hash %v, queue %v, timeouts %v", h, q, z)
}

// A Redisson lock() waiter that enqueues behind a Go waiter whose deadline
// a Redisson acquisition (step 2: ZINCRBY -wait, wait = 5 min for lock())
// moved into the past gets a negative ttl from step 5: it waits for a
// message with no bound (as Redisson's lock() does for ttl < 0), and its own
// timeout (ttl + wait + now: the Go waiter's original deadline, about now +
// FairWaiterTimeout) is expired by the next Redisson acquisition, so it is
// purged from the queue before its turn and nothing ever wakes it. The lock
// is then free and the queue empty, yet the waiter stays blocked. (The Go
// waiter re-polls every 20s here so that its deadline is not refreshed
// during the scenario; with the default FairWaiterTimeout the window is up
// to 1.7s, and the same happens in practice: 4 of 6 foreign lock() threads
// hung for good in a mixed counter run like TestFairInteropMutualExclusion.)
func TestFairInteropForeignLockWaiterNotStranded(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := ffName(t, rdb)
	holder := newClient(t, rdb, nil).GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 30*time.Second)
	f1, f2, f3 := newForeignFair(rdb, name), newForeignFair(sharedRedis(t), name), newForeignFair(sharedRedis(t), name)
	g := newClient(t, sharedRedis(t), slowWaiter).GetFairLock(name)
	labels := map[string]string{holder.Owner(): "H", g.Owner(): "G", f1.me(): "F1", f2.me(): "F2", f3.me(): "F3"}

	var at1, at2, at3 atomic.Int64
	d1 := ffForeignWaiter(ctx, f1, 30000, -1, &at1)
	ffWaitLen(t, rdb, name, 1)
	d2 := ffForeignWaiter(ctx, f2, 30000, -1, &at2)
	ffWaitLen(t, rdb, name, 2)
	gctx, gcancel := context.WithCancel(ctx)
	dg := async(func() error { // G takes its turn and lets go at once
		ok, err := g.TryLock(gctx, 50*time.Second, 30*time.Second)
		if err == nil && ok {
			time.Sleep(50 * time.Millisecond)
			err = g.Unlock(ctx)
		}
		return err
	})
	t.Cleanup(func() { gcancel(); <-dg })
	ffWaitLen(t, rdb, name, 3)
	ffWantQueue(t, rdb, name, f1.me(), f2.me(), g.Owner())

	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, d1, wakeBound, "F1 after the Go holder's Unlock")
	ffDump(t, rdb, name, labels) // G's deadline is now far in the past

	fctx, fcancel := context.WithCancel(ctx)
	defer fcancel()
	d3 := ffForeignWaiter(fctx, f3, 30000, -1, &at3)
	ffWaitLen(t, rdb, name, 3)
	time.Sleep(100 * time.Millisecond)
	ffDump(t, rdb, name, labels)
	f3.mu.Lock()
	ttl3 := f3.lastTTL
	f3.mu.Unlock()
	t.Logf("F3 enqueued behind G with ttl %dms", ttl3)

	if n, err := f1.unlock(ctx); err != nil || n != 1 {
		t.Fatalf("F1 unlock = %d, %v", n, err)
	}
	await(t, d2, wakeBound, "F2 after F1's unlock")
	time.Sleep(100 * time.Millisecond)
	ffDump(t, rdb, name, labels)
	released := time.Now()
	if n, err := f2.unlock(ctx); err != nil || n != 1 {
		t.Fatalf("F2 unlock = %d, %v", n, err)
	}
	// In queue order G then F3 are next; G holds for 50ms at most.
	select {
	case err := <-d3:
		if err != nil {
			t.Fatalf("F3: %v", err)
		}
		t.Logf("F3 acquired %v after F2's unlock", ffSince(&at3, released))
		if _, err := f3.unlock(ctx); err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		ffDump(t, rdb, name, labels)
		f3.mu.Lock()
		t.Logf("F3: %d polls, last ttl %dms, heard %v", f3.polls, f3.lastTTL, f3.heard)
		f3.mu.Unlock()
		fcancel()
		<-d3
		t.Fatalf("F3 (Redisson lock()) still blocked 10s after F2's unlock, with the lock free and the queue empty: stranded")
	}
}

// The library documents that order among Go waiters is unaffected by
// Redisson clients in the queue. A Redisson acquisition expires every Go
// waiter's deadline at once; each rejoins on its own renewal, so they come
// back in the order of their renewal phases, not their queue order. Here G2
// queues 1s before G3 and the foreign acquisition falls just after G2's
// renewal: G3 renews (and rejoins, or takes the free lock) first.
func TestFairInteropGoOrderAfterForeignAcquire(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := ffName(t, rdb)
	holder := newClient(t, rdb, nil).GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 30*time.Second)
	f1 := newForeignFair(rdb, name)
	c := newClient(t, sharedRedis(t), nil)
	beat := c.Options().FairWaiterTimeout / 3
	g2, g3 := c.GetFairLock(name), c.GetFairLock(name)
	labels := map[string]string{holder.Owner(): "H", f1.me(): "F1", g2.Owner(): "G2", g3.Owner(): "G3"}

	var mu sync.Mutex
	var order []string
	goWaiter := func(l *Lock, label string) <-chan error {
		return async(func() error {
			ok, err := l.TryLock(ctx, 50*time.Second, 5*time.Second)
			if err == nil && !ok {
				err = errors.New("wait ran out")
			}
			if err != nil {
				return fmt.Errorf("%s: %w", label, err)
			}
			mu.Lock()
			order = append(order, label)
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			return l.Unlock(ctx)
		})
	}
	var at1 atomic.Int64
	d1 := ffForeignWaiter(ctx, f1, 5000, -1, &at1)
	ffWaitLen(t, rdb, name, 1)
	t2 := time.Now()
	d2 := goWaiter(g2, "G2")
	ffWaitLen(t, rdb, name, 2)
	time.Sleep(time.Second - time.Since(t2))
	d3 := goWaiter(g3, "G3")
	ffWaitLen(t, rdb, name, 3)
	ffWantQueue(t, rdb, name, f1.me(), g2.Owner(), g3.Owner())
	// Release about 300ms after G2's renewal (G2's phase is t2, G3's about
	// t2 + 1s).
	time.Sleep(time.Until(t2.Add(beat + 300*time.Millisecond)))
	ffDump(t, rdb, name, labels)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, d1, wakeBound, "F1")
	ffDump(t, rdb, name, labels)
	if _, err := f1.unlock(ctx); err != nil {
		t.Fatal(err)
	}
	await(t, d2, 30*time.Second, "G2")
	await(t, d3, 30*time.Second, "G3")
	t.Logf("Go acquisition order %v", order)
	if !slices.Equal(order, []string{"G2", "G3"}) {
		t.Fatalf("Go waiters acquired in the order %v; want [G2 G3] (the queue order)", order)
	}
}

// Scenario 5: ForceUnlock from one side wakes the head waiter of the other.
func TestFairInteropForceUnlock(t *testing.T) {
	t.Run("GoForceWakesForeign", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, 30*time.Second)
		name := ffName(t, rdb)
		c := newClient(t, rdb, nil)
		holder := c.GetFairLock(name)
		mustTryLock(t, ctx, holder, 0, 30*time.Second)
		f := newForeignFair(rdb, name)
		var at atomic.Int64
		done := ffForeignWaiter(ctx, f, 30000, 20000, &at)
		ffWaitLen(t, rdb, name, 1)
		ffWantQueue(t, rdb, name, f.me())
		time.Sleep(100 * time.Millisecond)
		stillBlocked(t, done, "foreign waiter")

		forced := time.Now()
		if ok, err := newClient(t, sharedRedis(t), nil).GetFairLock(name).ForceUnlock(ctx); err != nil || !ok {
			t.Fatalf("Go ForceUnlock = %v, %v; want true", ok, err)
		}
		await(t, done, wakeBound, "foreign waiter after Go's ForceUnlock")
		t.Logf("foreign waiter acquired %v after Go's ForceUnlock", ffSince(&at, forced))
		if got := f.messages(); !slices.Equal(got, []string{"0"}) {
			t.Fatalf("foreign waiter heard %v; want [0]", got)
		}
		ffWantHash(t, rdb, name, f.me(), "1")
		ffNoQueue(t, rdb, name, "after the foreign waiter acquired")
		if err := holder.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
			t.Fatalf("the forced-out Go holder's Unlock = %v; want ErrNotHeld", err)
		}
		ffWantHash(t, rdb, name, f.me(), "1")
		if n, err := f.unlock(ctx); err != nil || n != 1 {
			t.Fatalf("foreign unlock = %d, %v", n, err)
		}
	})
	t.Run("ForeignForceWakesGo", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, 30*time.Second)
		name := ffName(t, rdb)
		c := newClient(t, rdb, slowWaiter)
		holder := newForeignFair(rdb, name)
		if ok, err := holder.lock(ctx, 30000, 0); err != nil || !ok {
			t.Fatalf("foreign tryLock() = %v, %v", ok, err)
		}
		g := c.GetFairLock(name)
		spy := rwiSpy(t, rdb, holder.chPrefix()+":"+g.Owner())
		var at atomic.Int64
		done := ffGoWaiter(ctx, g, 25*time.Second, 30*time.Second, &at)
		ffWaitLen(t, rdb, name, 1)
		ffWantQueue(t, rdb, name, g.Owner())
		time.Sleep(100 * time.Millisecond)
		stillBlocked(t, done, "Go waiter")

		forced := time.Now()
		if ok, err := newForeignFair(sharedRedis(t), name).forceUnlock(ctx); err != nil || !ok {
			t.Fatalf("foreign forceUnlock = %v, %v; want true", ok, err)
		}
		await(t, done, wakeBound, "Go waiter after the foreign forceUnlock")
		t.Logf("Go waiter acquired %v after the foreign forceUnlock", ffSince(&at, forced))
		rwiHeard(t, spy, "0", "Go waiter's channel")
		ffWantHash(t, rdb, name, g.Owner(), "1")
		ffNoQueue(t, rdb, name, "after the Go waiter acquired")
		if _, err := holder.unlock(ctx); !errors.Is(err, errForeignNotHeld) {
			t.Fatalf("the forced-out foreign holder's unlock = %v; want errForeignNotHeld", err)
		}
		if err := g.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// Scenario 6: a foreign waiter ahead of a Go waiter gives up (acquireFailed);
// the Go waiter behind it is not blocked.
func TestFairInteropForeignGivesUp(t *testing.T) {
	// tryLock(1.5s) runs out: acquireFailed moves the Go waiter's deadline
	// up by 1.5s, which it survives; the holder's unlock wakes it by message.
	t.Run("TryLockTimesOut", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, 30*time.Second)
		name := ffName(t, rdb)
		holder := newClient(t, rdb, nil).GetFairLock(name)
		mustTryLock(t, ctx, holder, 0, 30*time.Second)
		f := newForeignFair(rdb, name)
		const waitMs = 1500
		fdone := async(func() error {
			ok, err := f.lock(ctx, 30000, waitMs)
			if err == nil && ok {
				err = errors.New("foreign tryLock(1.5s) acquired a held lock")
			}
			return err
		})
		ffWaitLen(t, rdb, name, 1)
		g := newClient(t, sharedRedis(t), slowWaiter).GetFairLock(name)
		spy := rwiSpy(t, rdb, f.chPrefix()+":"+g.Owner())
		var at atomic.Int64
		done := ffGoWaiter(ctx, g, 25*time.Second, 30*time.Second, &at)
		ffWaitLen(t, rdb, name, 2)
		ffWantQueue(t, rdb, name, f.me(), g.Owner())
		before, _ := ffScore(t, rdb, name, g.Owner())

		await(t, fdone, wakeBound, "foreign tryLock(1.5s) giving up")
		ffWantQueue(t, rdb, name, g.Owner())
		after, _ := ffScore(t, rdb, name, g.Owner())
		if before-after != waitMs {
			t.Fatalf("acquireFailed moved the Go waiter's deadline by %dms; want %d", before-after, waitMs)
		}
		stillBlocked(t, done, "Go waiter")

		released := time.Now()
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		await(t, done, wakeBound, "Go waiter after the holder's Unlock")
		t.Logf("Go waiter acquired %v after the holder's Unlock", ffSince(&at, released))
		rwiHeard(t, spy, "0", "Go waiter's channel")
		ffNoQueue(t, rdb, name, "after the Go waiter acquired")
		if err := g.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
	// lock() interrupted: acquireFailed moves the Go waiter's deadline up by
	// five minutes, so it is dropped as expired (the documented caveat) and
	// rejoins on its next renewal: it is delayed by at most a third of
	// FairWaiterTimeout, not blocked.
	t.Run("LockInterrupted", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, 30*time.Second)
		name := ffName(t, rdb)
		holder := newClient(t, rdb, nil).GetFairLock(name)
		mustTryLock(t, ctx, holder, 0, 30*time.Second)
		f := newForeignFair(rdb, name)
		fctx, interrupt := context.WithCancel(ctx)
		defer interrupt()
		fdone := async(func() error {
			_, err := f.lock(fctx, 30000, -1)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return fmt.Errorf("interrupted foreign lock() = %v; want context.Canceled", err)
		})
		ffWaitLen(t, rdb, name, 1)
		c := newClient(t, sharedRedis(t), nil)
		g := c.GetFairLock(name)
		spy := rwiSpy(t, rdb, f.chPrefix()+":"+g.Owner())
		var at atomic.Int64
		done := ffGoWaiter(ctx, g, 25*time.Second, 30*time.Second, &at)
		ffWaitLen(t, rdb, name, 2)
		ffWantQueue(t, rdb, name, f.me(), g.Owner())

		interrupt()
		await(t, fdone, wakeBound, "foreign lock() interrupted")
		released := time.Now()
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		await(t, done, wakeBound, "Go waiter after the holder's Unlock")
		waited := ffSince(&at, released)
		t.Logf("Go waiter acquired %v after the holder's Unlock (woken by message: %v)", waited, len(spy()) > 0)
		if limit := c.Options().FairWaiterTimeout/3 + time.Second; waited > limit {
			t.Fatalf("Go waiter acquired %v after the unlock; want within %v", waited, limit)
		}
		ffNoQueue(t, rdb, name, "after the Go waiter acquired")
		if err := g.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
