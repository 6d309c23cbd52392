package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// nodeCounters counts, per node address, what a Cluster client's node
// clients send.
type nodeCounters struct {
	mu sync.Mutex
	by map[string][]*pipeCounter
}

func (n *nodeCounters) newClient(opt *redis.Options) *redis.Client {
	c := redis.NewClient(opt)
	h := &pipeCounter{}
	c.AddHook(h)
	n.mu.Lock()
	n.by[opt.Addr] = append(n.by[opt.Addr], h)
	n.mu.Unlock()
	return c
}

func (n *nodeCounters) reset() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, hs := range n.by {
		for _, h := range hs {
			h.reset()
		}
	}
}

// sent returns the pipelines and single commands sent to addr.
func (n *nodeCounters) sent(addr string) (pipes, cmds int64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, h := range n.by[addr] {
		pipes += h.pipes.Load()
		cmds += h.cmds.Load()
	}
	return pipes, cmds
}

// On a 3-master cluster a batch over keys on every master is one pipeline
// per master; an atomic batch is one MULTI/EXEC on the slot's master, and
// one spanning slots is ErrCrossSlot with nothing sent.
func TestClusterBatch(t *testing.T) {
	cl := redistest.SharedCluster(t)
	counters := &nodeCounters{by: map[string][]*pipeCounter{}}
	rdb := cl.Client(t, func(o *redis.ClusterOptions) { o.NewClient = counters.newClient })
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	masters := cl.Masters(t)
	if len(masters) != 3 {
		t.Fatalf("%d masters; want 3", len(masters))
	}

	names := make([]string, 30)
	on := map[string]bool{}
	for i := range names {
		names[i] = uniqueName(t, rdb) + ":" + strconv.Itoa(i)
		node, err := rdb.MasterForKey(ctx, names[i])
		if err != nil {
			t.Fatal(err)
		}
		on[node.Options().Addr] = true
		t.Cleanup(func() { rdb.Del(context.Background(), names[i], names[i]+":m") })
	}
	if len(on) != 3 {
		t.Fatalf("names on %d masters; want 3", len(on))
	}
	for round := 0; round < 3; round++ {
		b := c.CreateBatch()
		var adds []*Future[int64]
		var puts []*Future[int64]
		for _, n := range names {
			GetBatchBucket[string](b, n+":b").Set("v")
			adds = append(adds, b.GetAtomicLong(n).IncrementAndGet())
			puts = append(puts, GetBatchMap[string, int64](b, n+":m").Put("k", int64(round)))
		}
		counters.reset()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		for i := range names {
			eq(t, "IncrementAndGet", adds[i], int64(round+1), true)
			eq(t, "Put", puts[i], max(int64(round-1), 0), round > 0)
		}
		if round == 0 {
			continue // the scripts' first load, on every master
		}
		for _, m := range masters {
			if p, n := counters.sent(m); p != 1 || n != 0 {
				t.Fatalf("round %d: master %s got %d pipelines and %d single commands; want 1 and 0", round, m, p, n)
			}
		}
	}
	for _, n := range names {
		rdb.Del(ctx, n+":b")
	}

	// Atomic across slots: refused when queued, nothing sent.
	b := c.CreateBatch(BatchAtomic())
	first := b.GetAtomicLong(names[0]).IncrementAndGet()
	var other string
	for _, n := range names[1:] {
		if hashSlot(n) != hashSlot(names[0]) {
			other = n
			break
		}
	}
	cross := b.GetAtomicLong(other).IncrementAndGet()
	if err := cross.Err(); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a call on another slot: %v; want ErrCrossSlot", err)
	}
	counters.reset()
	if err := b.Execute(ctx); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("Execute = %v; want ErrCrossSlot", err)
	}
	if err := first.Err(); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("the first call: %v; want ErrCrossSlot", err)
	}
	for _, m := range masters {
		if p, n := counters.sent(m); p != 0 || n != 0 {
			t.Fatalf("master %s got %d pipelines and %d commands; want nothing", m, p, n)
		}
	}
	if v, err := c.GetAtomicLong(names[0]).Get(ctx); err != nil || v != 3 {
		t.Fatalf("%s = %d, %v; want 3, unchanged", names[0], v, err)
	}

	// Atomic in one slot (one hash tag): one MULTI/EXEC on its master.
	tag := "{" + uniqueName(t, rdb) + "}"
	t.Cleanup(func() { rdb.Del(context.Background(), tag+":a", tag+":m", tag+":s") })
	for round := 0; round < 2; round++ {
		b = c.CreateBatch(BatchAtomic())
		add := b.GetAtomicLong(tag + ":a").AddAndGet(5)
		put := GetBatchMap[string, string](b, tag+":m").Put("k", "v")
		sadd := GetBatchSet[string](b, tag+":s").Add("x")
		counters.reset()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		eq(t, "AddAndGet", add, int64(5*(round+1)), true)
		eq(t, "Put", put, map[bool]string{true: "v"}[round > 0], round > 0)
		eq(t, "Add", sadd, round == 0, round == 0)
		node, err := rdb.MasterForKey(ctx, tag)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range masters {
			want := int64(0)
			if m == node.Options().Addr {
				want = 1
			}
			if p, n := counters.sent(m); p != want || n != 0 {
				t.Fatalf("master %s got %d pipelines and %d single commands; want %d and 0", m, p, n, want)
			}
		}
	}
}

