package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func latchCount(t testing.TB, ctx context.Context, l *CountDownLatch, want int64) {
	t.Helper()
	if got, err := l.Count(ctx); err != nil || got != want {
		t.Fatalf("Count = %d, %v; want %d", got, err, want)
	}
}

func latchTrySet(t testing.TB, ctx context.Context, l *CountDownLatch, n int64) {
	t.Helper()
	if ok, err := l.TrySetCount(ctx, n); err != nil || !ok {
		t.Fatalf("TrySetCount(%d) = %v, %v; want true", n, ok, err)
	}
}

// Redisson's testCountDown, testTrySetCount, testCount, testDelete,
// testDeleteFailed.
func TestCountDownLatchCounting(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 10*time.Second)
	c := newClient(t, rdb, nil)
	l := c.GetCountDownLatch(semLatchName(t, rdb))
	latchCount(t, ctx, l, 0)
	semMust(t, l.Await(ctx)) // never set: open
	semMust(t, l.CountDown(ctx))
	latchCount(t, ctx, l, 0)
	if n := rdb.Exists(ctx, l.Name()).Val(); n != 0 {
		t.Fatal("CountDown on a missing latch created it")
	}
	latchTrySet(t, ctx, l, 2)
	if ok, err := l.TrySetCount(ctx, 5); ok || err != nil {
		t.Fatalf("TrySetCount on a set latch = %v, %v; want false", ok, err)
	}
	latchCount(t, ctx, l, 2)
	semMust(t, l.CountDown(ctx))
	latchCount(t, ctx, l, 1)
	if ok, err := l.TryAwait(ctx, 0); ok || err != nil {
		t.Fatalf("TryAwait(0) at count 1 = %v, %v; want false", ok, err)
	}
	semMust(t, l.CountDown(ctx))
	latchCount(t, ctx, l, 0)
	semMust(t, l.Await(ctx))
	semMust(t, l.CountDown(ctx))
	latchCount(t, ctx, l, 0)
	if n := rdb.Exists(ctx, l.Name()).Val(); n != 0 {
		t.Fatal("latch key left at zero")
	}

	latchTrySet(t, ctx, l, 1)
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v; want true", ok, err)
	}
	if ok, err := l.Delete(ctx); ok || err != nil {
		t.Fatalf("Delete of a missing latch = %v, %v; want false", ok, err)
	}
}

// Redisson's testAwaitTimeout, testAwaitTimeoutFail and testMultiAwait.
func TestCountDownLatchAwaitTimeout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	l := newClient(t, rdb, nil).GetCountDownLatch(semLatchName(t, rdb))
	other := newClient(t, rdb, nil).GetCountDownLatch(l.Name())
	latchTrySet(t, ctx, l, 1)
	if ok, err := l.TryAwait(ctx, 300*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAwait(300ms) at count 1 = %v, %v; want false, nil", ok, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if err := l.Await(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Await with expiring ctx = %v; want DeadlineExceeded", err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := other.CountDown(ctx); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	if ok, err := l.TryAwait(ctx, 10*time.Second); !ok || err != nil {
		t.Fatalf("TryAwait(10s) with a count-down at +300ms = %v, %v", ok, err)
	}
	t.Logf("released %v after the call (count-down at +300ms)", time.Since(start))

	latchTrySet(t, ctx, l, 5)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ok, err := l.TryAwait(ctx, 10*time.Second); !ok || err != nil {
				t.Errorf("TryAwait = %v, %v", ok, err)
			}
		}()
	}
	for range 5 {
		time.Sleep(20 * time.Millisecond)
		semMust(t, other.CountDown(ctx))
	}
	wg.Wait()
	latchCount(t, ctx, l, 0)
}

