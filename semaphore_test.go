package redisson

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// semLatchName returns a unique semaphore or latch name and deletes its keys
// (value, reservation, call markers) when the test ends.
func semLatchName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() { deleteSemLatchKeys(rdb, name) })
	return name
}

func deleteSemLatchKeys(rdb redis.UniversalClient, name string) {
	ctx := context.Background()
	rdb.Del(ctx, prefixName("redisson_sc_queue", name), prefixName("redisson_sc_waiters", name))
	esc := strings.NewReplacer("[", "\\[", "]", "\\]", "*", "\\*", "?", "\\?")
	for _, p := range []string{"redisson_sc_call", "redisson_countdownlatch_call"} {
		pattern := esc.Replace(prefixName(p, name)+":") + "*"
		scan := func(ctx context.Context, c *redis.Client) error {
			iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
			for iter.Next(ctx) {
				c.Del(ctx, iter.Val())
			}
			return iter.Err()
		}
		if cc, ok := rdb.(*redis.ClusterClient); ok {
			_ = cc.ForEachMaster(ctx, scan)
		} else if c, ok := rdb.(*redis.Client); ok {
			_ = scan(ctx, c)
		}
	}
}

// semState snapshots a semaphore's value and queue, to check that a call
// left Redis unchanged.
func semState(t testing.TB, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
	typ := rdb.Type(ctx, name).Val()
	val := ""
	switch typ {
	case "string":
		val = rdb.Get(ctx, name).Val()
	case "hash":
		val = fmt.Sprint(rdb.HGetAll(ctx, name).Val())
	}
	q := rdb.ZRange(ctx, prefixName("redisson_sc_queue", name), 0, -1).Val()
	w := rdb.HGetAll(ctx, prefixName("redisson_sc_waiters", name)).Val()
	return fmt.Sprintf("%s=%s queue=%v waiters=%v", typ, val, q, w)
}

// semQueued reports whether a waiter of s for n permits is queued.
func semQueued(ctx context.Context, rdb redis.UniversalClient, s *Semaphore, n int64) bool {
	for _, v := range rdb.HVals(ctx, s.keys[2]).Val() {
		if strings.HasPrefix(v, fmt.Sprint(n)+":") {
			return true
		}
	}
	return false
}

func semAvail(t testing.TB, ctx context.Context, s *Semaphore, want int64) {
	t.Helper()
	if got, err := s.AvailablePermits(ctx); err != nil || got != want {
		t.Fatalf("AvailablePermits = %d, %v; want %d", got, err, want)
	}
}

func semTrySet(t testing.TB, ctx context.Context, s *Semaphore, n int64) {
	t.Helper()
	if ok, err := s.TrySetPermits(ctx, n); err != nil || !ok {
		t.Fatalf("TrySetPermits(%d) = %v, %v; want true", n, ok, err)
	}
}

func semMust(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Redisson's counting scenarios (RedissonSemaphoreTest), step by step.
func TestSemaphoreCounting(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	type step struct {
		do    func(s *Semaphore) error
		avail int64
	}
	acq := func(n int64) func(s *Semaphore) error { return func(s *Semaphore) error { return s.Acquire(ctx, n) } }
	rel := func(n int64) func(s *Semaphore) error { return func(s *Semaphore) error { return s.Release(ctx, n) } }
	add := func(n int64) func(s *Semaphore) error {
		return func(s *Semaphore) error { return s.AddPermits(ctx, n) }
	}
	set := func(n int64) func(s *Semaphore) error {
		return func(s *Semaphore) error {
			if ok, err := s.TrySetPermits(ctx, n); err != nil || !ok {
				return fmt.Errorf("TrySetPermits(%d) = %v, %v", n, ok, err)
			}
			return nil
		}
	}
	drain := func(want int64) func(s *Semaphore) error {
		return func(s *Semaphore) error {
			if got, err := s.DrainPermits(ctx); err != nil || got != want {
				return fmt.Errorf("DrainPermits = %d, %v; want %d", got, err, want)
			}
			return nil
		}
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"AcquireWithoutSetPermits", []step{{rel(1), 1}, {rel(1), 2}, {acq(2), 0}}},
		{"AddPermits", []step{{set(10), 10}, {acq(10), 0}, {add(4), 4}, {rel(10), 14}, {acq(5), 9}}},
		{"ReducePermits", []step{{set(10), 10}, {acq(10), 0}, {add(-5), -5}, {rel(10), 5}, {acq(5), 0}}},
		{"ReleaseWithoutPermits", []step{{rel(1), 1}}},
		{"DrainPermits", []step{{drain(0), 0}, {set(10), 10}, {acq(3), 7}, {drain(7), 0}}},
		{"ReleaseAcquire", []step{{set(10), 10}, {acq(9), 1}, {rel(10), 11}, {acq(5), 6}, {rel(5), 11}}},
		{"ZeroIsNoOp", []step{{rel(0), 0}, {acq(0), 0}, {add(0), 0}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := c.GetSemaphore(semLatchName(t, rdb))
			for i, st := range tc.steps {
				if err := st.do(s); err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				semAvail(t, ctx, s, st.avail)
			}
		})
	}
}

