package redisson

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestBlockingQueueTakeWokenByOtherClient checks that a Take waiting on an
// empty queue gets an element offered by another client, and that Poll's
// wait runs out with false and leaves nothing behind.
func TestBlockingQueueTakeWokenByOtherClient(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	a := GetBlockingQueue[string](newClient(t, rdb, nil), name)
	b := GetBlockingQueue[string](newClient(t, rdb, nil), name)
	if v, ok, err := a.Poll(ctx, 200*time.Millisecond); err != nil || ok {
		t.Fatalf("Poll on empty = %q, %v, %v; want false", v, ok, err)
	}
	got := make(chan string, 1)
	go func() {
		v, err := a.Take(ctx)
		if err != nil {
			v = "error: " + err.Error()
		}
		got <- v
	}()
	time.Sleep(100 * time.Millisecond)
	if err := b.Offer(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != "x" {
			t.Fatalf("Take = %q, want x", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Take not woken by the other client's Offer")
	}
	if keys := nameState(t, rdb, name); keys != "" {
		t.Fatalf("keys left behind: %s", keys)
	}
	// Poll(ctx, 0) is one LPOP.
	b.Offer(ctx, "y")
	if v, ok, err := a.Poll(ctx, 0); err != nil || !ok || v != "y" {
		t.Fatalf("Poll(0) = %q, %v, %v; want y", v, ok, err)
	}
}

// TestBlockingQueueDrainAndPollFromAny checks Drain's order and bound, and
// PollFromAny across queues, with nothing left in flight.
func TestBlockingQueueDrainAndPollFromAny(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name, other := uniqueName(t, rdb), uniqueName(t, rdb)
	q := GetBlockingQueue[int](c, name)
	for i := range 5 {
		q.Offer(ctx, i)
	}
	if got, err := q.Drain(ctx, 3); err != nil || !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("Drain(3) = %v, %v; want [0 1 2]", got, err)
	}
	if got, err := q.Drain(ctx, 100); err != nil || !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("Drain(100) = %v, %v; want [3 4]", got, err)
	}
	if got, err := q.Drain(ctx, 100); err != nil || len(got) != 0 {
		t.Fatalf("Drain on empty = %v, %v; want []", got, err)
	}
	if _, err := q.Drain(ctx, 0); !errors.Is(err, ErrInvalidBatch) {
		t.Fatalf("Drain(0): got %v, want ErrInvalidBatch", err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		GetQueue[int](c, other).Offer(ctx, 42)
	}()
	if v, ok, err := q.PollFromAny(ctx, 10*time.Second, other); err != nil || !ok || v != 42 {
		t.Fatalf("PollFromAny = %v, %v, %v; want 42 from the other queue", v, ok, err)
	}
	GetQueue[int](c, other).Offer(ctx, 7)
	if v, ok, err := q.PollFromAny(ctx, 0, other); err != nil || !ok || v != 7 {
		t.Fatalf("PollFromAny(0) = %v, %v, %v; want 7", v, ok, err)
	}
	if v, ok, err := q.PollFromAny(ctx, 100*time.Millisecond, other); err != nil || ok {
		t.Fatalf("PollFromAny on empty queues = %v, %v, %v; want false", v, ok, err)
	}
	if _, _, err := q.PollFromAny(ctx, time.Second, ""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("PollFromAny with an empty name: got %v, want ErrEmptyName", err)
	}
	for _, n := range []string{name, other} {
		// A loop still in its BLMOVE (up to takeBlock) keeps its
		// registration until it ends.
		eventually(t, 10*time.Second, "no keys left of "+n, func() bool { return nameState(t, rdb, n) == "" })
		if keys := nameState(t, rdb, n); keys != "" {
			t.Fatalf("keys left behind: %s", keys)
		}
	}
}

// TestBlockingQueueBadInput checks the sentinels of bad input, Redis
// unchanged, and ErrWrongType for every blocking call on a hash.
func TestBlockingQueueBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name, "f", "v")
	q := GetBlockingQueue[*string](c, name)
	empty := GetBlockingQueue[string](c, "")
	for _, tc := range []struct {
		what string
		call func() error
		want error
	}{
		{"Offer nil", func() error { return q.Offer(ctx, nil) }, ErrNilValue},
		{"Poll negative", func() error { _, _, err := q.Poll(ctx, -time.Second); return err }, ErrNegativeDuration},
		{"PollFromAny negative", func() error { _, _, err := q.PollFromAny(ctx, -time.Second, "x"); return err }, ErrNegativeDuration},
		{"Drain negative", func() error { _, err := q.Drain(ctx, -1); return err }, ErrInvalidBatch},
		{"empty Take", func() error { _, err := empty.Take(ctx); return err }, ErrEmptyName},
		{"empty Poll", func() error { _, _, err := empty.Poll(ctx, time.Second); return err }, ErrEmptyName},
		{"empty Drain", func() error { _, err := empty.Drain(ctx, 1); return err }, ErrEmptyName},
		{"Take on a hash", func() error { _, err := q.Take(ctx); return err }, ErrWrongType},
		{"Poll wait on a hash", func() error { _, _, err := q.Poll(ctx, time.Second); return err }, ErrWrongType},
		{"Poll(0) on a hash", func() error { _, _, err := q.Poll(ctx, 0); return err }, ErrWrongType},
		{"Drain on a hash", func() error { _, err := q.Drain(ctx, 10); return err }, ErrWrongType},
		{"PollFromAny on a hash", func() error { _, _, err := q.PollFromAny(ctx, time.Second, name+"x"); return err }, ErrWrongType},
	} {
		before := nameState(t, rdb, name)
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
		// PollFromAny's loop on the other queue (its name has this one's
		// as a prefix) keeps its registration until its BLMOVE ends: what
		// a call leaves is read once every dispatcher loop has ended.
		eventually(t, 25*time.Second, tc.what+": the dispatcher loops end", func() bool { l, _ := c.queues.stats(); return l == 0 })
		if after := nameState(t, rdb, name); after != before {
			t.Errorf("%s: Redis changed:\n got %s\nwant %s", tc.what, after, before)
		}
	}
}