// N waiters spread over 3 clients are all released by the count-down that
// reaches zero, while as many goroutines count down concurrently
// (Redisson's testSingleCountDownAwait_SingleInstance, across clients).
func TestCountDownLatchReleasesAllAcrossClients(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := semLatchName(t, rdb)
	const n = 12
	latchTrySet(t, ctx, newClient(t, rdb, nil).GetCountDownLatch(name), n)
	var clients []*Client
	for range 3 {
		clients = append(clients, newClient(t, sharedRedis(t), nil))
	}
	var released atomic.Int32
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := clients[i%3].GetCountDownLatch(name)
			if err := l.Await(ctx); err != nil {
				t.Error(err)
				return
			}
			if c, err := l.Count(ctx); c != 0 || err != nil {
				t.Errorf("released waiter sees count %d, %v", c, err)
			}
			released.Add(1)
		}()
	}
	channel := "redisson_countdownlatch__channel__{" + name + "}"
	waitSubscribers(t, rdb, channel, 3) // one subscription per client
	if got := released.Load(); got != 0 {
		t.Fatalf("%d waiters released before the count reached zero", got)
	}
	var cd sync.WaitGroup
	for i := range n {
		cd.Add(1)
		go func() {
			defer cd.Done()
			if err := clients[(i+1)%3].GetCountDownLatch(name).CountDown(ctx); err != nil {
				t.Error(err)
			}
		}()
	}
	cd.Wait()
	done := async(func() error { wg.Wait(); return nil })
	await(t, done, wakeBound, "every waiter released")
	if got := released.Load(); got != n {
		t.Fatalf("%d of %d waiters released", got, n)
	}
}

// A latch that opens without a message (deleted by a foreign writer) only
// delays its waiters by the re-check interval; Delete releases them at once.
func TestCountDownLatchMissedMessageBounded(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	l := newClient(t, rdb, nil).GetCountDownLatch(semLatchName(t, rdb))
	latchTrySet(t, ctx, l, 3)
	done := async(func() error { return l.Await(ctx) })
	waitSubscribers(t, rdb, l.channel, 1)
	start := time.Now()
	rdb.Del(ctx, l.Name()) // no message
	await(t, done, wakeBound, "Await after a silent DEL")
	t.Logf("waiter released %v after the silent delete", time.Since(start))

	latchTrySet(t, ctx, l, 3)
	other := newClient(t, rdb, nil).GetCountDownLatch(l.Name())
	done = async(func() error { return other.Await(ctx) })
	waitSubscribers(t, rdb, l.channel, 2)
	start = time.Now()
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	await(t, done, wakeBound, "Await after Delete")
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("waiter took %v after Delete: woken by its re-check, not the message", d)
	}
}

func TestCountDownLatchBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 20*time.Second)
	hashName := semLatchName(t, rdb)
	rdb.HSet(ctx, hashName, "f", "v")
	textName := semLatchName(t, rdb)
	rdb.Set(ctx, textName, "many", 0)
	freeName := semLatchName(t, rdb)

	type call func(l *CountDownLatch) error
	calls := map[string]call{
		"TrySetCount": func(l *CountDownLatch) error { _, err := l.TrySetCount(ctx, 1); return err },
		"CountDown":   func(l *CountDownLatch) error { return l.CountDown(ctx) },
		"Count":       func(l *CountDownLatch) error { _, err := l.Count(ctx); return err },
		"Await":       func(l *CountDownLatch) error { return l.Await(ctx) },
		"TryAwait":    func(l *CountDownLatch) error { _, err := l.TryAwait(ctx, time.Second); return err },
	}
	type tc struct {
		name, latch string
		call        call
		want        error
	}
	var cases []tc
	for what, f := range calls {
		cases = append(cases, tc{"empty name " + what, "", f, ErrEmptyName})
		cases = append(cases, tc{"hash key " + what, hashName, f, ErrWrongType})
		if what != "TrySetCount" { // a string key is a set latch: TrySetCount reports false
			cases = append(cases, tc{"non-integer " + what, textName, f, ErrWrongType})
		}
	}
	cases = append(cases,
		tc{"empty name Delete", "", func(l *CountDownLatch) error { _, err := l.Delete(ctx); return err }, ErrEmptyName},
		tc{"zero count", freeName, func(l *CountDownLatch) error { _, err := l.TrySetCount(ctx, 0); return err }, ErrInvalidCount},
		tc{"negative count", freeName, func(l *CountDownLatch) error { _, err := l.TrySetCount(ctx, -3); return err }, ErrInvalidCount},
		tc{"negative wait", freeName, func(l *CountDownLatch) error { _, err := l.TryAwait(ctx, -time.Second); return err }, ErrNegativeDuration},
	)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := semState(t, rdb, tc.latch)
			err := tc.call(c.GetCountDownLatch(tc.latch))
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v; want %v", err, tc.want)
			}
			if after := semState(t, rdb, tc.latch); after != before {
				t.Fatalf("Redis changed:\n before %s\n after  %s", before, after)
			}
		})
	}
}