func TestSemaphoreTrySetPermits(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 10*time.Second)
	s := c.GetSemaphore(semLatchName(t, rdb))
	semTrySet(t, ctx, s, 10)
	semAvail(t, ctx, s, 10)
	if ok, err := s.TrySetPermits(ctx, 15); ok || err != nil {
		t.Fatalf("TrySetPermits on a set semaphore = %v, %v; want false", ok, err)
	}
	semAvail(t, ctx, s, 10)
	if ok, err := s.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := s.Delete(ctx); ok || err != nil {
		t.Fatalf("second Delete = %v, %v; want false", ok, err)
	}
	semTrySet(t, ctx, s, 0) // zero permits is a valid setting
	semAvail(t, ctx, s, 0)
	if n := rdb.Exists(ctx, s.Name()).Val(); n != 1 {
		t.Fatal("TrySetPermits(0) did not create the semaphore")
	}
}

// n == 0 returns at once without I/O (Redisson's testZero): even with Redis
// unreachable.
func TestSemaphoreZeroNoIO(t *testing.T) {
	dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1})
	t.Cleanup(func() { dead.Close() })
	s := newClient(t, dead, nil).GetSemaphore("zero")
	ctx := testCtx(t, 5*time.Second)
	start := time.Now()
	if ok, err := s.TryAcquire(ctx, 0, 10*time.Minute); !ok || err != nil {
		t.Fatalf("TryAcquire(0) = %v, %v; want true, nil", ok, err)
	}
	if err := s.Acquire(ctx, 0); err != nil {
		t.Fatalf("Acquire(0) = %v", err)
	}
	if err := s.Release(ctx, 0); err != nil {
		t.Fatalf("Release(0) = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("zero-permit calls took %v", d)
	}
}

// Redisson's testAcquireAfterAddPermits: a waiter for 2 permits is not let
// in by one, and is by the second.
func TestSemaphoreAcquireAfterAddPermits(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetSemaphore(semLatchName(t, rdb))
	semMust(t, s.AddPermits(ctx, 1))
	semMust(t, s.Acquire(ctx, 1))
	done := async(func() error { return newClient(t, rdb, nil).GetSemaphore(s.Name()).Acquire(ctx, 2) })
	waitSubscribers(t, rdb, s.channel, 1)
	semMust(t, s.Release(ctx, 1))
	time.Sleep(300 * time.Millisecond)
	stillBlocked(t, done, "Acquire(2) with 1 permit")
	semMust(t, s.AddPermits(ctx, 1))
	await(t, done, wakeBound, "Acquire(2) after AddPermits(1)")
	semAvail(t, ctx, s, 0)
}

