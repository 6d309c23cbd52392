package redisson

// Test-only stand-ins for Java Redisson's RSemaphore and RCountDownLatch, as
// seen on the wire. Their Lua follows the wire-format reference (§1.4.7
// RSemaphore, §1.4.9 RCountDownLatch), paraphrased and sent with plain EVAL;
// they share no code with the library (the channel names are spelled out
// here), so that interop tests check the library against the reference.
// Like Redisson, they wait for messages with no bound but the caller's
// context. The interop tests at the end of the file prove the library's
// Semaphore and CountDownLatch against them, both ways.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// foreignSemaphore is one Java process's view of an RSemaphore.
type foreignSemaphore struct {
	rdb  *redis.Client
	name string
}

func newForeignSemaphore(rdb *redis.Client, name string) *foreignSemaphore {
	return &foreignSemaphore{rdb: rdb, name: name}
}

func (f *foreignSemaphore) channel() string { return foreignPrefix("redisson_sc", f.name) }

// tryAcquire(n): KEYS=[S]; ARGV=[n]. 1 = taken.
const foreignSemTryAcquireLua = `
local v = redis.call('get', KEYS[1])
if v ~= false and tonumber(v) >= tonumber(ARGV[1]) then
    redis.call('decrby', KEYS[1], ARGV[1])
    return 1
end
return 0`

// release(n): KEYS=[S, ch]; ARGV=[n, PUB]. Publishes the new value.
const foreignSemReleaseLua = `
local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], v)
return v`

// trySetPermits(n): KEYS=[S, ch]; ARGV=[n, PUB].
const foreignSemTrySetLua = `
if redis.call('get', KEYS[1]) == false then
    redis.call('set', KEYS[1], ARGV[1])
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0`

// addPermits(n): KEYS=[S, ch]; ARGV=[n, PUB].
const foreignSemAddLua = `
local v = tonumber(redis.call('get', KEYS[1]) or 0) + tonumber(ARGV[1])
redis.call('set', KEYS[1], v)
redis.call(ARGV[2], KEYS[2], v)
return v`

// drainPermits: KEYS=[S].
const foreignSemDrainLua = `
local v = redis.call('get', KEYS[1])
if v == false then v = 0 end
redis.call('set', KEYS[1], 0)
return tonumber(v)`

func (f *foreignSemaphore) tryAcquire(ctx context.Context, n int64) (bool, error) {
	r, err := f.rdb.Eval(ctx, foreignSemTryAcquireLua, []string{f.name}, n).Int64()
	return r == 1, err
}

func (f *foreignSemaphore) release(ctx context.Context, n int64) error {
	return f.rdb.Eval(ctx, foreignSemReleaseLua, []string{f.name, f.channel()}, n, "publish").Err()
}

func (f *foreignSemaphore) trySetPermits(ctx context.Context, n int64) (bool, error) {
	r, err := f.rdb.Eval(ctx, foreignSemTrySetLua, []string{f.name, f.channel()}, n, "publish").Int64()
	return r == 1, err
}

func (f *foreignSemaphore) addPermits(ctx context.Context, n int64) error {
	return f.rdb.Eval(ctx, foreignSemAddLua, []string{f.name, f.channel()}, n, "publish").Err()
}

func (f *foreignSemaphore) drainPermits(ctx context.Context) (int64, error) {
	return f.rdb.Eval(ctx, foreignSemDrainLua, []string{f.name}).Int64()
}