// retypeBeforeBlock makes the queue key a hash just before a dispatcher's
// BLMOVE is sent, so that Redis refuses that BLMOVE after queue_take has
// registered the loop's in-flight list.
type retypeBeforeBlock struct {
	admin redis.UniversalClient
	queue string
	done  atomic.Bool
}

func (h *retypeBeforeBlock) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *retypeBeforeBlock) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "blmove" && h.done.CompareAndSwap(false, true) {
			h.admin.HSet(context.WithoutCancel(ctx), h.queue, "f", "v")
		}
		return next(ctx, cmd)
	}
}

func (h *retypeBeforeBlock) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestBlockingQueueRefusedBlockLeavesNoRegistration checks that a
// dispatcher loop whose BLMOVE Redis refuses (the queue became a hash after
// the loop registered its in-flight list) fails its taker with
// ErrWrongType and removes its registration before it ends.
func TestBlockingQueueRefusedBlockLeavesNoRegistration(t *testing.T) {
	admin := sharedRedis(t)
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, admin)
	hook := &retypeBeforeBlock{admin: admin, queue: name}
	rdb.AddHook(hook)
	c := newClient(t, rdb, nil)
	q := GetBlockingQueue[string](c, name)
	if _, _, err := q.Poll(ctx, 5*time.Second); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Poll while the queue turns into a hash: got %v, want ErrWrongType", err)
	}
	if !hook.done.Load() {
		t.Fatal("no BLMOVE was sent: the refusal was not exercised")
	}
	eventually(t, 25*time.Second, "the dispatcher loop ends", func() bool { l, _ := c.queues.stats(); return l == 0 })
	if n := admin.Exists(ctx, registryKey(name)).Val(); n != 0 {
		t.Fatalf("registry %s left behind: %s", registryKey(name), nameState(t, admin, name))
	}
}