// Redisson's testBlockingAcquire, testBlockingNAcquire and testTryNAcquire:
// waiters are woken by releases from another client.
func TestSemaphoreBlockingAcquire(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	s := newClient(t, rdb, nil).GetSemaphore(semLatchName(t, rdb))
	other := newClient(t, rdb, nil).GetSemaphore(s.Name())
	releaseLater := func(ds ...time.Duration) {
		go func() {
			for _, d := range ds {
				time.Sleep(d)
				if err := other.Release(ctx, 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}

	semTrySet(t, ctx, s, 1)
	semMust(t, s.Acquire(ctx, 1))
	releaseLater(200 * time.Millisecond)
	semMust(t, s.Acquire(ctx, 1))
	if ok, err := s.TryAcquire(ctx, 1, 0); ok || err != nil {
		t.Fatalf("TryAcquire with none left = %v, %v", ok, err)
	}
	semAvail(t, ctx, s, 0)

	semMust(t, s.AddPermits(ctx, 5))
	semMust(t, s.Acquire(ctx, 3))
	releaseLater(200*time.Millisecond, 200*time.Millisecond)
	semMust(t, s.Acquire(ctx, 4))
	semAvail(t, ctx, s, 0)

	semMust(t, s.AddPermits(ctx, 5))
	if ok, err := s.TryAcquire(ctx, 3, 0); !ok || err != nil {
		t.Fatalf("TryAcquire(3) = %v, %v", ok, err)
	}
	if ok, err := s.TryAcquire(ctx, 4, 0); ok || err != nil {
		t.Fatalf("TryAcquire(4) with 2 left = %v, %v", ok, err)
	}
	start := time.Now()
	releaseLater(300*time.Millisecond, 300*time.Millisecond)
	if ok, err := s.TryAcquire(ctx, 4, 10*time.Second); !ok || err != nil {
		t.Fatalf("TryAcquire(4, 10s) = %v, %v", ok, err)
	}
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Fatalf("TryAcquire(4) returned after %v, before the second release", d)
	}
	semAvail(t, ctx, s, 0)
	if ok, err := s.TryAcquire(ctx, 1, 200*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquire(1, 200ms) with none = %v, %v; want false, nil", ok, err)
	}
}

// A release that does not publish (a foreign writer, a lost message) delays
// a waiter by the re-check interval, never strands it.
func TestSemaphoreLostMessageBounded(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	s := newClient(t, rdb, nil).GetSemaphore(semLatchName(t, rdb))
	done := async(func() error { return s.Acquire(ctx, 1) })
	waitSubscribers(t, rdb, s.channel, 1)
	start := time.Now()
	rdb.IncrBy(ctx, s.Name(), 1) // no message
	await(t, done, wakeBound, "Acquire after a silent INCRBY")
	t.Logf("waiter found the permit %v after the silent release", time.Since(start))
	semAvail(t, ctx, s, 0)
}

func TestSemaphoreBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 20*time.Second)
	hashName := semLatchName(t, rdb)
	rdb.HSet(ctx, hashName, "f", "v")
	textName := semLatchName(t, rdb)
	rdb.Set(ctx, textName, "many", 0)
	freeName := semLatchName(t, rdb)
	rdb.Set(ctx, freeName, "3", 0)

	type call func(s *Semaphore) error
	acquire := func(n int64) call { return func(s *Semaphore) error { return s.Acquire(ctx, n) } }
	try := func(n int64, wait time.Duration) call {
		return func(s *Semaphore) error { _, err := s.TryAcquire(ctx, n, wait); return err }
	}
	calls := map[string]call{
		"TrySetPermits":    func(s *Semaphore) error { _, err := s.TrySetPermits(ctx, 1); return err },
		"AddPermits":       func(s *Semaphore) error { return s.AddPermits(ctx, 1) },
		"Release":          func(s *Semaphore) error { return s.Release(ctx, 1) },
		"Acquire":          acquire(1),
		"TryAcquire":       try(1, 0),
		"TryAcquire wait":  try(1, time.Second),
		"AvailablePermits": func(s *Semaphore) error { _, err := s.AvailablePermits(ctx); return err },
		"DrainPermits":     func(s *Semaphore) error { _, err := s.DrainPermits(ctx); return err },
	}
	type tc struct {
		name, sem string
		call      call
		want      error
	}
	var cases []tc
	for what, f := range calls {
		cases = append(cases, tc{"empty name " + what, "", f, ErrEmptyName})
		cases = append(cases, tc{"hash key " + what, hashName, f, ErrWrongType})
		cases = append(cases, tc{"non-integer " + what, textName, f, ErrWrongType})
	}
	cases = append(cases,
		tc{"empty name Delete", "", func(s *Semaphore) error { _, err := s.Delete(ctx); return err }, ErrEmptyName},
		tc{"negative TrySetPermits", freeName, func(s *Semaphore) error { _, err := s.TrySetPermits(ctx, -1); return err }, ErrInvalidPermits},
		tc{"negative Acquire", freeName, acquire(-1), ErrInvalidPermits},
		tc{"negative TryAcquire", freeName, try(-2, 0), ErrInvalidPermits},
		tc{"negative Release", freeName, func(s *Semaphore) error { return s.Release(ctx, -1) }, ErrInvalidPermits},
		tc{"negative wait", freeName, try(1, -time.Second), ErrNegativeDuration},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := semState(t, rdb, tc.sem)
			err := tc.call(c.GetSemaphore(tc.sem))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v; want %v", err, tc.want)
			}
			if after := semState(t, rdb, tc.sem); after != before {
				t.Fatalf("Redis changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

func TestSemaphoreClientClosed(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, nil)
	semMust(t, err)
	ctx := testCtx(t, 20*time.Second)
	s := c.GetSemaphore(semLatchName(t, rdb))
	semTrySet(t, ctx, s, 1)
	waiter := async(func() error { return s.Acquire(ctx, 2) })
	// Wait until the waiter has queued.
	eventually(t, 5*time.Second, "queued", func() bool {
		return rdb.Exists(ctx, s.keys[1]).Val() == 1
	})
	c.Close()
	select {
	case err := <-waiter:
		if !errors.Is(err, ErrClientClosed) {
			t.Fatalf("waiter got %v; want ErrClientClosed", err)
		}
	case <-time.After(wakeBound):
		t.Fatal("waiter not released by Close")
	}
	if rdb.Exists(ctx, s.keys[1], s.keys[2]).Val() != 0 {
		t.Fatal("place in the queue left behind by a waiter released by Close")
	}
	semAvail(t, ctx, newClient(t, rdb, nil).GetSemaphore(s.Name()), 1)
	if err := s.Release(ctx, 1); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Release after Close = %v; want ErrClientClosed", err)
	}
	if _, err := s.TryAcquire(ctx, 1, 0); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("TryAcquire after Close = %v; want ErrClientClosed", err)
	}
}

func TestSemaphoreWakePolicy(t *testing.T) {
	for payload, want := range map[string]wake{
		"5":           {n: 5},
		"1":           {n: 1},
		"0":           {n: 0},
		"-3":          {n: 0},
		"99999999999": {n: math.MaxInt32},
		"x":           {ignored: true},
		"+5":          {ignored: true}, // this library's: the wake channels carry its wake-ups
	} {
		if got := semaphoreWakePolicy(payload); got != want {
			t.Errorf("semaphoreWakePolicy(%q) = %+v; want %+v", payload, got, want)
		}
	}
	for payload, want := range map[string]wake{
		"12":    {tags: "12"},
		"12 15": {tags: "12 15"},
		"":      {ignored: true},
	} {
		if got := semWakeChannelPolicy(payload); got != want {
			t.Errorf("semWakeChannelPolicy(%q) = %+v; want %+v", payload, got, want)
		}
	}
}

// Waiters on three clients queue in Redis in arrival order; each release of
// one permit wakes exactly the waiter it serves, the first queued, and no
// other waiter tries again (no thundering herd).
func TestSemaphoreReleaseWakesOnlyTheServedWaiter(t *testing.T) {
	srv := redistest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	admin := srv.Client(t)
	const name = "sem:served"
	sems, hooks := hookedClients(t, srv, 3, func(c *Client) *Semaphore { return c.GetSemaphore(name) })
	semTrySet(t, ctx, sems[0], 0)
	order := make(chan int, len(sems))
	var dones []<-chan error
	for i, s := range sems {
		dones = append(dones, async(func() error {
			err := s.Acquire(ctx, 1)
			order <- i
			return err
		}))
		eventually(t, 5*time.Second, "waiter queued", func() bool { return admin.ZCard(ctx, s.keys[1]).Val() == int64(i+1) })
	}
	tries := triesBy(hooks, "semaphore_acquire")
	releaser := newClient(t, srv.Client(t), nil).GetSemaphore(name)
	for want := range sems {
		before := tries()
		semMust(t, releaser.Release(ctx, 1))
		await(t, dones[want], wakeBound, "the first queued waiter")
		if got := <-order; got != want {
			t.Fatalf("release %d served waiter %d; want %d (arrival order)", want, got, want)
		}
		onlyServedTried(t, "release", want, before, tries)
	}
}

