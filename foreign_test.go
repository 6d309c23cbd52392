package redisson

// A test-only "foreign client": a stand-in for Java Redisson's RLock and
// RFencedLock, as seen on the wire. Its Lua follows the step-by-step
// description of Redisson's scripts in the wire-format reference (§1.4.1
// RLock, §1.4.5 RFencedLock), paraphrased and sent with plain EVAL. It
// deliberately shares no code with the library (not even prefixName), so
// that the interop tests check the library against the reference, not
// against itself. It is test code: no retries, no synced-replica WAIT, no
// watchdog.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// errForeignNotHeld stands for Java's IllegalMonitorStateException, thrown
// when a thread unlocks a lock it does not hold.
var errForeignNotHeld = errors.New("foreign: attempt to unlock lock, not locked by current thread")

// foreignClient plays one RedissonClient: one random UUID, and a thread id
// per lock handle (a handle is one Java thread).
type foreignClient struct {
	rdb     *redis.Client
	uuid    string
	threads atomic.Int64
}

func newForeignClient(rdb *redis.Client) *foreignClient {
	return &foreignClient{rdb: rdb, uuid: uuid.NewString()}
}

// getLock returns the lock called name as seen by a new Java thread.
func (fc *foreignClient) getLock(name string) *foreignLock {
	return &foreignLock{
		rdb:      fc.rdb,
		uuid:     fc.uuid,
		threadID: fc.threads.Add(1) + 100, // any long; Java thread ids are not small
		name:     name,
		leaseMs:  30000,
	}
}

// foreignLock is one Java thread's view of an RLock / RFencedLock.
type foreignLock struct {
	rdb      *redis.Client
	uuid     string
	threadID int64
	name     string
	leaseMs  int64 // internalLockLeaseTime: the lease of the last acquisition
}

// foreignPrefix is Redisson's prefixName: p + ":{" + name + "}", or
// p + ":" + name when name already contains '{'.
func foreignPrefix(p, name string) string {
	if strings.Contains(name, "{") {
		return p + ":" + name
	}
	return p + ":{" + name + "}"
}

func (f *foreignLock) me() string      { return f.uuid + ":" + strconv.FormatInt(f.threadID, 10) }
func (f *foreignLock) channel() string { return foreignPrefix("redisson_lock__channel", f.name) }
func (f *foreignLock) tokenKey() string {
	return foreignPrefix("redisson_lock_token", f.name)
}

// tryLockInner: KEYS=[L]; ARGV=[lease, ME]. nil = acquired, else PTTL of L.
const foreignTryLockLua = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return nil
end
return redis.call('pttl', KEYS[1])`

// RFencedLock's tryLockAndGetToken: KEYS=[L, token]; ARGV=[lease, ME].
// {-1, token} = acquired (the token is INCR'd on every acquisition, reentrant
// ones included), {pttl, -1} = held by another.
const foreignTryLockTokenLua = `
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
    redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {-1, redis.call('incr', KEYS[2])}
end
return {redis.call('pttl', KEYS[1]), -1}`

// unlockInner: KEYS=[L, ch, latch]; ARGV=[0, internalLockLeaseTime, ME, PUB, latchTTL].
// Returns the latched result of a retried call, nil when ME does not hold L,
// 0 when holds remain, 1 when L was deleted and 0 published.
const foreignUnlockLua = `
local v = redis.call('get', KEYS[3])
if v then
    return tonumber(v)
end
if redis.call('hexists', KEYS[1], ARGV[3]) == 0 then
    return nil
end
local c = redis.call('hincrby', KEYS[1], ARGV[3], -1)
if c > 0 then
    redis.call('pexpire', KEYS[1], ARGV[2])
    redis.call('set', KEYS[3], 0, 'px', ARGV[5])
    return 0
end
redis.call('del', KEYS[1])
redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[5])
return 1`

// forceUnlock: KEYS=[L, ch]; ARGV=[0].
const foreignForceUnlockLua = `
if redis.call('del', KEYS[1]) == 1 then
    redis.call('publish', KEYS[2], ARGV[1])
    return 1