// TestBlockingQueueCancelledTakeLeavesNothing checks that a Take whose
// context ends, or whose client closes, returns promptly with that error,
// that an element offered afterwards stays in the queue, and that Close
// joins the dispatcher loop.
func TestBlockingQueueCancelledTakeLeavesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetBlockingQueue[string](c, name)
	tctx, cancel := context.WithCancel(ctx)
	done := async(func() error { _, err := q.Take(tctx); return err })
	eventually(t, 5*time.Second, "the dispatcher runs", func() bool { l, _ := c.queues.stats(); return l == 1 })
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled Take: got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelled Take did not return")
	}
	// The loop may still block for up to a second: an element offered
	// now goes back to the queue, not to the gone taker.
	other := GetQueue[string](newClient(t, rdb, nil), name)
	other.Offer(ctx, "kept")
	eventually(t, 5*time.Second, "the dispatcher ends", func() bool { l, _ := c.queues.stats(); return l == 0 })
	if all, _ := other.ReadAll(ctx); !slices.Equal(all, []string{"kept"}) {
		t.Fatalf("queue after the cancelled take = %v, want [kept]", all)
	}
	other.Poll(ctx)

	// Close ends waiting takes with ErrClientClosed at once.
	var errs []<-chan error
	for range 10 {
		errs = append(errs, async(func() error { _, err := q.Take(ctx); return err }))
	}
	eventually(t, 5*time.Second, "the takers wait", func() bool { _, n := c.queues.stats(); return n == 10 })
	closed := async(c.Close)
	for _, ch := range errs {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClientClosed) {
				t.Fatalf("Take during Close: got %v, want ErrClientClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Take did not return after Close")
		}
	}
	await(t, closed, 10*time.Second, "Close")
	if _, err := q.Take(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Take after Close: got %v, want ErrClientClosed", err)
	}
	if keys := nameState(t, rdb, name); keys != "" {
		t.Fatalf("keys left behind: %s", keys)
	}
}

// TestBlockingQueueThousandTakers checks that 1,000 takers waiting on one
// client share one dispatcher loop, that other calls of the client go on
// meanwhile on a pool of 10 connections, and that each taker gets exactly
// one of 1,000 elements.
func TestBlockingQueueThousandTakers(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 10 })
	ctx := testCtx(t, 2*time.Minute)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	q := GetBlockingQueue[int](c, name)
	const n = 1000
	got := make(chan int, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := q.Take(ctx)
			if err != nil {
				t.Errorf("Take: %v", err)
				return
			}
			got <- v
		}()
	}
	eventually(t, 30*time.Second, "1000 takers wait", func() bool { _, w := c.queues.stats(); return w == n })
	if loops, _ := c.queues.stats(); loops != 1 {
		t.Fatalf("%d dispatcher loops for one queue, want 1", loops)
	}
	// The pool still serves the client's other calls.
	m := GetMap[string, int](c, name+":map")
	for i := range 20 {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err := m.FastPut(cctx, "k", i)
		cancel()
		if err != nil {
			t.Fatalf("a call while 1000 takers wait: %v", err)
		}
	}
	m.Delete(ctx)
	producer := GetQueue[int](newClient(t, rdb, nil), name)
	for i := range n {
		if err := producer.Offer(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(got)
	seen := map[int]bool{}
	for v := range got {
		if seen[v] {
			t.Fatalf("element %d taken twice", v)
		}
		seen[v] = true
	}
	if len(seen) != n {
		t.Fatalf("%d elements taken, want %d", len(seen), n)
	}
}

// TestBlockingQueueNothingLost: three clients' takers take with random
// cancellations and timeouts while three producers offer 5,000 distinct
// elements; every element is then delivered exactly once or still in the
// queue.
func TestBlockingQueueNothingLost(t *testing.T) {
	rdb := sharedRedis(t)
	nothingLost(t, rdb, func(i int) redis.UniversalClient { return rdb }, nil, false)
}

// TestBlockingQueueNothingLostConnectionDrops is TestBlockingQueueNothingLost
// with the takers' client behind a proxy that drops its connections again
// and again, mid-BLMOVE and mid-settle.
func TestBlockingQueueNothingLostConnectionDrops(t *testing.T) {
	nothingLostConnectionDrops(t, false)
}

// nothingLostConnectionDrops runs nothingLost (of a BlockingQueue, or of a
// BlockingDeque taken at both ends) behind the dropping proxy.
func nothingLostConnectionDrops(t *testing.T, deque bool) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	taker := redis.NewClient(&redis.Options{Addr: proxy.Addr()})
	t.Cleanup(func() { taker.Close() })
	stop := make(chan struct{})
	var dropper sync.WaitGroup
	dropper.Add(1)
	go func() {
		defer dropper.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Duration(20+rand.IntN(60)) * time.Millisecond):
				if rand.IntN(2) == 0 {
					proxy.CloseAll()
				} else {
					proxy.DropNextReply()
				}
			}
		}
	}()
	nothingLost(t, rdb, func(i int) redis.UniversalClient {
		if i == 0 {
			return taker
		}
		return rdb
	}, func() {
		close(stop)
		dropper.Wait()
		if proxy.Dropped() == 0 {
			t.Error("the proxy dropped no reply: the faults did not happen")
		}
		t.Logf("%d replies dropped", proxy.Dropped())
	}, deque)
}