// Cancelled and timed-out waits leave the semaphore as it was: no permit
// taken, no place in the queue (the waiters queued before they gave up), no
// subscription.
func TestSemaphoreCancelledWaitLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetSemaphore(semLatchName(t, rdb))
	semTrySet(t, ctx, s, 2)
	before := semState(t, rdb, s.Name())
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(2)
		n := int64(3 + i%3)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
			defer cancel()
			if err := c.GetSemaphore(s.Name()).Acquire(cctx, n); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Acquire(%d) with expiring ctx = %v; want DeadlineExceeded", n, err)
			}
		}()
		go func() {
			defer wg.Done()
			if ok, err := s.TryAcquire(ctx, n, 1300*time.Millisecond); ok || err != nil {
				t.Errorf("TryAcquire(%d) = %v, %v; want false, nil", n, ok, err)
			}
		}()
	}
	eventually(t, 5*time.Second, "a waiter queues", func() bool { return rdb.Exists(ctx, s.keys[1]).Val() == 1 })
	wg.Wait()
	if after := semState(t, rdb, s.Name()); after != before {
		t.Fatalf("cancelled waiters changed Redis:\n before %s\n after  %s", before, after)
	}
	eventually(t, 10*time.Second, "PUBSUB NUMSUB back to 0", func() bool {
		return rdb.PubSubNumSub(ctx, s.channel).Val()[s.channel] == 0
	})
	eventually(t, 5*time.Second, "client tracks no channel", func() bool { return c.pubsub.stats().channels == 0 })
}

// A context cancelled while the acquire script is in flight leaves no
// permit taken.
func TestSemaphoreCancelDuringAcquire(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	s := c.GetSemaphore(semLatchName(t, rdb))
	bg := context.Background()
	semTrySet(t, bg, s, 1)
	for i := range 50 {
		ctx, cancel := context.WithCancel(bg)
		go func() { time.Sleep(time.Duration(i%5) * 50 * time.Microsecond); cancel() }()
		if err := s.Acquire(ctx, 1); err == nil {
			semMust(t, s.Release(bg, 1))
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("Acquire = %v; want nil or Canceled", err)
		}
		cancel()
	}
	semAvail(t, bg, s, 1)
}

// go-redis resends a command whose reply was lost. Each call must change the
// count exactly once all the same, and report its first result.
func TestSemaphoreIdempotentAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	warm := c.GetSemaphore("warm")
	warm.TrySetPermits(ctx, 1)
	warm.TryAcquire(ctx, 1, 0)
	warm.Release(ctx, 1)
	warm.DrainPermits(ctx)
	(&semCall{s: warm, n: 1, id: "w", keys: warm.keysWith("warm:m")}).cancel(ctx, false)

	s := c.GetSemaphore(semLatchName(t, direct))
	value := func() string { return direct.Get(ctx, s.Name()).Val() }
	expect := func(want bool) func(bool, error) error {
		return func(got bool, err error) error {
			if err == nil && got != want {
				err = fmt.Errorf("reported %v; want %v", got, want)
			}
			return err
		}
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"TrySetPermits(5)", func() error { return expect(true)(s.TrySetPermits(ctx, 5)) }, "5"},
		{"Acquire(2)", func() error { return s.Acquire(ctx, 2) }, "3"},
		{"TryAcquire(1)", func() error { return expect(true)(s.TryAcquire(ctx, 1, 0)) }, "2"},
		{"Release(3)", func() error { return s.Release(ctx, 3) }, "5"},
		{"AddPermits(-1)", func() error { return s.AddPermits(ctx, -1) }, "4"},
		{"DrainPermits", func() error {
			n, err := s.DrainPermits(ctx)
			if err == nil && n != 4 {
				err = fmt.Errorf("drained %d; want 4", n)
			}
			return err
		}, "0"},
	}
	for _, st := range steps {
		dropped := proxy.Dropped()
		proxy.DropNextReply()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if proxy.Dropped() != dropped+1 {
			t.Fatalf("%s: no reply was dropped", st.name)
		}
		if got := value(); got != st.want {
			t.Fatalf("%s with a lost reply left %q permits; want %q", st.name, got, st.want)
		}
	}
}

// Without go-redis retries a lost acquire reply is an error; the permits it
// took are given back before the call returns, and a late copy of the call
// is refused.
func TestSemaphoreLostReplyWithoutRetryLeavesNothing(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	s := c.GetSemaphore(semLatchName(t, direct))
	semTrySet(t, ctx, s, 1)
	if ok, err := s.TryAcquire(ctx, 1, 0); !ok || err != nil { // scripts loaded, connection idle
		t.Fatal(ok, err)
	}
	semMust(t, s.Release(ctx, 1))
	proxy.DropNextReply()
	if ok, err := s.TryAcquire(ctx, 1, 0); err == nil {
		t.Fatalf("TryAcquire with a lost reply and no retries = %v, nil; want an error", ok)
	}
	if proxy.Dropped() != 1 {
		t.Fatal("no reply was dropped")
	}
	semAvail(t, ctx, s, 1)

	// The call marker now refuses a late copy of a cancelled call.
	a := &semCall{s: s, n: 1, id: "late", keys: s.keysWith(s.callPre + "late")}
	a.cancel(ctx, true)
	if ok, err := a.try(ctx, true); ok || err == nil {
		t.Fatalf("a resend after cancel = %v, %v; want refused", ok, err)
	}
	semAvail(t, ctx, s, 1)
}

