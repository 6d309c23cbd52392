package redisson

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Waiters started one after another, over two clients, get the lock in the
// order they asked for it.
func TestFairLockOrder(t *testing.T) {
	rdb := sharedRedis(t)
	clients := []*Client{newClient(t, rdb, nil), newClient(t, sharedRedis(t), nil)}
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		rdb.Del(context.Background(), prefixName("redisson_lock_queue", name), prefixName("redisson_lock_timeout", name))
	})
	holder := clients[0].GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	var mu sync.Mutex
	var order []int
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := clients[i%2].GetFairLock(name)
			ok, err := l.TryLock(ctx, 30*time.Second, 0)
			if err != nil || !ok {
				t.Errorf("waiter %d: %v, %v", i, ok, err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			l.Unlock(ctx)
		}()
		// Queued before the next one starts.
		eventually(t, 5*time.Second, "waiter queued", func() bool {
			n, _ := holder.QueueLength(ctx)
			return n == int64(i+1)
		})
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for i, got := range order {
		if got != i {
			t.Fatalf("acquisition order %v; want 0..7", order)
		}
	}
}

// A single attempt never queues, and a waiter that gives up leaves the
// queue: neither stands in the way afterwards.
func TestFairLockNoResidue(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		rdb.Del(context.Background(), prefixName("redisson_lock_queue", name), prefixName("redisson_lock_timeout", name))
	})
	holder := c.GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	if ok, _ := c.GetFairLock(name).TryLock(ctx, 0, 0); ok {
		t.Fatal("TryLock(0) got a held fair lock")
	}
	if ok, err := c.GetFairLock(name).TryLock(ctx, 200*time.Millisecond, 0); ok || err != nil {
		t.Fatalf("TryLock(200ms) = %v, %v; want false", ok, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := c.GetFairLock(name).Lock(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock with expiring ctx = %v", err)
	}
	if n, _ := holder.QueueLength(ctx); n != 0 {
		t.Fatalf("queue holds %d after the waiters left", n)
	}
	if n := rdb.ZCard(ctx, prefixName("redisson_lock_timeout", name)).Val(); n != 0 {
		t.Fatalf("timeout set holds %d", n)
	}
	holder.Unlock(ctx)
	mustTryLock(t, ctx, c.GetFairLock(name), 0, 0)
}

const fairWaiterEnv = "REDISSON_TEST_FAIR_WAITER"

// runFairWaiterProcess joins the queue of the fair lock named in spec
// ("addr|name"), says QUEUED, and waits to be killed.
func runFairWaiterProcess(spec string) {
	addr, name, _ := strings.Cut(spec, "|")
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	c, err := New(rdb, &Options{FairWaiterTimeout: time.Second})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	go func() {
		for {
			if n, _ := rdb.LLen(context.Background(), prefixName("redisson_lock_queue", name)).Result(); n > 0 {
				fmt.Println("QUEUED")
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_ = c.GetFairLock(name).Lock(context.Background())
	time.Sleep(time.Hour)
}

// A waiter whose process was killed delays the queue by at most the waiter
// timeout (1s here), not Redisson's five minutes.
func TestFairLockDeadWaiter(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{FairWaiterTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		rdb.Del(context.Background(), prefixName("redisson_lock_queue", name), prefixName("redisson_lock_timeout", name))
	})
	holder := c.GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 0)

	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fairWaiterEnv+"="+redistest.Shared(t).Addr()+"|"+name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "QUEUED" {
		t.Fatalf("waiter process said %q", line)
	}
	got := make(chan time.Time, 1)
	go func() {
		l := c.GetFairLock(name)
		if ok, err := l.TryLock(ctx, 30*time.Second, 0); err != nil || !ok {
			t.Errorf("live waiter: %v, %v", ok, err)
			got <- time.Time{}
			return
		}
		got <- time.Now()
		l.Unlock(ctx)
	}()
	eventually(t, 5*time.Second, "two waiters queued", func() bool {
		n, _ := holder.QueueLength(ctx)
		return n == 2
	})
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	at := <-got
	if at.IsZero() {
		t.FailNow()
	}
	if waited := at.Sub(killed); waited > 5*time.Second {
		t.Fatalf("live waiter got the lock %v after the dead one was killed; want about the 1s waiter timeout", waited)
	} else {
		t.Logf("dead waiter cost %v", waited)
	}
}

func TestFairLockCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	for i := 0; i < 5; i++ {
		name := uniqueName(t, rdb) + fmt.Sprint(":", i)
		h := c.GetFairLock(name)
		mustTryLock(t, ctx, h, 0, 0)
		done := make(chan error, 1)
		go func() {
			w := c.GetFairLock(name)
			ok, err := w.TryLock(ctx, 10*time.Second, 0)
			if err == nil && !ok {
				err = errors.New("wait ran out")
			}
			if err == nil {
				err = w.Unlock(ctx)
			}
			done <- err
		}()
		eventually(t, 5*time.Second, "queued", func() bool { n, _ := h.QueueLength(ctx); return n == 1 })
		h.Unlock(ctx)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// BenchmarkFairVsLock: one hot lock, 8 goroutines over 4 clients, 20 ms
// holds, the fair lock and the plain lock side by side: wait p50/p99 (ideal
// FIFO: 7 x 20 ms = 140 ms), releaser re-acquisitions, acquisitions.
func BenchmarkFairVsLock(b *testing.B) {
	srv := redistest.Start(b)
	for _, kind := range []string{"fair", "lock"} {
		b.Run(kind, func(b *testing.B) {
			var clients []*Client
			for i := 0; i < 4; i++ {
				clients = append(clients, newClient(b, srv.Client(b), nil))
			}
			ctx := context.Background()
			get := func(c *Client) *Lock {
				if kind == "fair" {
					return c.GetFairLock("bench:fair")
				}
				return c.GetLock("bench:fair")
			}
			var mu sync.Mutex
			var waits []time.Duration
			last, reacq, total := -1, 0, 0
			stop := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for time.Now().Before(stop) {
						l := get(clients[g%4])
						start := time.Now()
						if err := l.Lock(ctx); err != nil {
							b.Error(err)
							return
						}
						mu.Lock()
						waits = append(waits, time.Since(start))
						if last == g {
							reacq++
						}
						last = g
						total++
						mu.Unlock()
						time.Sleep(20 * time.Millisecond)
						l.Unlock(ctx)
					}
				}()
			}
			wg.Wait()
			sort.Slice(waits, func(i, j int) bool { return waits[i] < waits[j] })
			b.ReportMetric(float64(waits[len(waits)/2].Microseconds())/1000, "wait-p50-ms")
			b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds())/1000, "wait-p99-ms")
			b.ReportMetric(float64(reacq)/float64(total), "reacquire-rate")
			b.ReportMetric(float64(total), "acquisitions")
		})
	}
}