// nothingLost runs the exactly-once check: takers on three clients (the
// rdb of client i is takerRDB(i)), producers on rdb. With deque the takers
// use a BlockingDeque and take at either end, at random.
func nothingLost(t *testing.T, rdb redis.UniversalClient, takerRDB func(i int) redis.UniversalClient, stopFaults func(), deque bool) {
	ctx := testCtx(t, 4*time.Minute)
	name := uniqueName(t, rdb)
	const total, producers, takersPer = 5000, 3, 8
	var mu sync.Mutex
	delivered := map[int]int{}
	var clients []*Client
	for i := range 3 {
		clients = append(clients, newClient(t, takerRDB(i), &Options{CleanupTimeout: 20 * time.Second}))
	}
	var produced sync.WaitGroup
	for p := range producers {
		produced.Add(1)
		go func() {
			defer produced.Done()
			q := GetQueue[int](newClient(t, rdb, nil), name)
			for i := p; i < total; i += producers {
				if err := q.Offer(ctx, i); err != nil {
					t.Errorf("Offer %d: %v", i, err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	var takers sync.WaitGroup
	for _, c := range clients {
		d := GetBlockingDeque[int](c, name)
		q := GetBlockingQueue[int](c, name)
		for range takersPer {
			takers.Add(1)
			go func() {
				defer takers.Done()
				for {
					select {
					case <-done:
						return
					default:
					}
					tctx, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(30))*time.Millisecond)
					if rand.IntN(3) == 0 {
						cancel() // some takes end before they start
					}
					var v int
					var ok bool
					var err error
					wait := time.Duration(1+rand.IntN(20)) * time.Millisecond
					switch r := rand.IntN(2); {
					case deque && rand.IntN(2) == 0 && r == 0:
						v, err = d.TakeLast(tctx)
						ok = err == nil
					case deque && r == 1 && rand.IntN(2) == 0:
						v, ok, err = d.PollLast(tctx, wait)
					case r == 0:
						v, err = q.Take(tctx)
						ok = err == nil
					default:
						v, ok, err = q.Poll(tctx, wait)
					}
					cancel()
					if ok {
						mu.Lock()
						delivered[v]++
						mu.Unlock()
					}
				}
			}()
		}
	}
	produced.Wait()
	time.Sleep(2 * time.Second)
	close(done)
	takers.Wait()
	if stopFaults != nil {
		stopFaults()
	}
	for _, c := range clients {
		c.Close() // settles what is in flight
	}
	rest, err := GetQueue[int](newClient(t, rdb, nil), name).ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range rest {
		delivered[v]++
	}
	var missing, dup []int
	for i := range total {
		switch delivered[i] {
		case 0:
			missing = append(missing, i)
		case 1:
		default:
			dup = append(dup, i)
		}
	}
	if len(missing) > 0 || len(dup) > 0 || len(delivered) != total {
		t.Fatalf("missing %d %v, duplicated %d %v, %d distinct (want %d)", len(missing), head(missing), len(dup), head(dup), len(delivered), total)
	}
	t.Logf("%d delivered, %d left in the queue", total-len(rest), len(rest))
	for _, pre := range []string{"redisson_queue_inflight", "redisson_bqueue_inflight", "redisson_queue_drain"} {
		if keys := rdb.Keys(ctx, prefixName(pre, name)+"*").Val(); len(keys) > 0 {
			t.Fatalf("in-flight lists left behind: %v", keys)
		}
	}
}

func head(v []int) []int { return v[:min(len(v), 10)] }

// TestBlockingQueueInteropWithRedisson: a Go Offer wakes a Redisson-style
// BLPOP taker, and a Redisson-style RPUSH wakes a Go Take.
func TestBlockingQueueInteropWithRedisson(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	q := GetBlockingQueue[string](newClient(t, rdb, nil), name)
	java := newForeignQueue(sharedRedis(t), name)
	got := make(chan string, 1)
	go func() {
		v, _, err := java.take(ctx, 10)
		if err != nil {
			v = err.Error()
		}
		got <- v
	}()
	eventually(t, 5*time.Second, "the Java taker blocks", func() bool {
		return blockedClients(ctx, rdb) >= 1
	})
	if err := q.Offer(ctx, "from go"); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "from go" {
		t.Fatalf("Java take = %q, want from go", v)
	}
	taken := make(chan string, 1)
	go func() {
		v, err := q.Take(ctx)
		if err != nil {
			v = err.Error()
		}
		taken <- v
	}()
	eventually(t, 5*time.Second, "the Go taker blocks", func() bool { return blockedClients(ctx, rdb) >= 1 })
	if err := java.offer(ctx, "from java"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-taken:
		if v != "from java" {
			t.Fatalf("Go Take = %q, want from java", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Go Take not woken by the Java offer")
	}
}

// blockedClients reads blocked_clients from INFO clients.
func blockedClients(ctx context.Context, rdb redis.UniversalClient) int {
	info := rdb.Info(ctx, "clients").Val()
	var n int
	for _, line := range strings.Split(info, "\n") {
		if _, err := fmt.Sscanf(line, "blocked_clients:%d", &n); err == nil {
			return n
		}
	}
	return 0
}

// TestClusterQueues: on a 3-master cluster, queues on every master deliver
// each element once to takers of two clients; PollFromAny takes from
// queues sharing a {tag} (one slot, as Redisson's BLPOP needs) and from
// queues in different slots; a name with a brace but no tag is
// ErrInvalidName; a bounded queue's Put is woken by a take (sharded
// pub/sub).
func TestClusterQueues(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	a, b := newClient(t, rdb, nil), newClient(t, rdb, nil)
	base := uniqueName(t, rdb)
	masters := map[string]bool{}
	var names []string
	for i := range 9 {
		n := fmt.Sprintf("%s:%d", base, i)
		names = append(names, n)
		node, err := rdb.MasterForKey(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		t.Cleanup(func() { rdb.Del(context.Background(), n) })
	}
	if len(masters) != 3 {
		t.Fatalf("names on %d masters, want 3", len(masters))
	}
	const per = 50
	for _, n := range names {
		got := make(chan int, 2*per)
		var wg sync.WaitGroup
		for _, c := range []*Client{a, b} {
			q := GetBlockingQueue[int](c, n)
			for range per {
				wg.Add(1)
				go func() {
					defer wg.Done()
					v, ok, err := q.Poll(ctx, 5*time.Second)
					if err != nil {
						t.Errorf("%s: Poll: %v", n, err)
					}
					if ok {
						got <- v
					}
				}()
			}
		}
		p := GetQueue[int](a, n)
		for i := range 2 * per {
			if err := p.Offer(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
		close(got)
		seen := map[int]bool{}
		for v := range got {
			if seen[v] {
				t.Fatalf("%s: %d taken twice", n, v)
			}
			seen[v] = true
		}
		if len(seen) != 2*per {
			t.Fatalf("%s: %d taken, want %d", n, len(seen), 2*per)
		}
	}

	tagged := GetBlockingQueue[string](a, "{"+base+"}:one")
	t.Cleanup(func() { rdb.Del(context.Background(), "{"+base+"}:one", "{"+base+"}:two") })
	go func() {
		time.Sleep(100 * time.Millisecond)
		GetQueue[string](b, "{"+base+"}:two").Offer(ctx, "tagged")
	}()
	if v, ok, err := tagged.PollFromAny(ctx, 10*time.Second, "{"+base+"}:two"); err != nil || !ok || v != "tagged" {
		t.Fatalf("PollFromAny in one slot = %q, %v, %v", v, ok, err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		GetQueue[string](b, names[4]).Offer(ctx, "elsewhere")
	}()
	if v, ok, err := tagged.PollFromAny(ctx, 10*time.Second, names[4]); err != nil || !ok || v != "elsewhere" {
		t.Fatalf("PollFromAny across slots = %q, %v, %v", v, ok, err)
	}
	if _, _, err := tagged.PollFromAny(ctx, time.Second, "bad{name"); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("PollFromAny with a brace but no tag: got %v, want ErrInvalidName", err)
	}
	if _, err := GetBlockingQueue[string](a, "bad{name").Take(ctx); !errors.Is(err, ErrInvalidName) {
		t.Fatalf("Take on a brace without a tag: got %v, want ErrInvalidName", err)
	}

	bq := GetBoundedBlockingQueue[string](a, names[7])
	t.Cleanup(func() { rdb.Del(context.Background(), boundedCapKey(names[7])) })
	bq.TrySetCapacity(ctx, 1)
	if err := bq.Put(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	put := async(func() error { return bq.Put(ctx, "y") })
	time.Sleep(200 * time.Millisecond)
	stillBlocked(t, put, "Put on a full queue")
	if v, err := GetBoundedBlockingQueue[string](b, names[7]).Take(ctx); err != nil || v != "x" {
		t.Fatalf("Take = %q, %v", v, err)
	}
	await(t, put, 10*time.Second, "Put after a take on a cluster")
}

// TestBlockingQueueLostBLMOVEReply: the reply carrying an element to the
// dispatcher's BLMOVE is dropped (go-redis then resends the BLMOVE, which
// blocks on the now empty queue); the element, left in the in-flight list,
// is put back and still reaches the waiting taker.
func TestBlockingQueueLostBLMOVEReply(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 30*time.Second)
	proxy := redistest.NewProxy(t, srv.Addr())
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr()})
	t.Cleanup(func() { via.Close() })
	name := uniqueName(t, rdb)
	c := newClient(t, via, nil)
	q := GetBlockingQueue[string](c, name)
	if err := q.Offer(ctx, "warm"); err != nil { // dial and load scripts first
		t.Fatal(err)
	}
	if v, _ := q.Take(ctx); v != "warm" {
		t.Fatalf("Take = %q, want warm", v)
	}
	got := make(chan string, 1)
	go func() {
		v, ok, err := q.Poll(ctx, 20*time.Second)
		got <- fmt.Sprintf("%s %v %v", v, ok, err)
	}()
	eventually(t, 5*time.Second, "the take blocks", func() bool { return blockedClients(ctx, rdb) >= 1 })
	proxy.DropNextReply()
	if err := GetQueue[string](newClient(t, rdb, nil), name).Offer(ctx, "e1"); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-got:
		if r != "e1 true <nil>" {
			t.Fatalf("Poll = %s, want e1 true <nil>", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("the element whose reply was lost never reached the taker (queue %v, in flight %v)",
			rdb.LRange(ctx, name, 0, -1).Val(), rdb.LRange(ctx, inflightKey(c.id, name, false), 0, -1).Val())
	}
	if proxy.Dropped() != 1 {
		t.Fatalf("%d replies dropped, want 1", proxy.Dropped())
	}
	if n := rdb.Exists(ctx, name, inflightKey(c.id, name, false)).Val(); n != 0 {
		t.Fatalf("%d keys left", n)
	}
}

// TestQueueSettleScript checks queue_settle.lua on its own: the handed
// elements leave the in-flight list, the others go back to the head in
// their order, a bounded queue's counter grows by the number handed and is
// published, and running it again changes nothing.
func TestQueueSettleScript(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	inflight, capKey, channel := inflightKey(c.id, name, true), boundedCapKey(name), boundedChannel(name)
	t.Cleanup(func() { rdb.Del(context.Background(), inflight, capKey) })
	rdb.RPush(ctx, name, "z")
	rdb.RPush(ctx, inflight, "a", "b", "c", "b")
	rdb.Set(ctx, capKey, 0, 0)
	keys := []string{name, inflight, registryKey(name), capKey, channel}
	for run := range 2 {
		if err := c.scripts.run(ctx, scriptQueueSettle, keys, "publish", "b", "c").Err(); err != nil {
			t.Fatal(err)
		}
		if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, []string{"a", "b", "z"}) {
			t.Fatalf("run %d: queue = %v, want [a b z]", run, got)
		}
		if n := rdb.Exists(ctx, inflight).Val(); n != 0 {
			t.Fatalf("run %d: the in-flight list is still there", run)
		}
		if v := rdb.Get(ctx, capKey).Val(); v != "2" {
			t.Fatalf("run %d: capacity counter = %s, want 2", run, v)
		}
	}
}

// deadInFlight writes what a client that died between a move and its
// settle leaves: its in-flight list key holding vals, registered in the
// queue's registry with a deadline already past.
func deadInFlight(t *testing.T, rdb redis.UniversalClient, name, key string, vals ...string) {
	t.Helper()
	ctx := context.Background()
	args := make([]any, len(vals))
	for i, v := range vals {
		args[i] = v
	}
	if err := rdb.RPush(ctx, key, args...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, registryKey(name), redis.Z{Score: 1, Member: key}).Err(); err != nil {
		t.Fatal(err)
	}
}

// noneInFlight checks that no in-flight list of queue name is left and
// that its registry holds only the marks of the lists recovered (one per
// recovered list, each to be dropped by a take once it expires).
func noneInFlight(t *testing.T, rdb redis.UniversalClient, name string, recovered int) {
	t.Helper()
	ctx := context.Background()
	var members []string
	eventually(t, 10*time.Second, "the loops ended", func() bool {
		members = rdb.ZRange(ctx, registryKey(name), 0, -1).Val()
		return len(members) == recovered
	})
	for _, m := range members {
		if !strings.HasPrefix(m, "recovered:") {
			t.Fatalf("registry %v still registers a list", members)
		}
	}
	for _, pat := range []string{"redisson_queue_inflight:*}:*", "redisson_bqueue_inflight:*", "redisson_queue_drain:*"} {
		for _, k := range rdb.Keys(ctx, pat).Val() {
			if strings.Contains(k, "{"+name+"}") {
				t.Fatalf("in-flight list %s left", k)
			}
		}
	}
}

// takeN takes n elements with Take, failing the test on an error.
func takeN(t *testing.T, ctx context.Context, q *BlockingQueue[string], n int) []string {
	t.Helper()
	var got []string
	for range n {
		v, err := q.Take(ctx)
		if err != nil {
			t.Fatalf("Take after %v: %v", got, err)
		}
		got = append(got, v)
	}
	return got
}

// TestBlockingQueueRecoversDeadClientInFlight checks that the elements a
// dead client left in its in-flight lists (takers', a Drain's, a bounded
// queue's) reach another client's takers exactly once, ahead of the queue
// and in their order, and that nothing stays in flight or registered.
func TestBlockingQueueRecoversDeadClientInFlight(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	const dead = "00000000-0000-4000-8000-000000000000"

	t.Run("blocking", func(t *testing.T) {
		name := uniqueName(t, rdb)
		deadInFlight(t, rdb, name, inflightKey(dead, name, false), "a", "b")
		deadInFlight(t, rdb, name, drainKey(dead, name, "7"), "c")
		q := GetBlockingQueue[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
		if err := q.Offer(ctx, "z"); err != nil {
			t.Fatal(err)
		}
		// Each take recovers one dead list; the order among lists is the
		// registry's, within a list the list's.
		got := takeN(t, ctx, q, 4)
		if !slices.Equal(got, []string{"a", "b", "c", "z"}) && !slices.Equal(got, []string{"c", "a", "b", "z"}) {
			t.Fatalf("took %v; want a, b and c (each list in order) before z", got)
		}
		if v, ok, err := q.Poll(ctx, 300*time.Millisecond); err != nil || ok {
			t.Fatalf("Poll after all = %q, %v, %v; want nothing left", v, ok, err)
		}
		noneInFlight(t, rdb, name, 2)
	})

	t.Run("bounded", func(t *testing.T) {
		name := uniqueName(t, rdb)
		q := GetBoundedBlockingQueue[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
		if ok, err := q.TrySetCapacity(ctx, 5); err != nil || !ok {
			t.Fatal(ok, err)
		}
		for _, v := range []string{"a", "b", "z"} {
			if ok, err := q.Offer(ctx, v); err != nil || !ok {
				t.Fatal(ok, err)
			}
		}
		// The dead client had moved a and b: capacity 5 = 2 free + z.
		rdb.LPop(ctx, name)
		rdb.LPop(ctx, name)
		deadInFlight(t, rdb, name, inflightKey(dead, name, true), "a", "b")
		got := takeN(t, ctx, &q.BlockingQueue, 3)
		if !slices.Equal(got, []string{"a", "b", "z"}) {
			t.Fatalf("took %v; want a b z", got)
		}
		if n, err := q.RemainingCapacity(ctx); err != nil || n != 5 {
			t.Fatalf("RemainingCapacity = %d, %v; want 5 (each element's capacity back once)", n, err)
		}
		noneInFlight(t, rdb, name, 1)
	})
}

// TestBlockingQueueRecoversClientDiedMidHandOver checks the recovery end to
// end: a client's dispatcher moves an element into its in-flight list
// (BLMOVE) and never hears of it, as its connection is cut and the client
// given up; once its registration's deadline passes, another client's take
// gets that element first, exactly once, and nothing stays in flight.
func TestBlockingQueueRecoversClientDiedMidHandOver(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	proxy := redistest.NewProxy(t, srv.Addr())
	via := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 300 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { via.Close() })
	dying := newClient(t, via, &Options{CleanupTimeout: 200 * time.Millisecond})
	dying.queues.lease = 3 * time.Second
	a := GetBlockingQueue[string](dying, name, WithCodec(StringCodec{}))

	takeCtx, cancel := context.WithCancel(ctx)
	took := make(chan error, 1)
	go func() {
		_, err := a.Take(takeCtx)
		took <- err
	}()
	reg := registryKey(name)
	eventually(t, 10*time.Second, "the dying client registered its in-flight list", func() bool {
		return rdb.ZScore(ctx, reg, a.spec.inflight).Err() == nil
	})
	time.Sleep(100 * time.Millisecond) // into its BLMOVE
	proxy.Partition(true)
	if err := rdb.RPush(ctx, name, "x", "y").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the BLMOVE moved x into the dying client's list", func() bool {
		return slices.Equal(rdb.LRange(ctx, a.spec.inflight, 0, -1).Val(), []string{"x"})
	})
	cancel()
	if err := <-took; err == nil {
		t.Fatal("the dying client's Take returned an element through a partition")
	}
	dying.Close() // its settle cannot reach Redis: the list is orphaned
	if !slices.Equal(rdb.LRange(ctx, a.spec.inflight, 0, -1).Val(), []string{"x"}) {
		t.Fatalf("in-flight list = %v, want [x] left by the dead client", rdb.LRange(ctx, a.spec.inflight, 0, -1).Val())
	}

	b := GetBlockingQueue[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
	eventually(t, 20*time.Second, "the dead client's registration expired", func() bool {
		now, err := rdb.Time(ctx).Result()
		return err == nil && len(rdb.ZRangeByScore(ctx, reg, &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(now.UnixMilli(), 10)}).Val()) == 1
	})
	if got := takeN(t, ctx, b, 2); !slices.Equal(got, []string{"x", "y"}) {
		t.Fatalf("the other client took %v; want x (recovered, at the head) then y", got)
	}
	if v, ok, err := b.Poll(ctx, 300*time.Millisecond); err != nil || ok {
		t.Fatalf("Poll after all = %q, %v, %v; want nothing left", v, ok, err)
	}
	noneInFlight(t, rdb, name, 1)
}

// TestQueueRecoveryMarkScript checks the scripts' side of a live client
// whose registration expired: another client's queue_take puts its list
// back and marks it, the late client's settle then reports -1 (so its
// takers get no element, which went back to the queue), and its resend
// finds neither list nor mark; an expired mark is dropped by a later take.
func TestQueueRecoveryMarkScript(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 20*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	late := inflightKey("00000000-0000-4000-8000-000000000001", name, false)
	mine := inflightKey(c.id, name, false)
	reg := registryKey(name)
	deadInFlight(t, rdb, name, late, "a")
	rdb.RPush(ctx, name, "z")
	got, err := c.scripts.run(ctx, scriptQueueTake, []string{name, mine, reg}, 0, 100).StringSlice()
	if err != nil || len(got) != 0 {
		t.Fatalf("queue_take(0) = %v, %v", got, err)
	}
	if q := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(q, []string{"a", "z"}) {
		t.Fatalf("queue = %v, want [a z]: the expired list put back at the head", q)
	}
	if rdb.ZScore(ctx, reg, "recovered:"+late).Err() != nil || rdb.ZScore(ctx, reg, mine).Err() != nil {
		t.Fatalf("registry = %v; want the mark of %s and the registration of %s", rdb.ZRange(ctx, reg, 0, -1).Val(), late, mine)
	}
	settle := func() int64 {
		n, err := c.scripts.run(ctx, scriptQueueSettle, []string{name, late, reg}, "publish", "a").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := settle(); n != -1 {
		t.Fatalf("the late client's settle = %d, want -1 (its elements went back)", n)
	}
	if n := settle(); n != 0 {
		t.Fatalf("its resend = %d, want 0", n)
	}
	// An expired mark is dropped by the next take.
	rdb.ZAdd(ctx, reg, redis.Z{Score: 1, Member: "recovered:" + late})
	if _, err := c.scripts.run(ctx, scriptQueueTake, []string{name, mine, reg}, 2, 100).StringSlice(); err != nil {
		t.Fatal(err)
	}
	if m := rdb.ZRange(ctx, reg, 0, -1).Val(); !slices.Equal(m, []string{mine}) {
		t.Fatalf("registry = %v, want only %s", m, mine)
	}
	c.scripts.run(ctx, scriptQueueSettle, []string{name, mine, reg}, "publish", "a", "z")
	if keys := nameState(t, rdb, name); keys != "" {
		t.Fatalf("keys left: %s", keys)
	}
}