// One permit, 3 clients x 4 goroutines, each doing a non-atomic
// read-modify-write of a counter while holding the permit: no update lost.
func TestSemaphoreMutualExclusion(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := semLatchName(t, rdb)
	counter := name + ":counter"
	t.Cleanup(func() { rdb.Del(context.Background(), counter) })
	semTrySet(t, ctx, newClient(t, rdb, nil).GetSemaphore(name), 1)
	const clients, goroutines, rounds = 3, 4, 15
	var wg sync.WaitGroup
	var inside atomic.Int32
	for range clients {
		c := newClient(t, sharedRedis(t), nil)
		for range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := c.GetSemaphore(name)
				for range rounds {
					if err := s.Acquire(ctx, 1); err != nil {
						t.Error(err)
						return
					}
					if inside.Add(1) != 1 {
						t.Error("two holders of the only permit")
					}
					v, _ := rdb.Get(ctx, counter).Int()
					time.Sleep(time.Millisecond)
					rdb.Set(ctx, counter, v+1, 0)
					inside.Add(-1)
					if err := s.Release(ctx, 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if got, want := rdb.Get(ctx, counter).Val(), fmt.Sprint(clients*goroutines*rounds); got != want {
		t.Fatalf("counter = %s; want %s", got, want)
	}
	semAvail(t, ctx, newClient(t, rdb, nil).GetSemaphore(name), 1)
}

// Redisson's testConcurrencyLoopMax_MultiInstance: permits = MaxInt32, 4
// clients x 10 goroutines acquiring either all of them or 1: everyone gets
// through (the reservation of a big waiter holds the small ones back until
// it is served, and never deadlocks).
func TestSemaphoreAllOrOneLoop(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := semLatchName(t, rdb)
	semTrySet(t, ctx, newClient(t, rdb, nil).GetSemaphore(name), math.MaxInt32)
	var wg sync.WaitGroup
	var done atomic.Int32
	for ci := range 4 {
		c := newClient(t, sharedRedis(t), nil)
		for g := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := c.GetSemaphore(name)
				n := int64(1)
				if (ci+g)%2 == 0 {
					n = math.MaxInt32
				}
				if err := s.Acquire(ctx, n); err != nil {
					t.Error(err)
					return
				}
				time.Sleep(2 * time.Millisecond)
				if err := s.Release(ctx, n); err != nil {
					t.Error(err)
				}
				done.Add(1)
			}()
		}
	}
	wg.Wait()
	if done.Load() != 40 {
		t.Fatalf("%d of 40 acquisitions completed", done.Load())
	}
	semAvail(t, ctx, newClient(t, rdb, nil).GetSemaphore(name), math.MaxInt32)
}

// A release of k permits lets exactly k of many waiters (on 3 clients) in.
func TestSemaphoreReleaseLetsKIn(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var in atomic.Int32
	for range 3 {
		c := newClient(t, sharedRedis(t), nil)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := c.GetSemaphore(name).Acquire(wctx, 1); err == nil {
					in.Add(1)
				} else if !errors.Is(err, context.Canceled) {
					t.Error(err)
				}
			}()
		}
	}
	ch := prefixName("redisson_sc", name)
	waitSubscribers(t, rdb, ch, 3)
	semMust(t, newClient(t, rdb, nil).GetSemaphore(name).Release(ctx, 2))
	eventually(t, wakeBound, "2 waiters in", func() bool { return in.Load() >= 2 })
	time.Sleep(1500 * time.Millisecond) // past a re-check of every waiter
	if got := in.Load(); got != 2 {
		t.Fatalf("%d waiters got in after a release of 2", got)
	}
	stop()
	wg.Wait()
	semAvail(t, ctx, newClient(t, rdb, nil).GetSemaphore(name), 0)
}

// Fairness: a waiter for 4 permits is served while 9 small acquirers on
// other clients keep taking and releasing one permit each; while it waits
// in the queue, newcomers queue behind it.
func TestSemaphoreBigWaiterNotStarved(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := semLatchName(t, rdb)
	big := newClient(t, rdb, nil).GetSemaphore(name)
	semTrySet(t, ctx, big, 4)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var small atomic.Int64
	for range 3 {
		c := newClient(t, sharedRedis(t), nil)
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := c.GetSemaphore(name)
				for {
					select {
					case <-stop:
						return
					default:
					}
					ok, err := s.TryAcquire(ctx, 1, 200*time.Millisecond)
					if err != nil {
						t.Error(err)
						return
					}
					if ok {
						small.Add(1)
						time.Sleep(30 * time.Millisecond)
						if err := s.Release(ctx, 1); err != nil {
							t.Error(err)
							return
						}
					}
				}
			}()
		}
	}
	defer func() { close(stop); wg.Wait() }()
	eventually(t, 5*time.Second, "small acquirers running", func() bool { return small.Load() > 20 })
	start := time.Now()
	var served atomic.Bool
	res := async(func() error {
		defer served.Store(true)
		return big.Acquire(ctx, 4)
	})
	// The place lasts only until the waiter is served, which can be
	// quicker than a poll: seeing it, or the waiter served, both answer.
	eventually(t, 10*time.Second, "the big waiter queues or is served", func() bool {
		return semQueued(ctx, rdb, big, 4) || served.Load()
	})
	await(t, res, 20*time.Second, "Acquire(4) among small acquirers")
	t.Logf("Acquire(4) served after %v; small acquisitions so far %d", time.Since(start), small.Load())
	if semQueued(ctx, rdb, big, 4) {
		t.Fatal("place kept after the big waiter was served")
	}
	semAvail(t, ctx, big, 0)
	before := small.Load()
	semMust(t, big.Release(ctx, 4))
	eventually(t, 10*time.Second, "small acquirers resume", func() bool { return small.Load() > before+5 })
}