// A plain Batch on a Cluster during a slot migration applies each call once.
// Goroutines execute batches of List.Add and Queue.Offer with unique
// values on lists and queues of every master, some in the slot moved
// (ASK, then MOVED), each batch led by an AtomicLong addition in that slot,
// which that slot's master refuses with TRYAGAIN while the counter is there
// and its new call marker would not be (go-redis's Cluster pipeline then
// sent the whole of that master's batch again, adding values twice). Every
// value a call was told it added is in its list or queue exactly once, no
// other value is there twice, and the counter counts the additions that
// succeeded, once each.
func TestClusterBatchMigrationExactlyOnce(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 2*time.Minute)
	u := uniqueName(t, rdb)
	mig := "{" + u + ":mig}"
	var lists, queues []string
	for i := range 12 {
		lists = append(lists, u+":l:"+strconv.Itoa(i))
		queues = append(queues, u+":q:"+strconv.Itoa(i))
	}
	for i := range 4 {
		lists = append(lists, mig+":l:"+strconv.Itoa(i))
		queues = append(queues, mig+":q:"+strconv.Itoa(i))
	}
	counter := mig + ":al"
	slot := cl.SlotOf(t, mig)
	from := cl.SlotOwner(t, slot)
	var to string
	for _, m := range cl.Masters(t) {
		if m != from {
			to = m
			break
		}
	}

	type outcome struct {
		key string
		err error
	}
	var (
		stop    atomic.Bool
		wg      sync.WaitGroup
		mu      sync.Mutex
		results = map[string]outcome{} // value -> its call's key and error
		adds    int64                  // counter additions that succeeded
		addErrs []error
		batches int
	)
	execute := func(g, i int) {
		b := c.CreateBatch()
		add := b.GetAtomicLong(counter).AddAndGet(1)
		type queued struct {
			key, value string
			err        func() error
		}
		var qs []queued
		for j := range 24 {
			v := fmt.Sprintf("%d:%d:%d", g, i, j)
			if j%2 == 0 {
				k := lists[(g+i+j)%len(lists)]
				f := GetBatchList[string](b, k).Add(v)
				qs = append(qs, queued{k, v, f.Err})
			} else {
				k := queues[(g+i+j)%len(queues)]
				f := GetBatchQueue[string](b, k).Offer(v)
				qs = append(qs, queued{k, v, f.Err})
			}
		}
		_ = b.Execute(ctx)
		mu.Lock()
		defer mu.Unlock()
		batches++
		if err := add.Err(); err != nil {
			addErrs = append(addErrs, err)
		} else {
			adds++
		}
		for _, q := range qs {
			results[q.value] = outcome{q.key, q.err()}
		}
	}
	execute(4, 0) // creates the keys and loads the scripts
	for g := range 4 {
		wg.Go(func() {
			for i := 0; !stop.Load(); i++ {
				execute(g, i)
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	m := cl.BeginSlotMigration(t, slot, to)
	time.Sleep(700 * time.Millisecond) // the counter on the source: TRYAGAIN
	m.MoveKeys(t)
	time.Sleep(500 * time.Millisecond) // every key on the target: ASK
	m.Finish(t)
	time.Sleep(500 * time.Millisecond) // MOVED for a stale slot map
	stop.Store(true)
	wg.Wait()

	seen := map[string]int{}
	where := map[string]string{}
	read := func(k string, vals []string, err error) {
		if err != nil {
			t.Fatalf("reading %s: %v", k, err)
		}
		for _, v := range vals {
			seen[v]++
			where[v] = k
		}
	}
	for _, k := range lists {
		vals, err := GetList[string](c, k).ReadAll(ctx)
		read(k, vals, err)
	}
	for _, k := range queues {
		vals, err := GetQueue[string](c, k).ReadAll(ctx)
		read(k, vals, err)
	}
	total, err := c.GetAtomicLong(counter).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d batches, %d values, %d counter additions (%d refused: %v)", batches, len(results), adds, len(addErrs), firstErr(addErrs))
	bad := 0
	for v, n := range seen {
		if n > 1 && bad < 10 {
			bad++
			t.Errorf("value %s is in %s %d times", v, where[v], n)
		}
	}
	for v, o := range results {
		if bad >= 10 {
			break
		}
		switch {
		case o.err != nil:
			bad++
			t.Errorf("adding %s to %s: %v", v, o.key, o.err)
		case seen[v] != 1:
			bad++
			t.Errorf("value %s: its call succeeded; it is in the store %d times", v, seen[v])
		case where[v] != o.key:
			bad++
			t.Errorf("value %s is in %s; its call was on %s", v, where[v], o.key)
		}
	}
	for _, err := range addErrs {
		if mayHaveRun(err) {
			t.Errorf("a counter addition failed in flight (it may have run): %v", err)
		}
	}
	if total != adds {
		t.Errorf("counter = %d; want %d, one per addition that succeeded", total, adds)
	}
}

func firstErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