// A fair lock's state calls (IsLocked, IsHeld, HoldCount, RemainingLease)
// read the plain lock state and accept its three-value reply.
func TestFairLockStateCalls(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	l := c.GetFairLock(uniqueName(t, rdb))
	if locked, err := l.IsLocked(ctx); err != nil || locked {
		t.Fatalf("free: IsLocked = %v, %v", locked, err)
	}
	mustTryLock(t, ctx, l, 0, time.Minute)
	mustTryLock(t, holdCtx(t, ctx, l), l, 0, time.Minute)
	if n, err := l.HoldCount(ctx); err != nil || n != 2 {
		t.Fatalf("HoldCount = %d, %v; want 2", n, err)
	}
	if d, err := l.RemainingLease(ctx); err != nil || d <= 0 || d > time.Minute {
		t.Fatalf("RemainingLease = %v, %v", d, err)
	}
	other := c.GetFairLock(l.Name())
	if held, err := other.IsHeld(ctx); err != nil || held {
		t.Fatalf("other owner: IsHeld = %v, %v", held, err)
	}
	l.Unlock(ctx)
	l.Unlock(ctx)
}

// A waiter's Redisson queue deadline reflects its wait, as in Redisson's
// RedissonFairLock: the holder's remaining lease plus the TryLock wait; a
// Lock waiter (no wait) adds fairLockWaitTimeout (5 min) to the deadline of
// the waiter before it.
func TestFairWaiterDeadlineFollowsItsWait(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := ffName(t, rdb)
	c := newClient(t, rdb, nil)
	mustTryLock(t, ctx, c.GetFairLock(name), 0, 10*time.Second)
	w1, w2 := c.GetFairLock(name), c.GetFairLock(name)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d1 := async(func() error { _, err := w1.TryLock(wctx, 3*time.Second, 0); return err })
	ffWaitLen(t, rdb, name, 1)
	d2 := async(func() error { return w2.Lock(wctx) })
	ffWaitLen(t, rdb, name, 2)
	now := ffServerNow(t, rdb)
	s1, ok1 := ffScore(t, rdb, name, w1.Owner())
	s2, ok2 := ffScore(t, rdb, name, w2.Owner())
	if !ok1 || !ok2 {
		t.Fatalf("deadlines: %v %v; want both waiters in the zset", ok1, ok2)
	}
	// Holder's lease (<= 10s, the test took some of it) + 3s wait.
	if s1 < now+9000 || s1 > now+13500 {
		t.Errorf("TryLock(3s) waiter's deadline is now%+dms; want about now + 10s lease + 3s wait", s1-now)
	}
	if got := s2 - s1; got != fairLockWaitTimeout.Milliseconds() {
		t.Errorf("Lock waiter's deadline is the previous one's %+dms; want +%d (fairLockWaitTimeout)", got, fairLockWaitTimeout.Milliseconds())
	}
	cancel()
	<-d1
	<-d2
}