// A queued waiter holds newcomers back while it waits and leaves the queue
// when it gives up.
func TestSemaphoreQueuePlaceDroppedOnTimeout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	big := newClient(t, rdb, nil).GetSemaphore(name)
	other := newClient(t, rdb, nil).GetSemaphore(name)
	semTrySet(t, ctx, big, 2)
	res := make(chan bool, 1)
	go func() { ok, _ := big.TryAcquire(ctx, 3, 2500*time.Millisecond); res <- ok }()
	eventually(t, 5*time.Second, "the waiter queues", func() bool { return rdb.Exists(ctx, big.keys[1]).Val() == 1 })
	if ok, err := other.TryAcquire(ctx, 1, 0); ok || err != nil {
		t.Fatalf("newcomer TryAcquire(1) behind a waiter for 3 with 2 available = %v, %v; want false", ok, err)
	}
	if ok := <-res; ok {
		t.Fatal("TryAcquire(3) with 2 permits succeeded")
	}
	if rdb.Exists(ctx, big.keys[1], big.keys[2]).Val() != 0 {
		t.Fatal("place left in the queue after its waiter gave up")
	}
	if ok, err := other.TryAcquire(ctx, 1, 0); !ok || err != nil {
		t.Fatalf("TryAcquire(1) after the waiter left = %v, %v", ok, err)
	}
}

// The semaphore on a 3-master cluster: names on every master, waiters on
// another client woken by releases; a hash-tagged name works, a name with
// an incomplete tag is refused.
func TestSemaphoreCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	other := newClient(t, cl.Client(t), nil)
	ctx := testCtx(t, time.Minute)
	tagged := "{" + semLatchName(t, rdb) + "}:tagged"
	t.Cleanup(func() { rdb.Del(context.Background(), tagged); deleteSemLatchKeys(rdb, tagged) })
	names := []string{tagged}
	masters := map[string]bool{}
	for i := 0; i < 9 || len(masters) < 3 && i < 100; i++ { // until every master has one
		names = append(names, semLatchName(t, rdb)+fmt.Sprint(":", i))
		node, err := rdb.MasterForKey(ctx, names[len(names)-1])
		semMust(t, err)
		masters[node.Options().Addr] = true
	}
	if len(masters) != 3 {
		t.Fatalf("names landed on %d masters; want 3", len(masters))
	}
	var wg sync.WaitGroup
	for _, name := range names {
		semTrySet(t, ctx, c.GetSemaphore(name), 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := other.GetSemaphore(name)
			if ok, err := s.TryAcquire(ctx, 2, 20*time.Second); !ok || err != nil {
				t.Errorf("waiter on %s: %v, %v", name, ok, err)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	for _, name := range names {
		s := c.GetSemaphore(name)
		semMust(t, s.Release(ctx, 1))
		semMust(t, s.AddPermits(ctx, 1))
	}
	wg.Wait()
	for _, name := range names {
		s := c.GetSemaphore(name)
		semAvail(t, ctx, s, 0)
		if n, err := s.DrainPermits(ctx); n != 0 || err != nil {
			t.Fatalf("DrainPermits = %d, %v", n, err)
		}
	}
	if _, err := c.GetSemaphore("a{b").TryAcquire(ctx, 1, 0); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("name with an incomplete hash tag = %v; want ErrInvalidName", err)
	}
}

// semRTHook counts the round trips a go-redis client makes: one per
// command, one per pipeline, also by script (EVALSHA) or command name;
// connection set-up is left out. Pub/sub commands do not pass through
// hooks.
type semRTHook struct {
	cmds, pipes atomic.Int64
	mu          sync.Mutex
	by          map[string]int64 // round trips by script (EVALSHA) or command
}

// semScriptNames names the scripts of the semaphores by SHA, for semRTHook.
var semScriptNames = func() map[string]string {
	m := map[string]string{}
	for _, s := range []*script{scriptSemAcquire, scriptSemAdd, scriptSemCancel, scriptSemSet,
		scriptPermitAcquire, scriptPermitRelease, scriptPermitAdd, scriptPermitSet} {
		m[s.SHA()] = s.Name()
	}
	return m
}()

func (h *semRTHook) count(cmd redis.Cmder) {
	what := cmd.Name()
	if args := cmd.Args(); what == "evalsha" && len(args) > 1 {
		if sha, ok := args[1].(string); ok && semScriptNames[sha] != "" {
			what = semScriptNames[sha]
		}
	}
	h.mu.Lock()
	if h.by == nil {
		h.by = map[string]int64{}
	}
	h.by[what]++
	h.mu.Unlock()
}

// semBreakdown sums the hooks' round trips by script or command.
func semBreakdown(hooks []*semRTHook) map[string]int64 {
	sum := map[string]int64{}
	for _, h := range hooks {
		h.mu.Lock()
		for k, v := range h.by {
			sum[k] += v
		}
		h.mu.Unlock()
	}
	return sum
}

func (h *semRTHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *semRTHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !benchIsHandshake(cmd.Name()) {
			h.cmds.Add(1)
			h.count(cmd)
		}
		return next(ctx, cmd)
	}
}

