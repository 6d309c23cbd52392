package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestRWLockReadersShareWriterExcludes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	r1, r2 := c.GetReadWriteLock(name), c.GetReadWriteLock(name)
	mustTryLock(t, ctx, r1.ReadLock(), 0, 0)
	mustTryLock(t, ctx, r2.ReadLock(), 0, 0)
	w := c.GetReadWriteLock(name)
	if ok, err := w.WriteLock().TryLock(ctx, 0, 0); ok || err != nil {
		t.Fatalf("writer while readers hold: %v, %v; want false", ok, err)
	}
	if locked, _ := w.ReadLock().IsLocked(ctx); !locked {
		t.Fatal("ReadLock().IsLocked = false while readers hold")
	}
	if locked, _ := w.WriteLock().IsLocked(ctx); locked {
		t.Fatal("WriteLock().IsLocked = true while only readers hold")
	}
	got := make(chan error, 1)
	go func() {
		ok, err := w.WriteLock().TryLock(ctx, 20*time.Second, 0)
		if err == nil && !ok {
			err = errors.New("writer wait ran out")
		}
		got <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if err := r1.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		t.Fatalf("writer got in while a reader still held (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := r2.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	// Now the writer excludes readers and writers.
	if ok, _ := r1.ReadLock().TryLock(ctx, 0, 0); ok {
		t.Fatal("reader got in under a writer")
	}
	if ok, _ := r1.WriteLock().TryLock(ctx, 0, 0); ok {
		t.Fatal("second writer got in")
	}
	// Readers blocked by the writer are all woken by its unlock.
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for i := 0; i < 5; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.GetReadWriteLock(name).ReadLock()
			ok, err := r.TryLock(ctx, 20*time.Second, 0)
			if err == nil && !ok {
				err = errors.New("reader wait ran out")
			}
			if err == nil {
				time.Sleep(200 * time.Millisecond) // all five hold at once
				err = r.Unlock(ctx)
			}
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond)
	start := time.Now()
	if err := w.WriteLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("5 readers holding 200ms each took %v after the writer left: not concurrent", d)
	}
}

func TestRWLockDowngradeAndReentrancy(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	me, other := c.GetReadWriteLock(name), c.GetReadWriteLock(name)
	w, r := me.WriteLock(), me.ReadLock()
	mustTryLock(t, ctx, w, 0, 0)
	wctx := holdCtx(t, ctx, w) // re-entry and the writer's reads go through the hold's context
	mustTryLock(t, wctx, w, 0, 0)
	mustTryLock(t, wctx, r, 0, 0) // the writer may read
	if n, _ := w.HoldCount(ctx); n != 2 {
		t.Fatalf("write HoldCount = %d; want 2", n)
	}
	if n, _ := r.HoldCount(ctx); n != 1 {
		t.Fatalf("read HoldCount = %d; want 1", n)
	}
	if ok, _ := other.ReadLock().TryLock(ctx, 0, 0); ok {
		t.Fatal("other owner read under a writer")
	}
	if w.Token() == 0 || r.Token() != 0 {
		t.Fatalf("tokens: write %d (want > 0), read %d (want 0)", w.Token(), r.Token())
	}
	w.Unlock(ctx)
	if err := w.Unlock(ctx); err != nil { // downgrade: still reading
		t.Fatal(err)
	}
	if mode := rdb.HGet(ctx, name, "mode").Val(); mode != "read" {
		t.Fatalf("mode after downgrade = %q; want read", mode)
	}
	mustTryLock(t, ctx, other.ReadLock(), 0, 0)
	if ok, _ := other.WriteLock().TryLock(ctx, 0, 0); ok {
		t.Fatal("writer got in while two readers hold")
	}
	other.ReadLock().Unlock(ctx)
	if ok, _ := w.TryLock(ctx, 0, 0); ok {
		t.Fatal("upgrade from read to write allowed (Redisson refuses it)")
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
		t.Fatalf("lock left after the last unlock: %v", rdb.HGetAll(ctx, name).Val())
	}
	if err := r.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("extra read Unlock = %v; want ErrNotHeld", err)
	}
	if err := w.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("extra write Unlock = %v; want ErrNotHeld", err)
	}
}

