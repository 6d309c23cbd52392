package redisson

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// foreignPriorityQueue is a stand-in for Java Redisson's RPriorityQueue of
// Strings with MsgPackJacksonCodec, issuing the recorded commands
// (RPriorityQueue.md): the lock redisson_sortedset_lock:{name}, GET of the
// comparator key, LLEN, a binary search by LINDEX, the insert (LINDEX and
// LINSERT before it, or RPUSH at the end), unlock; poll is lock, LPOP,
// unlock.
type foreignPriorityQueue struct {
	rdb  *redis.Client
	java *foreignClient
	name string
}

func (f *foreignPriorityQueue) lock() *foreignLock {
	return f.java.getLock(foreignPrefix("redisson_sortedset_lock", f.name))
}

func (f *foreignPriorityQueue) offer(ctx context.Context, v string) error {
	l := f.lock()
	if err := l.lock(ctx, 30000); err != nil {
		return err
	}
	defer l.unlock(ctx)
	if err := f.rdb.Get(ctx, "{"+f.name+"}:redisson_sortedset_comparator").Err(); !errors.Is(err, redis.Nil) {
		return fmt.Errorf("comparator key: %v", err)
	}
	lo, hi := int64(0), f.rdb.LLen(ctx, f.name).Val()
	for lo < hi {
		mid := (lo + hi) / 2
		e, _, err := decodeForeign(f.rdb.LIndex(ctx, f.name, mid).Result())
		if err != nil {
			return err
		}
		if v < e {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	b, _ := MsgpackCodec{}.Marshal(v)
	if lo < f.rdb.LLen(ctx, f.name).Val() {
		pivot := f.rdb.LIndex(ctx, f.name, lo).Val()
		return f.rdb.LInsertBefore(ctx, f.name, pivot, b).Err()
	}
	return f.rdb.RPush(ctx, f.name, b).Err()
}

func (f *foreignPriorityQueue) poll(ctx context.Context) (string, bool, error) {
	l := f.lock()
	if err := l.lock(ctx, 30000); err != nil {
		return "", false, err
	}
	defer l.unlock(ctx)
	return decodeForeign(f.rdb.LPop(ctx, f.name).Result())
}

// TestPriorityQueueOrderAndLayout checks Redisson's layout (a sorted plain
// list, the recorded steps of RPriorityQueue.md), that equal elements
// leave in the order they came, and that the lock is not left behind.
func TestPriorityQueueOrderAndLayout(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	q := GetPriorityQueue(newClient(t, rdb, nil), name, cmp.Compare[string])
	for _, v := range []string{"c", "a", "d", "b"} {
		if err := q.Offer(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, v := range []string{"a", "b", "c", "d"} {
		b, _ := MsgpackCodec{}.Marshal(v)
		want = append(want, string(b))
	}
	if got := rdb.LRange(ctx, name, 0, -1).Val(); !slices.Equal(got, want) {
		t.Fatalf("list %q; want %q (Redisson's bytes, sorted)", got, want)
	}
	if v, ok, err := q.Peek(ctx); err != nil || !ok || v != "a" {
		t.Fatalf("Peek = %q, %v, %v; want a", v, ok, err)
	}
	if v, ok, err := q.Poll(ctx); err != nil || !ok || v != "a" {
		t.Fatalf("Poll = %q, %v, %v; want a", v, ok, err)
	}
	if ok, err := q.Remove(ctx, "d"); err != nil || !ok {
		t.Fatalf("Remove(d) = %v, %v; want true", ok, err)
	}
	if ok, err := q.Remove(ctx, "zz"); err != nil || ok {
		t.Fatalf("Remove(zz) = %v, %v; want false", ok, err)
	}
	if all, err := q.ReadAll(ctx); err != nil || !slices.Equal(all, []string{"b", "c"}) {
		t.Fatalf("ReadAll = %v, %v; want b c", all, err)
	}
	if n := rdb.Exists(ctx, prefixName("redisson_sortedset_lock", name)).Val(); n != 0 {
		t.Fatal("the lock is left behind")
	}

	type job struct {
		Pri int
		ID  int
	}
	jobs := GetPriorityQueue(newClient(t, rdb, nil), name+":jobs", func(a, b job) int { return cmp.Compare(a.Pri, b.Pri) })
	t.Cleanup(func() { rdb.Del(context.Background(), name+":jobs") })
	for id, pri := range []int{2, 1, 2, 1, 3, 1} {
		if err := jobs.Offer(ctx, job{pri, id}); err != nil {
			t.Fatal(err)
		}
	}
	var order []int
	for {
		j, ok, err := jobs.Poll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		order = append(order, j.ID)
	}
	if !slices.Equal(order, []int{1, 3, 5, 0, 2, 4}) {
		t.Fatalf("polled ids %v; want 1 3 5 0 2 4 (by priority, equal ones in arrival order)", order)
	}
}

// TestPriorityQueueWritersWithJava: Go writers on two clients and Java
// writers (the stand-in) offer at once; the lock keeps the list sorted and
// nothing is lost; then Go and Java pollers drain it in order.
func TestPriorityQueueWritersWithJava(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	name := uniqueName(t, rdb)
	const per = 40
	var wg sync.WaitGroup
	var all []string
	for w := range 6 {
		var vals []string
		for i := range per {
			vals = append(vals, fmt.Sprintf("%03d-%d", rand.IntN(1000), w*per+i))
		}
		all = append(all, vals...)
		wg.Add(1)
		go func() {
			defer wg.Done()
			var offer func(context.Context, string) error
			if w < 2 {
				offer = (&foreignPriorityQueue{rdb: rdb, java: newForeignClient(rdb), name: name}).offer
			} else {
				offer = GetPriorityQueue(newClient(t, rdb, nil), name, cmp.Compare[string]).Offer
			}
			for _, v := range vals {
				if err := offer(ctx, v); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(all)
	q := GetPriorityQueue(newClient(t, rdb, nil), name, cmp.Compare[string])
	got, err := q.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, all) {
		t.Fatalf("list of %d not the sorted %d offered", len(got), len(all))
	}
	java := &foreignPriorityQueue{rdb: rdb, java: newForeignClient(rdb), name: name}
	for i, want := range all {
		var v string
		var ok bool
		if i%2 == 0 {
			v, ok, err = q.Poll(ctx)
		} else {
			v, ok, err = java.poll(ctx)
		}
		if err != nil || !ok || v != want {
			t.Fatalf("poll %d = %q, %v, %v; want %q", i, v, ok, err, want)
		}
	}
}

// TestPriorityQueueTakeWokenByJavaOffer: a waiting Take is woken by the
// unlock message of a Java offer (its periodic re-check set far beyond
// the test's bound), and one whose context ends takes nothing.
func TestPriorityQueueTakeWokenByJavaOffer(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	q := GetPriorityQueue(newClient(t, rdb, nil), name, cmp.Compare[string])
	q.recheck = 10 * time.Minute
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if v, err := q.Take(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Take on empty = %q, %v; want DeadlineExceeded", v, err)
	}
	got := make(chan string, 1)
	go func() { v, err := q.Take(ctx); got <- fmt.Sprint(v, err) }()
	time.Sleep(200 * time.Millisecond)
	java := &foreignPriorityQueue{rdb: rdb, java: newForeignClient(rdb), name: name}
	start := time.Now()
	if err := java.offer(ctx, "z"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != "z<nil>" {
			t.Fatalf("Take = %q; want z", v)
		}
		t.Logf("woken %v after the Java offer began", time.Since(start))
	case <-time.After(30 * time.Second):
		t.Fatal("Take not woken by the Java offer's unlock message")
	}
}

// TestPriorityQueueBadInput: bad input answers with documented errors and
// leaves Redis as it was.
func TestPriorityQueueBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	noCompare := GetPriorityQueue[string](c, name, nil)
	empty := GetPriorityQueue(c, "", cmp.Compare[string])
	ptrs := GetPriorityQueue(c, name, func(a, b *int) int { return cmp.Compare(*a, *b) })
	for _, tc := range []struct {
		what string
		err  error
		want error
	}{
		{"nil compare", noCompare.Offer(ctx, "x"), ErrInvalidOption},
		{"empty name Offer", empty.Offer(ctx, "x"), ErrEmptyName},
		{"empty name Poll", third(empty.Poll(ctx)), ErrEmptyName},
		{"empty name Take", second(empty.Take(ctx)), ErrEmptyName},
		{"nil value", ptrs.Offer(ctx, nil), ErrNilValue},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v; want %v", tc.what, tc.err, tc.want)
		}
	}
	if keys := nameState(t, rdb, name); keys != "" {
		t.Fatalf("keys left behind: %s", keys)
	}
	// A queue ordered by a Java comparator is refused, unchanged.
	rdb.Set(ctx, suffixName(name, "redisson_sortedset_comparator"), "java.util.Collections$ReverseComparator:9b48", 0)
	t.Cleanup(func() { rdb.Del(context.Background(), suffixName(name, "redisson_sortedset_comparator")) })
	q := GetPriorityQueue(c, name, cmp.Compare[string])
	if err := q.Offer(ctx, "x"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("Offer to a Java-ordered queue: %v; want ErrInvalidOption", err)
	}
	if n := rdb.Exists(ctx, name, prefixName("redisson_sortedset_lock", name)).Val(); n != 0 {
		t.Fatalf("%d keys written", n)
	}
	rdb.Set(ctx, name, "a string", 0)
	if _, _, err := q.Poll(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Poll of a string: %v; want ErrWrongType", err)
	}
}

// TestClusterPriorityQueue: on a 3-master cluster, queues on every master
// keep their order with writers on two clients.
func TestClusterPriorityQueue(t *testing.T) {
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
		var wg sync.WaitGroup
		for _, c := range []*Client{a, b} {
			q := GetPriorityQueue(c, n, cmp.Compare[int])
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 15 {
					if err := q.Offer(ctx, rand.IntN(100)); err != nil {
						t.Errorf("%s: %v", n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		got, err := GetPriorityQueue(a, n, cmp.Compare[int]).ReadAll(ctx)
		if err != nil || len(got) != 30 || !slices.IsSorted(got) {
			t.Fatalf("%s: %v, %v; want 30 sorted", n, got, err)
		}
	}
	if len(masters) != 3 {
		t.Fatalf("queues on %d masters, want 3", len(masters))
	}
}