// Cancelled and timed-out waits leave the count as it was and no
// subscription behind.
func TestCountDownLatchCancelledWaitLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetCountDownLatch(semLatchName(t, rdb))
	latchTrySet(t, ctx, l, 2)
	var wg sync.WaitGroup
	for range 5 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, 1200*time.Millisecond)
			defer cancel()
			if err := c.GetCountDownLatch(l.Name()).Await(cctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Await with expiring ctx = %v; want DeadlineExceeded", err)
			}
		}()
		go func() {
			defer wg.Done()
			if ok, err := l.TryAwait(ctx, 150*time.Millisecond); ok || err != nil {
				t.Errorf("TryAwait = %v, %v; want false, nil", ok, err)
			}
		}()
	}
	wg.Wait()
	latchCount(t, ctx, l, 2)
	eventually(t, 10*time.Second, "PUBSUB NUMSUB back to 0", func() bool {
		return rdb.PubSubNumSub(ctx, l.channel).Val()[l.channel] == 0
	})
	eventually(t, 5*time.Second, "client tracks no channel", func() bool { return c.pubsub.stats().channels == 0 })
}

// A CountDown or TrySetCount whose reply was lost and that go-redis resent
// counts once.
func TestCountDownLatchIdempotentAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	warm := c.GetCountDownLatch("warm")
	warm.TrySetCount(ctx, 1)
	warm.CountDown(ctx)

	l := c.GetCountDownLatch(semLatchName(t, direct))
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"TrySetCount(3)", func() error {
			ok, err := l.TrySetCount(ctx, 3)
			if err == nil && !ok {
				err = errors.New("reported false")
			}
			return err
		}, "3"},
		{"CountDown", func() error { return l.CountDown(ctx) }, "2"},
		{"CountDown", func() error { return l.CountDown(ctx) }, "1"},
		{"CountDown", func() error { return l.CountDown(ctx) }, ""},
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
		if got := direct.Get(ctx, l.Name()).Val(); got != st.want {
			t.Fatalf("%s with a lost reply left count %q; want %q", st.name, got, st.want)
		}
	}
}

func TestCountDownLatchWakePolicy(t *testing.T) {
	for payload, want := range map[string]wake{
		"0": {n: -1},
		"1": {n: -1},
		"2": {ignored: true},
		"x": {ignored: true},
	} {
		if got := latchWakePolicy(payload); got != want {
			t.Errorf("latchWakePolicy(%q) = %+v; want %+v", payload, got, want)
		}
	}
}

// The latch on a 3-master cluster: names on every master, a hash-tagged
// name whose Redisson channel lies in another slot, waiters on other
// clients released by the last count-down; a name with an incomplete tag is
// refused.
func TestCountDownLatchCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	waiters := []*Client{newClient(t, cl.Client(t), nil), newClient(t, cl.Client(t), nil)}
	ctx := testCtx(t, time.Minute)
	tagged := "{" + semLatchName(t, rdb) + "}:7"
	t.Cleanup(func() { rdb.Del(context.Background(), tagged); deleteSemLatchKeys(rdb, tagged) })
	if l := c.GetCountDownLatch(tagged); hashSlot(l.channel) == hashSlot(tagged) || l.inKeys {
		t.Fatalf("test premise: channel %s in the slot of %s", l.channel, tagged)
	}
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
		latchTrySet(t, ctx, c.GetCountDownLatch(name), 2)
		for _, w := range waiters {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if ok, err := w.GetCountDownLatch(name).TryAwait(ctx, 20*time.Second); !ok || err != nil {
					t.Errorf("waiter on %s: %v, %v", name, ok, err)
				}
			}()
		}
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	for _, name := range names {
		l := c.GetCountDownLatch(name)
		semMust(t, l.CountDown(ctx))
		semMust(t, l.CountDown(ctx))
	}
	wg.Wait()
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("waiters released %v after the count-downs: by re-checks, not messages", d)
	}
	for _, name := range names {
		latchCount(t, ctx, c.GetCountDownLatch(name), 0)
	}
	l := c.GetCountDownLatch(tagged)
	latchTrySet(t, ctx, l, 1)
	if ok, err := l.Delete(ctx); !ok || err != nil {
		t.Fatalf("Delete of %s = %v, %v", tagged, ok, err)
	}
	if _, err := c.GetCountDownLatch("a{b").Count(ctx); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("name with an incomplete hash tag = %v; want ErrInvalidName", err)
	}
}