// The waiter next in line tries at the end of a lease it never saw at its
// own tries: one a new holder took with a short lease and then let run out
// (a holder that died), and one a re-entry shortened. The waiter's heartbeat
// is made 5 s long, so without the lease-change message it would sleep past
// the free lock for seconds.
func TestFairWaiterTriesAtShortLeaseEnd(t *testing.T) {
	const lease = 400 * time.Millisecond
	const margin = 1500 * time.Millisecond // the heartbeat is 5 s
	opts := &Options{FairWaiterTimeout: 15 * time.Second}
	queued := func(t *testing.T, ctx context.Context, l *Lock, n int64) {
		t.Helper()
		eventually(t, 10*time.Second, fmt.Sprintf("%d waiters queued", n), func() bool {
			got, err := l.QueueLength(ctx)
			return err == nil && got == n
		})
	}
	// wait runs a TryLock in the background and reports when it returned.
	wait := func(ctx context.Context, l *Lock, lease time.Duration) <-chan error {
		done := make(chan error, 1)
		go func() {
			ok, err := l.TryLock(ctx, 30*time.Second, lease)
			if err == nil && !ok {
				err = errors.New("not acquired within 30s")
			}
			done <- err
		}()
		return done
	}
	within := func(t *testing.T, done <-chan error, began time.Time, what string) {
		t.Helper()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if d := time.Since(began); d > lease+margin {
				t.Fatalf("%s acquired %v after a %v lease began; want within %v", what, d, lease, lease+margin)
			}
		case <-time.After(lease + margin + 5*time.Second):
			t.Fatalf("%s not acquired %v after a %v lease began", what, lease+margin+5*time.Second, lease)
		}
	}

	t.Run("acquired", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, time.Minute)
		name := uniqueName(t, rdb)
		a, b, c := newClient(t, rdb, opts), newClient(t, sharedRedis(t), opts), newClient(t, sharedRedis(t), opts)
		first := a.GetFairLock(name)
		mustTryLock(t, ctx, first, 0, 0)
		short := b.GetFairLock(name)
		shortDone := wait(ctx, short, lease) // next in line: takes a short lease and never unlocks
		queued(t, ctx, first, 1)
		next := c.GetFairLock(name)
		nextDone := wait(ctx, next, 0)
		queued(t, ctx, first, 2)
		if err := first.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-shortDone; err != nil {
			t.Fatalf("the short-lease waiter: %v", err)
		}
		began := time.Now()
		within(t, nextDone, began, "the waiter behind the short lease")
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("re-entered", func(t *testing.T) {
		rdb := sharedRedis(t)
		ctx := testCtx(t, time.Minute)
		name := uniqueName(t, rdb)
		a, b := newClient(t, rdb, opts), newClient(t, sharedRedis(t), opts)
		holder := a.GetFairLock(name)
		mustTryLock(t, ctx, holder, 0, 30*time.Second)
		next := b.GetFairLock(name)
		nextDone := wait(ctx, next, 0)
		queued(t, ctx, holder, 1)
		// The next waiter saw a 30 s lease; the re-entry shortens it to 400 ms,
		// and the holder never unlocks.
		began := time.Now()
		ok, err := holder.TryLock(holdCtx(t, ctx, holder), 0, lease)
		if err != nil || !ok {
			t.Fatalf("re-entry = %v, %v", ok, err)
		}
		within(t, nextDone, began, "the waiter behind the shortened lease")
		if err := next.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}
