package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// TestBlockingDequeBothEnds checks the layout and order at both ends, that
// a TakeLast and a TakeFirst waiting on an empty deque are woken by
// another client's offers at their own end, and that a PollLast whose wait
// runs out leaves nothing behind.
func TestBlockingDequeBothEnds(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	a := GetBlockingDeque[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
	b := GetBlockingDeque[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
	for _, step := range []func() error{
		func() error { return a.OfferFirst(ctx, "a") },
		func() error { return a.OfferLast(ctx, "b") },
		func() error { return a.OfferFirst(ctx, "c") },
		func() error { return a.Offer(ctx, "d") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, []string{"c", "a", "b", "d"}) {
		t.Fatalf("list %v; want c a b d (a plain list, as Redisson's)", got)
	}
	if v, ok, err := a.PeekFirst(ctx); err != nil || !ok || v != "c" {
		t.Fatalf("PeekFirst = %q, %v, %v; want c", v, ok, err)
	}
	if v, ok, err := a.PeekLast(ctx); err != nil || !ok || v != "d" {
		t.Fatalf("PeekLast = %q, %v, %v; want d", v, ok, err)
	}
	if v, ok, err := a.PollLast(ctx, 0); err != nil || !ok || v != "d" {
		t.Fatalf("PollLast(0) = %q, %v, %v; want d", v, ok, err)
	}
	if v, err := a.TakeLast(ctx); err != nil || v != "b" {
		t.Fatalf("TakeLast = %q, %v; want b", v, err)
	}
	if v, ok, err := a.PollFirst(ctx, time.Second); err != nil || !ok || v != "c" {
		t.Fatalf("PollFirst = %q, %v, %v; want c", v, ok, err)
	}
	if v, err := a.TakeFirst(ctx); err != nil || v != "a" {
		t.Fatalf("TakeFirst = %q, %v; want a", v, err)
	}
	if v, ok, err := a.PollLast(ctx, 200*time.Millisecond); err != nil || ok {
		t.Fatalf("PollLast on empty = %q, %v, %v; want false", v, ok, err)
	}
	// The tail loop ends within a BLMOVE's block once no taker waits.
	eventually(t, 10*time.Second, "nothing left behind", func() bool { return nameState(t, rdb, name) == "" })

	last, first := make(chan string, 1), make(chan string, 1)
	go func() { v, err := a.TakeLast(ctx); last <- fmt.Sprint(v, err) }()
	go func() { v, err := a.TakeFirst(ctx); first <- fmt.Sprint(v, err) }()
	eventually(t, 10*time.Second, "both takers block", func() bool { return blockedClients(ctx, rdb) >= 2 })
	// "x" first at the head, then "y" at the tail: each end's taker gets
	// its own end's element, whichever moved first.
	if err := b.OfferFirst(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := b.OfferLast(ctx, "y"); err != nil {
		t.Fatal(err)
	}
	// Redis serves the two loops' BLMOVEs in the order they blocked, so
	// either taker may get x; between them they get both, each once.
	var took []string
	for _, ch := range []chan string{first, last} {
		select {
		case v := <-ch:
			took = append(took, v)
		case <-time.After(10 * time.Second):
			t.Fatal("a taker was not woken by the other client's offer")
		}
	}
	slices.Sort(took)
	if !slices.Equal(took, []string{"x<nil>", "y<nil>"}) {
		t.Fatalf("takes %v; want x and y, each once", took)
	}
	noneInFlight(t, rdb, name, 0)
	if n := rdb.LLen(ctx, name).Val(); n != 0 {
		t.Fatalf("%d elements left; want each taken once", n)
	}
}

// TestBlockingDequeTailOrder checks that tail takers of one client are
// served in arrival order, each with the tail at its turn.
func TestBlockingDequeTailOrder(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	d := GetBlockingDeque[string](c, name, WithCodec(StringCodec{}))
	const n = 5
	got := make([]chan string, n)
	for i := range n {
		got[i] = make(chan string, 1)
		go func() { v, err := d.TakeLast(ctx); got[i] <- fmt.Sprint(v, err) }()
		eventually(t, 10*time.Second, "the taker waits", func() bool { return waitingTakers(c, d.last) == i+1 })
	}
	eventually(t, 10*time.Second, "the tail loop blocks", func() bool { return blockedClients(ctx, rdb) >= 1 })
	if err := rdb.RPush(ctx, name, "1", "2", "3", "4", "5").Err(); err != nil {
		t.Fatal(err)
	}
	// One push of five: the loop's BLMOVE (or its next move) takes 5,
	// then 4, 3, 2, 1, each to the oldest taker still waiting.
	var order []string
	for i := range n {
		select {
		case v := <-got[i]:
			order = append(order, v)
		case <-time.After(10 * time.Second):
			t.Fatalf("taker %d not served", i)
		}
	}
	if !slices.Equal(order, []string{"5<nil>", "4<nil>", "3<nil>", "2<nil>", "1<nil>"}) {
		t.Fatalf("takes %v by arrival; want 5 4 3 2 1", order)
	}
	noneInFlight(t, rdb, name, 0)
}

// TestBlockingDequeNothingLost is TestBlockingQueueNothingLost with takers
// at both ends, through a proxy that drops connections and replies.
func TestBlockingDequeNothingLost(t *testing.T) {
	nothingLostConnectionDrops(t, true)
}

// TestBlockingDequeRecoversDeadTailInFlight checks that what a dead
// client's tail takers had moved goes back to the tail, in its order, and
// reaches the next tail taker first.
func TestBlockingDequeRecoversDeadTailInFlight(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	const dead = "00000000-0000-4000-8000-000000000000"
	name := uniqueName(t, rdb)
	// The deque was x y b a; the dead client's tail loop moved a, then b.
	deadInFlight(t, rdb, name, lastInflightKey(dead, name), "a", "b")
	if err := rdb.RPush(ctx, name, "x", "y").Err(); err != nil {
		t.Fatal(err)
	}
	d := GetBlockingDeque[string](newClient(t, rdb, nil), name, WithCodec(StringCodec{}))
	var got []string
	for range 4 {
		v, err := d.TakeLast(ctx)
		if err != nil {
			t.Fatalf("TakeLast after %v: %v", got, err)
		}
		got = append(got, v)
	}
	if !slices.Equal(got, []string{"a", "b", "y", "x"}) {
		t.Fatalf("took %v from the tail; want a b y x (the dead list back at the tail in its order)", got)
	}
	noneInFlight(t, rdb, name, 1)
}

// TestBlockingDequeInteropWithRedisson: a Java takeLast (BRPOP, as
// recorded) gets a Go OfferLast, and a Go TakeLast gets a Java offerLast
// (RPUSH) and never a Java offerFirst (LPUSH) while the tail has one.
func TestBlockingDequeInteropWithRedisson(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	d := GetBlockingDeque[string](newClient(t, rdb, nil), name)
	got := make(chan string, 1)
	go func() {
		kv, err := rdb.BRPop(ctx, 10*time.Second, name).Result() // Java's takeLast
		if err != nil {
			got <- err.Error()
			return
		}
		v, _, err := decodeForeign(kv[1], nil)
		got <- fmt.Sprint(v, err)
	}()
	eventually(t, 5*time.Second, "the Java taker blocks", func() bool { return blockedClients(ctx, rdb) >= 1 })
	if err := d.OfferLast(ctx, "from go"); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "from go<nil>" {
		t.Fatalf("Java takeLast = %q, want from go", v)
	}
	java := newForeignQueue(rdb, name)
	b, _ := MsgpackCodec{}.Marshal("java first")
	if err := rdb.LPush(ctx, name, b).Err(); err != nil { // Java's offerFirst
		t.Fatal(err)
	}
	if err := java.offer(ctx, "java last"); err != nil { // offerLast: RPUSH
		t.Fatal(err)
	}
	if v, err := d.TakeLast(ctx); err != nil || v != "java last" {
		t.Fatalf("Go TakeLast = %q, %v; want java last", v, err)
	}
	if v, err := d.TakeLast(ctx); err != nil || v != "java first" {
		t.Fatalf("Go TakeLast = %q, %v; want java first", v, err)
	}
}

// TestBlockingDequeBadInput: bad input and ended contexts answer with
// their documented errors and leave Redis as it was.
func TestBlockingDequeBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	d := GetBlockingDeque[string](c, name)
	empty := GetBlockingDeque[string](c, "")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	for _, tc := range []struct {
		what string
		err  error
		want error
	}{
		{"PollLast negative", third(d.PollLast(ctx, -time.Second)), ErrNegativeDuration},
		{"PollFirst negative", third(d.PollFirst(ctx, -time.Second)), ErrNegativeDuration},
		{"TakeLast empty name", second(empty.TakeLast(ctx)), ErrEmptyName},
		{"OfferFirst empty name", empty.OfferFirst(ctx, "x"), ErrEmptyName},
		{"PeekLast empty name", third(empty.PeekLast(ctx)), ErrEmptyName},
		{"TakeLast cancelled", second(d.TakeLast(cancelled)), context.Canceled},
		{"PollLast cancelled", third(d.PollLast(cancelled, time.Second)), context.Canceled},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v; want %v", tc.what, tc.err, tc.want)
		}
	}
	rdb.Set(ctx, name, "a string", 0)
	if _, err := d.TakeLast(ctx); !errors.Is(err, ErrWrongType) {
		t.Errorf("TakeLast on a string: %v; want ErrWrongType", err)
	}
	if v := rdb.Get(ctx, name).Val(); v != "a string" {
		t.Errorf("the string is %q; want it untouched", v)
	}
	rdb.Del(ctx, name)
	if keys := nameState(t, rdb, name); keys != "" {
		t.Fatalf("keys left behind: %s", keys)
	}
}

// waitingTakers is how many takers wait in c's dispatcher of sp.
func waitingTakers(c *Client, sp queueSpec) int {
	c.queues.mu.Lock()
	defer c.queues.mu.Unlock()
	if d := c.queues.ds[sp.dispatchKey()]; d != nil {
		return len(d.takers)
	}
	return 0
}

// TestClusterBlockingDeque: on a 3-master cluster, deques on every master
// deliver each element once to takers at both ends on two clients.
func TestClusterBlockingDeque(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	a, b := newClient(t, rdb, nil), newClient(t, rdb, nil)
	base := uniqueName(t, rdb)
	masters := map[string]bool{}
	for i := range 6 {
		n := fmt.Sprintf("%s:%d", base, i)
		node, err := rdb.MasterForKey(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
		t.Cleanup(func() { rdb.Del(context.Background(), n) })
		const per = 20
		got := make(chan int, 4*per)
		var wg sync.WaitGroup
		for _, c := range []*Client{a, b} {
			d := GetBlockingDeque[int](c, n)
			for j := range 2 * per {
				wg.Add(1)
				go func() {
					defer wg.Done()
					poll := d.PollFirst
					if j%2 == 1 {
						poll = d.PollLast
					}
					if v, ok, err := poll(ctx, 5*time.Second); err != nil {
						t.Errorf("%s: poll: %v", n, err)
					} else if ok {
						got <- v
					}
				}()
			}
		}
		p := GetBlockingDeque[int](a, n)
		for v := range 4 * per {
			if err := p.OfferLast(ctx, v); err != nil {
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
		if len(seen) != 4*per {
			t.Fatalf("%s: %d taken, want %d", n, len(seen), 4*per)
		}
	}
	if len(masters) != 3 {
		t.Fatalf("deques on %d masters, want 3", len(masters))
	}
}