func (h *semRTHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && !benchIsHandshake(cmds[0].Name()) {
			h.pipes.Add(1)
			h.count(cmds[0])
		}
		return next(ctx, cmds)
	}
}

func (h *semRTHook) roundTrips() int64 { return h.cmds.Load() + h.pipes.Load() }

// BenchmarkSemaphoreUncontended: Acquire(1) + Release(1) on one client,
// one goroutine, one permit. roundtrips/op includes the janitor's batched
// deletion of call markers.
func BenchmarkSemaphoreUncontended(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	h := &semRTHook{}
	rdb.AddHook(h)
	c := newClient(b, rdb, nil)
	ctx := context.Background()
	s := c.GetSemaphore("bench:sem")
	if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
		b.Fatal(ok, err)
	}
	cycle := func() {
		if err := s.Acquire(ctx, 1); err != nil {
			b.Fatal(err)
		}
		if err := s.Release(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
	cycle() // loads the scripts, dials
	b.ReportAllocs()
	rt0 := h.roundTrips()
	for b.Loop() {
		cycle()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

// BenchmarkSemaphoreContended: one permit, 8 goroutines over 4 clients,
// each looping Acquire(1), hold 20 ms, Release(1), for about 2 s of wall
// time whatever b.N is. See semContended for the metrics.
func BenchmarkSemaphoreContended(b *testing.B) {
	semContended(b, func(ctx context.Context, c *Client, name string, first bool) semWorker {
		s := c.GetSemaphore(name)
		if first {
			if ok, err := s.TrySetPermits(ctx, 1); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
		return func(ctx context.Context) (func(context.Context) error, error) {
			if err := s.Acquire(ctx, 1); err != nil {
				return nil, err
			}
			return func(ctx context.Context) error { return s.Release(ctx, 1) }, nil
		}
	})
}

// semWorker acquires once and returns the release of what it acquired.
type semWorker func(ctx context.Context) (release func(context.Context) error, err error)

// semContended runs the contended semaphore benchmarks: one permit, 8
// goroutines over 4 clients, each looping acquire, hold 20 ms, release, for
// about 2 s of wall time whatever b.N is. newWorker makes a goroutine's
// worker on its client (first: the first one, which sets the permit up).
// After a warm-up (one acquire and release per goroutine, not measured).
// Metrics: handoff, from just before a holder's release to the next
// holder's acquire returning; wait, acquire call to return; reacquire-rate,
// share of acquisitions by the goroutine that released last;
// roundtrips/acq, every client's hooked commands (pub/sub and connection
// set-up excluded) per acquisition, which the log breaks down by script.
func semContended(b *testing.B, newWorker func(ctx context.Context, c *Client, name string, first bool) semWorker) {
	const (
		hold       = 20 * time.Millisecond
		wall       = 2 * time.Second
		clients    = 4
		goroutines = 8
	)
	b.StopTimer()
	srv := redistest.Start(b)
	ctx := context.Background()
	var hooks []*semRTHook
	var cs []*Client
	for range clients {
		rdb := srv.Client(b)
		h := &semRTHook{}
		rdb.AddHook(h)
		hooks = append(hooks, h)
		cs = append(cs, newClient(b, rdb, nil))
	}
	const name = "bench:sem:contended"
	workers := make([]semWorker, goroutines)
	for g := range goroutines {
		workers[g] = newWorker(ctx, cs[g%clients], name, g == 0)
	}
	rts := func() (n int64) {
		for _, h := range hooks {
			n += h.roundTrips()
		}
		return n
	}
	// Warm-up, not measured: every worker acquires and releases once, so
	// that each client has its scripts loaded and its connections dialled
	// (one-off costs, about 0.09 round trips per acquisition of a 2 s run).
	for _, acquire := range workers {
		release, err := acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	type acq struct {
		g                       int
		called, got, releasedAt time.Duration
	}
	var (
		mu      sync.Mutex
		log     []acq
		holders atomic.Int32
		stop    atomic.Bool
		wg      sync.WaitGroup
	)
	rt0, by0 := rts(), semBreakdown(hooks)
	base := time.Now()
	b.StartTimer()
	for g, acquire := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				called := time.Since(base)
				release, err := acquire(ctx)
				if err != nil {
					b.Error(err)
					return
				}
				got := time.Since(base)
				if holders.Add(1) != 1 {
					b.Error("two holders of the only permit")
				}
				time.Sleep(hold)
				holders.Add(-1)
				rel := time.Since(base)
				if err := release(ctx); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				log = append(log, acq{g, called, got, rel})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(wall)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(base)
	b.StopTimer()
	if len(log) < 2 {
		b.Fatalf("only %d acquisitions", len(log))
	}
	sort.Slice(log, func(i, j int) bool { return log[i].got < log[j].got })
	var handoff, wait []time.Duration
	same := 0
	per := make([]int, goroutines)
	for i, a := range log {
		per[a.g]++
		wait = append(wait, a.got-a.called)
		if i == 0 {
			continue
		}
		handoff = append(handoff, a.got-log[i-1].releasedAt)
		if a.g == log[i-1].g {
			same++
		}
	}
	minPer, maxPer := per[0], per[0]
	for _, k := range per {
		minPer, maxPer = min(minPer, k), max(maxPer, k)
	}
	n := float64(len(log))
	b.ReportMetric(float64(elapsed.Nanoseconds())/n, "ns/op")
	b.ReportMetric(n/elapsed.Seconds(), "acq/s")
	b.ReportMetric(semMs(semPct(handoff, 0.50)), "handoff-p50-ms")
	b.ReportMetric(semMs(semPct(handoff, 0.99)), "handoff-p99-ms")
	b.ReportMetric(semMs(semPct(wait, 0.50)), "wait-p50-ms")
	b.ReportMetric(semMs(semPct(wait, 0.99)), "wait-p99-ms")
	b.ReportMetric(float64(rts()-rt0)/n, "roundtrips/acq")
	b.ReportMetric(float64(same)/(n-1), "reacquire-rate")
	b.ReportMetric(float64(maxPer)/float64(max(minPer, 1)), "fairness-max/min")
	b.Logf("%d acquisitions in %v; per goroutine %v", len(log), elapsed.Round(time.Millisecond), per)
	b.Logf("round trips per acquisition: %s", semPerAcq(semBreakdown(hooks), by0, n))
}

// semPerAcq formats the round trips counted since by0, per acquisition, by
// script or command.
func semPerAcq(by, by0 map[string]int64, n float64) string {
	var keys []string
	for k := range by {
		if by[k] > by0[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var sb strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&sb, "%s %.2f; ", k, float64(by[k]-by0[k])/n)
	}
	return sb.String()
}

func semPct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(max(int(math.Ceil(p*float64(len(s))))-1, 0), len(s)-1)]
}

func semMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TrySetPermits is the start-up call of every instance: of many concurrent
// calls from several clients exactly one sets the permits, and a later call
// leaves a count in use alone. The same for PermitExpirableSemaphore.
func TestSemaphoreTrySetPermitsAtStartUp(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	clients := []*Client{newClient(t, rdb, nil), newClient(t, rdb, nil), newClient(t, rdb, nil)}
	name, pname := semLatchName(t, rdb), semLatchName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), pname, suffixName(pname, "timeout")) })
	var mu sync.Mutex
	set, pset := 0, 0
	var wg sync.WaitGroup
	for i := range 12 {
		c := clients[i%len(clients)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := c.GetSemaphore(name).TrySetPermits(ctx, 5)
			pok, perr := c.GetPermitExpirableSemaphore(pname).TrySetPermits(ctx, 5)
			if err != nil || perr != nil {
				t.Errorf("TrySetPermits: %v, %v", err, perr)
			}
			mu.Lock()
			defer mu.Unlock()
			if ok {
				set++
			}
			if pok {
				pset++
			}
		}()
	}
	wg.Wait()
	if set != 1 || pset != 1 {
		t.Fatalf("concurrent TrySetPermits set the permits %d and %d times; want once each", set, pset)
	}
	s := clients[0].GetSemaphore(name)
	semMust(t, s.Acquire(ctx, 2))
	ps := clients[1].GetPermitExpirableSemaphore(pname)
	if _, err := ps.Acquire(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if ok, err := clients[2].GetSemaphore(name).TrySetPermits(ctx, 5); ok || err != nil {
		t.Fatalf("TrySetPermits on a semaphore in use = %v, %v; want false", ok, err)
	}
	if ok, err := clients[2].GetPermitExpirableSemaphore(pname).TrySetPermits(ctx, 5); ok || err != nil {
		t.Fatalf("TrySetPermits on a permit semaphore in use = %v, %v; want false", ok, err)
	}
	semAvail(t, ctx, s, 3)
	if n, err := ps.AvailablePermits(ctx); n != 4 || err != nil {
		t.Fatalf("permit semaphore available = %d, %v; want 4", n, err)
	}
}