// Each read hold has its own lease: the hash lives as long as the longest
// one, and a writer gets in when the last one ends.
func TestRWLockReadLeases(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	long := c.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, long, 0, 1500*time.Millisecond) // never unlocked
	short := c.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, short, 0, 5*time.Second)
	if err := short.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if d, _ := long.RemainingLease(ctx); d > 1500*time.Millisecond {
		t.Fatalf("hash lease %v after the longer reader left; want the remaining reader's (<= 1.5s)", d)
	}
	start := time.Now()
	w := c.GetReadWriteLock(name).WriteLock()
	mustTryLock(t, ctx, w, 10*time.Second, 0)
	if waited := time.Since(start); waited > 5*time.Second {
		t.Fatalf("writer waited %v for a 1.5s read lease", waited)
	}
	select {
	case <-long.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("expired reader not told")
	}
	w.Unlock(ctx)
}

// The watchdog renews read holds (each one's own timeout key) and write
// holds, and only this client's: a reader of a closed client is not kept
// alive by another client's renewals.
func TestRWLockWatchdog(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	const timeout = 600 * time.Millisecond
	c := newClient(t, rdb, &Options{WatchdogTimeout: timeout})
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	rw := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, rw.WriteLock(), 0, 0)
	wctx := holdCtx(t, ctx, rw.WriteLock())
	mustTryLock(t, wctx, rw.ReadLock(), 0, 0)
	mustTryLock(t, wctx, rw.ReadLock(), 0, 0)
	time.Sleep(5 * timeout)
	for _, l := range []*Lock{rw.WriteLock(), rw.ReadLock()} {
		if err := l.Err(); err != nil {
			t.Fatalf("%s lost under the watchdog: %v", l.kind.what, err)
		}
	}
	timeouts := rdb.Keys(ctx, "{"+name+"}:*:rwlock_timeout:*").Val()
	if len(timeouts) != 2 {
		t.Fatalf("timeout keys %v; want one per read hold (2)", timeouts)
	}
	for _, k := range timeouts {
		if d := rdb.PTTL(ctx, k).Val(); d <= 0 {
			t.Fatalf("%s not renewed: PTTL %v", k, d)
		}
	}
	rw.WriteLock().Unlock(ctx)
	time.Sleep(3 * timeout)
	if err := rw.ReadLock().Err(); err != nil {
		t.Fatalf("read hold lost after downgrade: %v", err)
	}
	rw.ReadLock().Unlock(ctx)
	rw.ReadLock().Unlock(ctx)
	eventually(t, 5*time.Second, "only the fencing counter left", func() bool { return rdb.DBSize(ctx).Val() == 1 })

	// Zombie readers: a client that closed without unlocking is not kept
	// alive by another client's renewals.
	zc, err := New(srv.Client(t), &Options{WatchdogTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, zc.GetReadWriteLock(name).ReadLock(), 0, 0)
	zc.Close()
	b := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, b.ReadLock(), 0, 0)
	time.Sleep(3 * timeout)
	if err := b.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, b.WriteLock(), 5*time.Second, 0)
	b.WriteLock().Unlock(ctx)
}

func TestRWLockForceUnlockByMode(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	name := uniqueName(t, rdb)
	rw := c.GetReadWriteLock(name)
	mustTryLock(t, ctx, rw.ReadLock(), 0, 0)
	if ok, _ := rw.WriteLock().ForceUnlock(ctx); ok {
		t.Fatal("write ForceUnlock released a read lock")
	}
	if ok, _ := rw.ReadLock().ForceUnlock(ctx); !ok {
		t.Fatal("read ForceUnlock did not release the read lock")
	}
	mustTryLock(t, ctx, rw.WriteLock(), 0, 0)
	if ok, _ := rw.ReadLock().ForceUnlock(ctx); ok {
		t.Fatal("read ForceUnlock released a write lock")
	}
	if ok, _ := rw.WriteLock().ForceUnlock(ctx); !ok {
		t.Fatal("write ForceUnlock did not release the write lock")
	}
}