end
return 0`

// tryLock makes one attempt. It returns nil when it holds the lock, else the
// holder's remaining lease in ms.
func (f *foreignLock) tryLock(ctx context.Context, leaseMs int64) (*int64, error) {
	ttl, err := f.rdb.Eval(ctx, foreignTryLockLua, []string{f.name}, leaseMs, f.me()).Int64()
	if errors.Is(err, redis.Nil) {
		f.leaseMs = leaseMs
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &ttl, nil
}

// tryLockAndGetToken makes one attempt and returns the script's pair:
// {-1, token} when held, {pttl, -1} when not.
func (f *foreignLock) tryLockAndGetToken(ctx context.Context, leaseMs int64) (pttl, token int64, err error) {
	res, err := f.rdb.Eval(ctx, foreignTryLockTokenLua, []string{f.name, f.tokenKey()}, leaseMs, f.me()).Int64Slice()
	if err != nil {
		return 0, 0, err
	}
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("foreign: tryLockAndGetToken returned %v", res)
	}
	if res[0] == -1 {
		f.leaseMs = leaseMs
	}
	return res[0], res[1], nil
}

// unlock drops one hold. It returns 1 when the lock was released, 0 when
// holds remain, and errForeignNotHeld when this thread holds none.
func (f *foreignLock) unlock(ctx context.Context) (*int64, error) {
	var id [16]byte
	_, _ = rand.Read(id[:])
	latch := foreignPrefix("redisson_unlock_latch", f.name) + ":" + hex.EncodeToString(id[:])
	latchTTL := int64(60000)
	res, err := f.rdb.Eval(ctx, foreignUnlockLua, []string{f.name, f.channel(), latch},
		0, f.leaseMs, f.me(), "publish", latchTTL).Int64()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w by node id: %s thread-id: %d", errForeignNotHeld, f.uuid, f.threadID)
	}
	if err != nil {
		return nil, err
	}
	f.rdb.Del(ctx, latch) // Redisson deletes the latch once the unlock succeeded
	return &res, nil
}

// forceUnlock deletes the lock whoever holds it; true when there was one.
func (f *foreignLock) forceUnlock(ctx context.Context) (bool, error) {
	n, err := f.rdb.Eval(ctx, foreignForceUnlockLua, []string{f.name, f.channel()}, 0).Int64()
	return n == 1, err
}

func (f *foreignLock) isLocked(ctx context.Context) (bool, error) {
	n, err := f.rdb.Exists(ctx, f.name).Result()
	return n == 1, err
}

func (f *foreignLock) isHeldByThread(ctx context.Context) (bool, error) {
	return f.rdb.HExists(ctx, f.name, f.me()).Result()
}

func (f *foreignLock) holdCount(ctx context.Context) (int64, error) {
	n, err := f.rdb.HGet(ctx, f.name, f.me()).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return n, err
}

// lock waits like Redisson's lock(): try; if held, subscribe to the lock's
// channel (on a connection of its own), then loop: try again, and if still
// held wait for a message for the holder's TTL (no bound when the key has no
// expiry) or until ctx ends.
func (f *foreignLock) lock(ctx context.Context, leaseMs int64) error {
	ttl, err := f.tryLock(ctx, leaseMs)
	if err != nil || ttl == nil {
		return err
	}
	ps := f.rdb.Subscribe(ctx, f.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscribe confirmation
		return err
	}
	msgs := ps.Channel()
	for {
		ttl, err := f.tryLock(ctx, leaseMs)
		if err != nil || ttl == nil {
			return err
		}
		if err := waitMessage(ctx, msgs, *ttl); err != nil {
			return err
		}
	}
}

// waitMessage waits for a message on msgs for ttlMs (no bound when ttlMs < 0).
func waitMessage(ctx context.Context, msgs <-chan *redis.Message, ttlMs int64) error {
	var timeout <-chan time.Time
	if ttlMs >= 0 {
		t := time.NewTimer(time.Duration(ttlMs) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-msgs: // an unlock message: try again
	case <-timeout:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