// hookedClients returns n objects got by get, each on a Client of its own
// over a go-redis client of srv with a semRTHook of its own.
func hookedClients[S any](t *testing.T, srv *redistest.Server, n int, get func(*Client) S) ([]S, []*semRTHook) {
	t.Helper()
	var objs []S
	var hooks []*semRTHook
	for range n {
		rdb := srv.Client(t)
		h := &semRTHook{}
		rdb.AddHook(h)
		objs, hooks = append(objs, get(newClient(t, rdb, nil))), append(hooks, h)
	}
	return objs, hooks
}

// triesBy returns a reading of how many calls of script each hook's client
// has made so far.
func triesBy(hooks []*semRTHook, script string) func() []int64 {
	return func() (n []int64) {
		for _, h := range hooks {
			n = append(n, semBreakdown([]*semRTHook{h})[script])
		}
		return n
	}
}

// onlyServedTried fails t unless, since before, waiter want tried once and
// every other waiter not at all; it reads tries after a pause well within
// the waiters' one-second re-check.
func onlyServedTried(t *testing.T, what string, want int, before []int64, tries func() []int64) {
	t.Helper()
	time.Sleep(200 * time.Millisecond)
	after := tries()
	for i := range after {
		wantTries := int64(0)
		if i == want {
			wantTries = 1
		}
		if d := after[i] - before[i]; d != wantTries {
			t.Errorf("%s %d: waiter %d tried %d times; want %d", what, want, i, d, wantTries)
		}
	}
}