func TestRWLockBadInputAndCancel(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	str := uniqueName(t, rdb)
	rdb.Set(ctx, str, "x", 0)
	for _, l := range []*Lock{c.GetReadWriteLock(str).ReadLock(), c.GetReadWriteLock(str).WriteLock()} {
		before := keyState(t, rdb, str)
		if _, err := l.TryLock(ctx, 0, 0); !errors.Is(err, ErrWrongType) {
			t.Fatalf("%s on a string: %v; want ErrWrongType", l.kind.what, err)
		}
		if _, err := l.IsLocked(ctx); !errors.Is(err, ErrWrongType) {
			t.Fatalf("%s IsLocked on a string: %v; want ErrWrongType", l.kind.what, err)
		}
		if after := keyState(t, rdb, str); after != before {
			t.Fatalf("Redis changed: %s -> %s", before, after)
		}
	}
	if err := c.GetReadWriteLock("").ReadLock().Lock(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name: %v", err)
	}
	// A cancelled writer wait leaves no field and no subscription.
	name := uniqueName(t, rdb)
	mustTryLock(t, ctx, c.GetReadWriteLock(name).ReadLock(), 0, 0)
	before := rdb.HGetAll(ctx, name).Val()
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.GetReadWriteLock(name).WriteLock().Lock(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("cancelled write Lock = %v", err)
	}
	if after := rdb.HGetAll(ctx, name).Val(); len(after) != len(before) {
		t.Fatalf("cancelled writer left a field: %v -> %v", before, after)
	}
	channel := prefixName("redisson_rwlock", name)
	eventually(t, 10*time.Second, "no subscription left", func() bool {
		return rdb.PubSubNumSub(ctx, channel).Val()[channel] == 0
	})
}

// Readers and writers from several clients: writers never overlap anything,
// readers overlap each other.
func TestRWLockMutualExclusion(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	var mu sync.Mutex
	readers, writers, maxReaders, writes := 0, 0, 0, 0
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		c := newClient(t, sharedRedis(t), nil)
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := 0; r < 10; r++ {
					rw := c.GetReadWriteLock(name)
					if (g+r)%3 == 0 {
						l := rw.WriteLock()
						if err := l.Lock(ctx); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if readers != 0 || writers != 0 {
							t.Errorf("writer entered with %d readers, %d writers", readers, writers)
						}
						writers++
						writes++
						mu.Unlock()
						time.Sleep(time.Millisecond)
						mu.Lock()
						writers--
						mu.Unlock()
						l.Unlock(ctx)
					} else {
						l := rw.ReadLock()
						if err := l.Lock(ctx); err != nil {
							t.Error(err)
							return
						}
						mu.Lock()
						if writers != 0 {
							t.Errorf("reader entered under a writer")
						}
						readers++
						maxReaders = max(maxReaders, readers)
						mu.Unlock()
						time.Sleep(2 * time.Millisecond)
						mu.Lock()
						readers--
						mu.Unlock()
						l.Unlock(ctx)
					}
				}
			}()
		}
	}
	wg.Wait()
	t.Logf("%d writes, up to %d readers at once", writes, maxReaders)
	if maxReaders < 2 {
		t.Fatalf("readers never overlapped (max %d)", maxReaders)
	}
}

func TestRWLockCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	// The watchdog must renew the holds at least twice while they are kept;
	// the lease is generous because a loaded machine delays renewals.
	c := newClient(t, rdb, &Options{WatchdogTimeout: 1200 * time.Millisecond})
	ctx := testCtx(t, 30*time.Second)
	var rws []*ReadWriteLock
	for i := 0; i < 6; i++ {
		rw := c.GetReadWriteLock(uniqueName(t, rdb) + ":" + strconv.Itoa(i))
		mustTryLock(t, ctx, rw.WriteLock(), 0, 0)
		mustTryLock(t, holdCtx(t, ctx, rw.WriteLock()), rw.ReadLock(), 0, 0)
		rws = append(rws, rw)
	}
	time.Sleep(2 * time.Second)
	for _, rw := range rws {
		name := rw.Name()
		if rw.ReadLock().Err() != nil || rw.WriteLock().Err() != nil {
			t.Fatalf("%s lost on cluster", name)
		}
		if err := rw.WriteLock().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rw.ReadLock().Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if n, _ := rdb.Exists(ctx, name).Result(); n != 0 {
			t.Fatalf("%s left", name)
		}
	}
	if err := c.GetReadWriteLock("bad{name").ReadLock().Lock(ctx); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("name with an unclosed brace on Cluster: %v; want ErrInvalidName", err)
	}
}

// With Redis unreachable, a read or write TryLock returns the dial error,
// naming the lock, and holds nothing: the undo of an acquire whose reply
// may be lost finds no hold of the pair's owner to adjust.
func TestRWLockUnreachableRedisReturnsError(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { dead.Close() })
	c := newClient(t, dead, &Options{CleanupTimeout: 200 * time.Millisecond})
	ctx := testCtx(t, 10*time.Second)
	rw := c.GetReadWriteLock("unreachable")
	for _, l := range []*Lock{rw.ReadLock(), rw.WriteLock()} {
		ok, err := l.TryLock(ctx, 0, time.Second)
		if ok || err == nil {
			t.Fatalf("%s TryLock with Redis unreachable = %v, %v; want false and an error", l.kind.what, ok, err)
		}
		if !strings.Contains(err.Error(), `"unreachable"`) {
			t.Errorf("%s TryLock error %q does not name the lock", l.kind.what, err)
		}
		if n, _ := l.HoldCount(ctx); n != 0 || l.Err() == nil {
			t.Errorf("%s after the failed TryLock: hold count %d, Err %v; want no hold", l.kind.what, n, l.Err())
		}
	}
}

// When a read hold leaves and the remaining hold's timeout key expires a
// millisecond before the hash (two expiries one acquire script set with
// separate commands, the server's clock ticking between them), the release
// sets the hash's lease to the remaining hold's without publishing the
// lease-change message: it is no news to a waiter.
func TestRWReadReleaseMillisecondShorterLeaseIsNoNews(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	first, second := c.GetReadWriteLock(name).ReadLock(), c.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, first, 0, 20*time.Second)
	mustTryLock(t, ctx, second, 0, 20*time.Second)
	timeouts := rdb.Keys(ctx, rwiGlob("{"+name+"}")+":*:rwlock_timeout:*").Val()
	if len(timeouts) != 2 {
		t.Fatalf("read-hold timeout keys %v; want 2", timeouts)
	}
	// Both holds' timeouts at one instant, the hash 1 ms later.
	at := time.Now().Add(15 * time.Second).UnixMilli()
	for _, k := range timeouts {
		rdb.PExpireAt(ctx, k, time.UnixMilli(at))
	}
	rdb.PExpireAt(ctx, name, time.UnixMilli(at+1))
	spy := rwiSpy(t, rdb, prefixName("redisson_rwlock", name))
	if err := first.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	// PEXPIRETIME where the server has it (7.0+), else TIME+PTTL, up to 1 ms early.
	if got, exact, err := redistest.ExpireAt(ctx, rdb, name); err != nil || got > at || (exact && got < at-1) || got < at-2 {
		t.Errorf("hash expires at %d ms (exact %v, %v); want the remaining hold's %d", got, exact, err, at)
	}
	time.Sleep(200 * time.Millisecond) // a message would have arrived
	if m := spy(); len(m) != 0 {
		t.Fatalf("channel heard %v; want nothing for a 1 ms shorter lease", m)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
}

