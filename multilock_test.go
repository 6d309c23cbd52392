package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Locks on two servers, all or nothing.
func TestMultiLockAllOrNothing(t *testing.T) {
	srvA, srvB := redistest.Start(t), redistest.Start(t)
	ca, cb := newClient(t, srvA.Client(t), nil), newClient(t, srvB.Client(t), nil)
	ctx := testCtx(t, 30*time.Second)
	names := []string{"m:1", "m:2", "m:3"}
	set := func() *MultiLock {
		return NewMultiLock(ca.GetLock(names[0]), cb.GetLock(names[1]), ca.GetLock(names[2]))
	}
	blocker := cb.GetLock(names[1])
	mustTryLock(t, ctx, blocker, 0, 0)
	m := set()
	if ok, err := m.TryLock(ctx, 0, 0); ok || err != nil {
		t.Fatalf("TryLock with one lock taken = %v, %v; want false", ok, err)
	}
	if n := srvA.Client(t).Exists(ctx, names[0], names[2]).Val(); n != 0 {
		t.Fatalf("a failed MultiLock left %d locks held", n)
	}
	go func() { time.Sleep(300 * time.Millisecond); blocker.Unlock(context.Background()) }()
	if ok, err := m.TryLock(ctx, 10*time.Second, 0); !ok || err != nil {
		t.Fatalf("TryLock after the blocker left = %v, %v", ok, err)
	}
	if m.Held() != 3 {
		t.Fatalf("Held = %d; want 3", m.Held())
	}
	for _, l := range m.locks {
		if held, _ := l.IsHeld(ctx); !held {
			t.Fatalf("%s not held", l.Name())
		}
	}
	// Re-entry through the hold's context, then two unlocks.
	mctx, cancel := m.Context(ctx)
	defer cancel()
	if ok, err := m.TryLock(mctx, 0, 0); !ok || err != nil {
		t.Fatalf("re-entry = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := set().TryLock(ctx, 0, 0); ok {
		t.Fatal("another owner got the set after one of two unlocks")
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("extra Unlock = %v; want ErrNotHeld", err)
	}
	for _, rdb := range []*redis.Client{srvA.Client(t), srvB.Client(t)} {
		if n := rdb.Exists(ctx, names...).Val(); n != 0 {
			t.Fatalf("%d locks left after Unlock", n)
		}
	}
}

// Ten concurrent owners of the same set: exactly one wins a single attempt;
// all of them get it in turn when they wait.
func TestMultiLockContention(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	a, b, d := uniqueName(t, rdb), uniqueName(t, rdb), uniqueName(t, rdb)
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	sets := make([]*MultiLock, 10)
	for i := range sets {
		sets[i] = NewMultiLock(c.GetLock(a), c.GetLock(b), c.GetLock(d))
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if ok, err := sets[i].TryLock(ctx, 0, 10*time.Second); err != nil {
				t.Error(err)
			} else if ok {
				wins.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d owners won a single attempt; want exactly 1", wins.Load())
	}
	for _, m := range sets {
		if m.Held() > 0 {
			m.Unlock(ctx)
		}
	}
	var inside atomic.Int32
	for i := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sets[i].Lock(ctx); err != nil {
				t.Error(err)
				return
			}
			if inside.Add(1) != 1 {
				t.Error("two owners hold the set at once")
			}
			time.Sleep(5 * time.Millisecond)
			inside.Add(-1)
			sets[i].Unlock(ctx)
		}()
	}
	wg.Wait()
}

// Redlock over five independent servers: with two of them down a quorum of
// three still acquires; with three down it cannot.
func TestRedLockQuorum(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	var srvs []*redistest.Server
	var clients []*Client
	for i := 0; i < 5; i++ {
		s := redistest.Start(t)
		srvs = append(srvs, s)
		clients = append(clients, newClient(t, s.Client(t, func(o *redis.Options) { o.MaxRetries = -1 }), nil))
	}
	red := func() *RedLock {
		var locks []*Lock
		for _, c := range clients {
			locks = append(locks, c.GetLock("redlock:resource"))
		}
		return NewRedLock(locks...)
	}
	r := red()
	if r.Quorum() != 3 {
		t.Fatalf("Quorum = %d; want 3", r.Quorum())
	}
	mustHold := func(r *RedLock) {
		t.Helper()
		ok, err := r.TryLock(ctx, 2*time.Second, 10*time.Second)
		if err != nil || !ok {
			t.Fatalf("TryLock = %v, %v; want true", ok, err)
		}
	}
	mustHold(r)
	if ok, _ := red().TryLock(ctx, 300*time.Millisecond, 10*time.Second); ok {
		t.Fatal("second owner acquired a held RedLock")
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	srvs[0].Kill()
	srvs[3].Kill()
	r = red()
	mustHold(r)
	if r.Held() != 3 {
		t.Fatalf("Held = %d with two servers down; want 3", r.Held())
	}
	if ok, _ := red().TryLock(ctx, 300*time.Millisecond, 10*time.Second); ok {
		t.Fatal("second owner acquired while a quorum holds")
	}
	if err := r.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	srvs[4].Kill()
	ok, err := red().TryLock(ctx, time.Second, 10*time.Second)
	if ok || !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with three of five down = %v, %v; want false, ErrNoQuorum", ok, err)
	}
	for _, i := range []int{1, 2} {
		if n := srvs[i].Client(t).Exists(ctx, "redlock:resource").Val(); n != 0 {
			t.Fatalf("server %d keeps a lock after a failed RedLock", i)
		}
	}
}

func TestMultiLockBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	if _, err := NewMultiLock().TryLock(ctx, 0, 0); !errors.Is(err, ErrNoLocks) {
		t.Fatalf("empty MultiLock: %v", err)
	}
	if _, err := NewRedLock(c.GetLock("x"), nil).TryLock(ctx, 0, 0); !errors.Is(err, ErrNoLocks) {
		t.Fatalf("nil lock: %v", err)
	}
	if _, err := NewMultiLock(c.GetLock(uniqueName(t, rdb))).TryLock(ctx, -1, 0); !errors.Is(err, ErrNegativeDuration) {
		t.Fatalf("negative wait: %v", err)
	}
	if err := NewMultiLock(c.GetLock("")).Lock(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name: %v", err)
	}
}

// A MultiLock whose context ends while it waits leaves none of its locks
// held; on a cluster its locks may live in any slot.
func TestMultiLockCancelAndCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	names := []string{uniqueName(t, rdb) + ":a", uniqueName(t, rdb) + ":b", uniqueName(t, rdb) + ":c"}
	blocker := c.GetLock(names[2])
	mustTryLock(t, ctx, blocker, 0, 0)
	m := NewMultiLock(c.GetLock(names[0]), c.GetLock(names[1]), c.GetLock(names[2]))
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := m.Lock(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with an expiring context = %v; want DeadlineExceeded", err)
	}
	for _, n := range names[:2] {
		if rdb.Exists(ctx, n).Val() != 0 {
			t.Fatalf("%s left held by a cancelled MultiLock", n)
		}
	}
	blocker.Unlock(ctx)
	if ok, err := m.TryLock(ctx, 5*time.Second, 0); !ok || err != nil {
		t.Fatalf("TryLock on cluster = %v, %v", ok, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMultiLockUncontended: TryLock+Unlock of a set of three locks
// (six script round trips) and of a fair lock (two).
func BenchmarkMultiLockUncontended(b *testing.B) {
	srv := redistest.Start(b)
	c := newClient(b, srv.Client(b), nil)
	ctx := context.Background()
	b.Run("multi3", func(b *testing.B) {
		m := NewMultiLock(c.GetLock("bm:a"), c.GetLock("bm:b"), c.GetLock("bm:c"))
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := m.TryLock(ctx, 0, 0); !ok || err != nil {
				b.Fatal(ok, err)
			}
			if err := m.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fair", func(b *testing.B) {
		l := c.GetFairLock("bm:fair")
		b.ReportAllocs()
		for b.Loop() {
			if ok, err := l.TryLock(ctx, 0, 0); !ok || err != nil {
				b.Fatal(ok, err)
			}
			if err := l.Unlock(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// A RedLock round cut by its context leaves none of the
// locks it took held.
func TestRedLockContextEndsMidRoundLeavesNoLockHeld(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	other := newClient(t, rdb, nil)
	base := "test:redlock:" + t.Name()
	mustTryLock(t, ctx, other.GetLock(base+":2"), 0, time.Minute)
	locks := []*Lock{c.GetLock(base + ":0"), c.GetLock(base + ":1"), c.GetLock(base + ":2")}
	rl := NewRedLock(locks...)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	ok, err := rl.TryLock(short, 10*time.Second, time.Minute)
	if ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("TryLock = %v, %v; want false, DeadlineExceeded", ok, err)
	}
	for _, l := range locks[:2] {
		if held, err := l.IsLocked(ctx); err != nil || held {
			t.Fatalf("%s left held (%v, %v) after the round was cut", l.Name(), held, err)
		}
	}
}