func (f *foreignSemaphore) availablePermits(ctx context.Context) (int64, error) {
	v, err := f.rdb.Get(ctx, f.name).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// acquire waits like Redisson's acquire(n): try; subscribe (a connection of
// its own); loop: try again, and wait for a release message whose new value
// is positive, or until ctx ends.
func (f *foreignSemaphore) acquire(ctx context.Context, n int64) error {
	if ok, err := f.tryAcquire(ctx, n); err != nil || ok {
		return err
	}
	ps := f.rdb.Subscribe(ctx, f.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return err
	}
	msgs := ps.Channel()
	for {
		if ok, err := f.tryAcquire(ctx, n); err != nil || ok {
			return err
		}
		for woken := false; !woken; {
			select {
			case m := <-msgs:
				woken = javaLong(m.Payload) > 0
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// foreignLatch is one Java process's view of an RCountDownLatch.
type foreignLatch struct {
	rdb  *redis.Client
	name string
}

func newForeignLatch(rdb *redis.Client, name string) *foreignLatch {
	return &foreignLatch{rdb: rdb, name: name}
}

// channel is Redisson's latch channel: literal braces, not prefixName.
func (f *foreignLatch) channel() string {
	return "redisson_countdownlatch__channel__{" + f.name + "}"
}

// trySetCount: KEYS=[C, ch]; ARGV=[NEW_COUNT=1, n, PUB].
const foreignLatchTrySetLua = `
if redis.call('exists', KEYS[1]) == 0 then
    redis.call('set', KEYS[1], ARGV[2])
    redis.call(ARGV[3], KEYS[2], ARGV[1])
    return 1
end
return 0`

// countDown: KEYS=[C, ch]; ARGV=[ZERO_COUNT=0, PUB].
const foreignLatchCountDownLua = `
local v = redis.call('decr', KEYS[1])
if v <= 0 then
    redis.call('del', KEYS[1])
end
if v == 0 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return v`

// delete: KEYS=[C, ch]; ARGV=[NEW_COUNT=1, PUB].
const foreignLatchDeleteLua = `
if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[2], KEYS[2], ARGV[1])
    return 1
end
return 0`

func (f *foreignLatch) trySetCount(ctx context.Context, n int64) (bool, error) {
	r, err := f.rdb.Eval(ctx, foreignLatchTrySetLua, []string{f.name, f.channel()}, 1, n, "publish").Int64()
	return r == 1, err
}

func (f *foreignLatch) countDown(ctx context.Context) error {
	return f.rdb.Eval(ctx, foreignLatchCountDownLua, []string{f.name, f.channel()}, 0, "publish").Err()
}

func (f *foreignLatch) delete(ctx context.Context) (bool, error) {
	r, err := f.rdb.Eval(ctx, foreignLatchDeleteLua, []string{f.name, f.channel()}, 1, "publish").Int64()
	return r == 1, err
}

func (f *foreignLatch) getCount(ctx context.Context) (int64, error) {
	v, err := f.rdb.Get(ctx, f.name).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// await waits like Redisson's await(): return if the count is 0; subscribe;
// while the count is above 0, wait for the zero message 0 (the new-count
// message 1 re-closes Redisson's latch: keep waiting).
func (f *foreignLatch) await(ctx context.Context) error {
	if n, err := f.getCount(ctx); err != nil || n == 0 {
		return err
	}
	ps := f.rdb.Subscribe(ctx, f.channel())
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		return err
	}
	msgs := ps.Channel()
	for {
		if n, err := f.getCount(ctx); err != nil || n == 0 {
			return err
		}
		for zero := false; !zero; {
			select {
			case m := <-msgs:
				zero = m.Payload == "0"
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
}

// ---------------------------------------------------------------------------
// Interop tests: the library's Semaphore and CountDownLatch against the
// foreign stand-ins, both ways.

// semRawMessages subscribes to channel on a connection of its own and returns
// a function that returns the next payload, failing the test after d.
func semRawMessages(t *testing.T, rdb *redis.Client, channel string) func(d time.Duration) string {
	t.Helper()
	ps := rdb.Subscribe(context.Background(), channel)
	t.Cleanup(func() { ps.Close() })
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	msgs := ps.Channel()
	return func(d time.Duration) string {
		t.Helper()
		select {
		case m := <-msgs:
			return m.Payload
		case <-time.After(d):
			t.Fatalf("no message on %s within %v", channel, d)
			return ""
		}
	}
}

// The Go semaphore and the foreign (Redisson) one read and write the same
// string and the same messages.
// javaLong reads a message as Redisson's LongCodec does (Long.valueOf:
// decimal digits with an optional sign, '+' included); -1 << 63 when it
// would throw.
func javaLong(msg string) int64 {
	if msg == "" || strings.ContainsAny(msg[1:], "+-") || strings.TrimLeft(msg, "+-0123456789") != "" {
		return -1 << 63
	}
	v, err := strconv.ParseInt(msg, 10, 64)
	if err != nil {
		return -1 << 63
	}
	return v
}

func TestSemaphoreInteropWireFormat(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	name := semLatchName(t, rdb)
	s := newClient(t, rdb, nil).GetSemaphore(name)
	f := newForeignSemaphore(rdb, name)
	next := semRawMessages(t, rdb, f.channel())

	semTrySet(t, ctx, s, 3)
	if got := next(wakeBound); javaLong(got) != 3 {
		t.Fatalf("TrySetPermits published %q; want 3", got)
	}
	if ok, err := f.trySetPermits(ctx, 9); ok || err != nil {
		t.Fatalf("foreign trySetPermits on a Go-set semaphore = %v, %v", ok, err)
	}
	if ok, err := f.tryAcquire(ctx, 2); !ok || err != nil {
		t.Fatalf("foreign tryAcquire(2) = %v, %v", ok, err)
	}
	semAvail(t, ctx, s, 1)
	semMust(t, s.AddPermits(ctx, 4))
	if got := next(wakeBound); javaLong(got) != 5 {
		t.Fatalf("AddPermits published %q; want the new value 5", got)
	}
	semMust(t, s.Release(ctx, 2))
	if got := next(wakeBound); javaLong(got) != 7 {
		t.Fatalf("Release published %q; want the new value 7", got)
	}
	if n, err := f.availablePermits(ctx); n != 7 || err != nil {
		t.Fatalf("foreign availablePermits = %d, %v; want 7", n, err)
	}
	semMust(t, f.addPermits(ctx, -2))
	if got := next(wakeBound); got != "5" {
		t.Fatalf("foreign addPermits published %q", got)
	}
	if n, err := s.DrainPermits(ctx); n != 5 || err != nil {
		t.Fatalf("DrainPermits = %d, %v; want 5", n, err)
	}
	if n, err := f.drainPermits(ctx); n != 0 || err != nil {
		t.Fatalf("foreign drainPermits after Go's = %d, %v; want 0", n, err)
	}
}

// A Go waiter is woken by the foreign release's message (not by its own
// re-check a second later), and only once enough permits are there.
func TestSemaphoreInteropForeignReleaseWakesGo(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	f := newForeignSemaphore(rdb, name)
	if ok, err := f.trySetPermits(ctx, 0); !ok || err != nil {
		t.Fatal(ok, err)
	}
	s := newClient(t, rdb, nil).GetSemaphore(name)
	done := async(func() error { return s.Acquire(ctx, 1) })
	waitSubscribers(t, rdb, f.channel(), 1)
	start := time.Now()
	semMust(t, f.release(ctx, 1))
	await(t, done, wakeBound, "Go Acquire after the foreign release")
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Go waiter took %v after the foreign release: woken by its re-check, not the message", d)
	}

	done = async(func() error { return s.Acquire(ctx, 2) })
	time.Sleep(100 * time.Millisecond)
	semMust(t, f.release(ctx, 1))
	time.Sleep(300 * time.Millisecond)
	stillBlocked(t, done, "Go Acquire(2) with 1 permit")
	semMust(t, f.release(ctx, 1))
	await(t, done, wakeBound, "Go Acquire(2) after the second foreign release")
	semAvail(t, ctx, s, 0)
}

// A foreign waiter (which, like Redisson, has no re-check) is woken by the
// Go release's message.
func TestSemaphoreInteropGoReleaseWakesForeign(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	s := newClient(t, rdb, nil).GetSemaphore(name)
	semTrySet(t, ctx, s, 0)
	f := newForeignSemaphore(rdb, name)
	done := async(func() error { return f.acquire(ctx, 2) })
	waitSubscribers(t, rdb, f.channel(), 1)
	semMust(t, s.Release(ctx, 1))
	time.Sleep(250 * time.Millisecond)
	stillBlocked(t, done, "foreign acquire(2) with 1 permit")
	semMust(t, s.Release(ctx, 1))
	await(t, done, wakeBound, "foreign acquire(2) after the Go release")
	semAvail(t, ctx, s, 0)
}

// Go and foreign goroutines share one permit for a non-atomic
// read-modify-write: no update lost.
func TestSemaphoreInteropMutualExclusionMixed(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := semLatchName(t, rdb)
	counter := name + ":counter"
	t.Cleanup(func() { rdb.Del(context.Background(), counter) })
	semMust(t, newForeignSemaphore(rdb, name).release(ctx, 1))
	const rounds = 15
	var wg sync.WaitGroup
	var inside atomic.Int32
	critical := func() {
		if inside.Add(1) != 1 {
			t.Error("two holders of the only permit")
		}
		v, _ := rdb.Get(ctx, counter).Int()
		time.Sleep(time.Millisecond)
		rdb.Set(ctx, counter, v+1, 0)
		inside.Add(-1)
	}
	workers := 0
	for range 2 {
		c := newClient(t, sharedRedis(t), nil)
		for range 3 {
			workers++
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := c.GetSemaphore(name)
				for range rounds {
					if err := s.Acquire(ctx, 1); err != nil {
						t.Error(err)
						return
					}
					critical()
					if err := s.Release(ctx, 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	for range 3 {
		workers++
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newForeignSemaphore(sharedRedis(t), name)
			for range rounds {
				if err := f.acquire(ctx, 1); err != nil {
					t.Error(err)
					return
				}
				critical()
				if err := f.release(ctx, 1); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got, want := rdb.Get(ctx, counter).Val(), fmt.Sprint(workers*rounds); got != want {
		t.Fatalf("counter = %s; want %s", got, want)
	}
}

// The Go latch and the foreign (Redisson) one read and write the same count
// and the same messages, and release each other's waiters.
func TestCountDownLatchInteropWireFormat(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	name := semLatchName(t, rdb)
	l := newClient(t, rdb, nil).GetCountDownLatch(name)
	f := newForeignLatch(rdb, name)
	if l.channel != f.channel() {
		t.Fatalf("channel %q; Redisson's is %q", l.channel, f.channel())
	}
	next := semRawMessages(t, rdb, f.channel())

	latchTrySet(t, ctx, l, 3)
	if got := next(wakeBound); got != "1" {
		t.Fatalf("TrySetCount published %q; want the new-count message 1", got)
	}
	if n, err := f.getCount(ctx); n != 3 || err != nil {
		t.Fatalf("foreign getCount = %d, %v; want 3", n, err)
	}
	if ok, err := f.trySetCount(ctx, 5); ok || err != nil {
		t.Fatalf("foreign trySetCount on a Go-set latch = %v, %v", ok, err)
	}
	semMust(t, f.countDown(ctx))
	latchCount(t, ctx, l, 2)
	semMust(t, l.CountDown(ctx))
	semMust(t, l.CountDown(ctx))
	if got := next(wakeBound); got != "0" {
		t.Fatalf("the last CountDown published %q; want the zero message 0", got)
	}
	if n := rdb.Exists(ctx, name).Val(); n != 0 {
		t.Fatal("latch key left at zero")
	}
	if ok, err := f.delete(ctx); ok || err != nil {
		t.Fatalf("foreign delete of an open latch = %v, %v", ok, err)
	}

	// A foreign delete publishes 1; Go waiters re-check and are released
	// (Redisson's own waiters would keep waiting).
	if ok, err := f.trySetCount(ctx, 4); !ok || err != nil {
		t.Fatal(ok, err)
	}
	next(wakeBound)
	done := async(func() error { return l.Await(ctx) })
	waitSubscribers(t, rdb, f.channel(), 2)
	start := time.Now()
	if ok, err := f.delete(ctx); !ok || err != nil {
		t.Fatalf("foreign delete = %v, %v", ok, err)
	}
	await(t, done, wakeBound, "Go Await after the foreign delete")
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Go waiter took %v after the delete: woken by its re-check, not the message", d)
	}
	if got := next(wakeBound); got != "1" {
		t.Fatalf("foreign delete published %q; want 1", got)
	}
	if ok, err := l.Delete(ctx); ok || err != nil {
		t.Fatalf("Delete of a deleted latch = %v, %v", ok, err)
	}
}

// A Go waiter is released by the foreign count-down that reaches zero, and
// not before.
func TestCountDownLatchInteropForeignCountDownWakesGo(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	f := newForeignLatch(rdb, name)
	if ok, err := f.trySetCount(ctx, 2); !ok || err != nil {
		t.Fatal(ok, err)
	}
	done := async(func() error { return newClient(t, rdb, nil).GetCountDownLatch(name).Await(ctx) })
	waitSubscribers(t, rdb, f.channel(), 1)
	semMust(t, f.countDown(ctx))
	time.Sleep(250 * time.Millisecond)
	stillBlocked(t, done, "Go Await at count 1")
	start := time.Now()
	semMust(t, f.countDown(ctx))
	await(t, done, wakeBound, "Go Await after the foreign count-down")
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("Go waiter took %v after the count-down: woken by its re-check, not the message", d)
	}
}

// Foreign waiters (which, like Redisson, have no re-check) are released by
// the Go count-down that reaches zero.
func TestCountDownLatchInteropGoCountDownWakesForeign(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	l := newClient(t, rdb, nil).GetCountDownLatch(name)
	latchTrySet(t, ctx, l, 2)
	f := newForeignLatch(rdb, name)
	var dones []<-chan error
	for range 3 {
		dones = append(dones, async(func() error { return f.await(ctx) }))
	}
	waitSubscribers(t, rdb, f.channel(), 3)
	semMust(t, l.CountDown(ctx))
	time.Sleep(250 * time.Millisecond)
	for _, d := range dones {
		stillBlocked(t, d, "foreign await at count 1")
	}
	semMust(t, l.CountDown(ctx))
	for _, d := range dones {
		await(t, d, wakeBound, "foreign await after the Go count-down")
	}
}