// A long read hold unlocks while a short one remains, then the short one
// expires: the writer, whose wait was bounded by the long hold's lease,
// hears the lease-change message of the read release and takes the lock
// soon after the short hold ends (before the fix it slept the full 10s).
func TestRWWriterHearsReadLeaseShrink(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	ca := newClient(t, rdb, nil)
	long, short := ca.GetReadWriteLock(name).ReadLock(), ca.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, long, 0, 10*time.Second)
	const shortLease = 1500 * time.Millisecond
	mustTryLock(t, ctx, short, 0, shortLease) // never unlocked
	cb := newClient(t, sharedRedis(t), nil)
	w := cb.GetReadWriteLock(name).WriteLock()
	channel := prefixName("redisson_rwlock", name)
	done := async(func() error {
		ok, err := w.TryLock(ctx, 30*time.Second, 0)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		return err
	})
	eventually(t, 10*time.Second, "writer subscribed", func() bool { return cb.pubsub.listening(channel) })
	time.Sleep(300 * time.Millisecond) // the writer is in its 10s wait
	start := time.Now()
	unlockN(t, ctx, long, 1)
	await(t, done, 4*shortLease, "writer after the long read hold left")
	t.Logf("writer took the lock %v after the long read unlock", time.Since(start))
	unlockN(t, ctx, w, 1)
}

// Each read hold keeps its own lease in Redis, and the owner holds until
// the longest ends; a release drops the latest hold's lease. The handle
// follows the same stack: a re-entry with a shorter lease does not make it
// report a loss while Redis still counts the longer hold (writers refused),
// and a release that leaves only an expired lease ends the hold on both.
func TestReadLockReentryShorterLeaseAgreesWithRedis(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)

	name := uniqueName(t, rdb)
	r := c.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, r, 0, 6*time.Second)
	mustTryLock(t, ctx, r, 0, time.Second) // shorter, through the shared read handle
	time.Sleep(1500 * time.Millisecond)    // the short lease has run out
	if n, err := r.HoldCount(ctx); n != 2 || err != nil || r.Err() != nil {
		t.Fatalf("after the short lease: Redis counts %d (%v), handle Err %v; want 2 holds, no loss", n, err, r.Err())
	}
	if ok, err := c.GetReadWriteLock(name).WriteLock().TryLock(ctx, 0, time.Second); ok || err != nil {
		t.Fatalf("writer while the long read hold lasts: %v, %v; want false, nil", ok, err)
	}
	for want := 1; want >= 0; want-- {
		if err := r.Unlock(ctx); err != nil {
			t.Fatalf("Unlock down to %d holds: %v", want, err)
		}
		if n, _ := r.HoldCount(ctx); n != want {
			t.Fatalf("after Unlock: Redis counts %d holds; want %d", n, want)
		}
	}
	if ok, err := c.GetReadWriteLock(name).WriteLock().TryLock(ctx, 0, time.Second); !ok || err != nil {
		t.Fatalf("writer after both read holds: %v, %v; want true, nil", ok, err)
	}

	name = uniqueName(t, rdb)
	r = c.GetReadWriteLock(name).ReadLock()
	mustTryLock(t, ctx, r, 0, time.Second)
	mustTryLock(t, ctx, r, 0, 6*time.Second) // longer
	time.Sleep(1500 * time.Millisecond)
	if r.Err() != nil {
		t.Fatalf("while the longer lease lasts: Err %v; want nil", r.Err())
	}
	if err := r.Unlock(ctx); err != nil { // drops the longer one: only an expired lease is left
		t.Fatalf("Unlock: %v", err)
	}
	n, _ := r.HoldCount(ctx)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("hold not ended after its remaining lease had run out")
	}
	if n != 0 || !errors.Is(r.Err(), ErrLeaseLost) {
		t.Fatalf("after the release: Redis counts %d, handle Err %v; want 0 and ErrLeaseLost", n, r.Err())
	}
}
