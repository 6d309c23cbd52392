package redisson

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// mustList checks that l holds want, in order.
func mustList[T comparable](t *testing.T, ctx context.Context, l *List[T], want []T) {
	t.Helper()
	got, err := l.ReadAll(ctx)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ReadAll = %v, %v; want %v", got, err, want)
	}
}

// TestListOperations walks every List call against a slice model, on
// names spread over the cluster, with each codec that encodes strings.
func TestListOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}}
		for i, name := range spreadNames(t, rdb, 6) {
			codec := codecs[i%len(codecs)]
			l := GetList[string](c, name, WithCodec(codec))
			if l.Name() != name || l.Codec() != codec {
				t.Fatalf("Name, Codec = %q, %v; want %q, %v", l.Name(), l.Codec(), name, codec)
			}
			if n, err := l.Size(ctx); err != nil || n != 0 {
				t.Fatalf("Size of missing = %d, %v", n, err)
			}
			if n, err := l.Add(ctx, "a"); err != nil || n != 1 {
				t.Fatalf("Add(a) = %d, %v; want 1", n, err)
			}
			if n, err := l.AddAll(ctx, "b", "c", "b"); err != nil || n != 4 {
				t.Fatalf("AddAll(b, c, b) = %d, %v; want 4", n, err)
			}
			if n, err := l.AddAll(ctx); err != nil || n != 4 {
				t.Fatalf("AddAll() = %d, %v; want 4 (the size)", n, err)
			}
			if v, err := l.Get(ctx, 1); err != nil || v != "b" {
				t.Fatalf("Get(1) = %q, %v; want b", v, err)
			}
			if old, err := l.Set(ctx, 1, "B"); err != nil || old != "b" {
				t.Fatalf("Set(1, B) = %q, %v; want b", old, err)
			}
			if err := l.FastSet(ctx, 0, "A"); err != nil {
				t.Fatalf("FastSet(0, A) = %v", err)
			}
			mustList(t, ctx, l, []string{"A", "B", "c", "b"})
			for _, ins := range []struct {
				at   int64
				v    string
				want []string
			}{
				{1, "x", []string{"A", "x", "B", "c", "b"}},      // head side
				{4, "y", []string{"A", "x", "B", "c", "y", "b"}}, // tail side
				{0, "first", []string{"first", "A", "x", "B", "c", "y", "b"}},
				{7, "last", []string{"first", "A", "x", "B", "c", "y", "b", "last"}},
			} {
				if err := l.Insert(ctx, ins.at, ins.v); err != nil {
					t.Fatalf("Insert(%d, %s) = %v", ins.at, ins.v, err)
				}
				mustList(t, ctx, l, ins.want)
			}
			if i, err := l.IndexOf(ctx, "c"); err != nil || i != 4 {
				t.Fatalf("IndexOf(c) = %d, %v; want 4", i, err)
			}
			if i, err := l.IndexOf(ctx, "zz"); err != nil || i != -1 {
				t.Fatalf("IndexOf(zz) = %d, %v; want -1", i, err)
			}
			if ok, err := l.Contains(ctx, "y"); err != nil || !ok {
				t.Fatalf("Contains(y) = %v, %v", ok, err)
			}
			// Remove takes the first occurrence only.
			l.Add(ctx, "b")
			if ok, err := l.Remove(ctx, "b"); err != nil || !ok {
				t.Fatalf("Remove(b) = %v, %v", ok, err)
			}
			mustList(t, ctx, l, []string{"first", "A", "x", "B", "c", "y", "last", "b"})
			if ok, err := l.Remove(ctx, "nope"); err != nil || ok {
				t.Fatalf("Remove(nope) = %v, %v; want false", ok, err)
			}
			for _, rm := range []struct {
				at   int64
				v    string
				want []string
			}{
				{2, "x", []string{"first", "A", "B", "c", "y", "last", "b"}}, // head side
				{4, "y", []string{"first", "A", "B", "c", "last", "b"}},      // tail side
				{0, "first", []string{"A", "B", "c", "last", "b"}},
				{4, "b", []string{"A", "B", "c", "last"}},
			} {
				if v, err := l.RemoveAt(ctx, rm.at); err != nil || v != rm.v {
					t.Fatalf("RemoveAt(%d) = %q, %v; want %q", rm.at, v, err, rm.v)
				}
				mustList(t, ctx, l, rm.want)
			}
			if got, err := l.Range(ctx, 1, -2); err != nil || !slices.Equal(got, []string{"B", "c"}) {
				t.Fatalf("Range(1, -2) = %v, %v; want [B c]", got, err)
			}
			if err := l.Trim(ctx, 1, 2); err != nil {
				t.Fatal(err)
			}
			mustList(t, ctx, l, []string{"B", "c"})
			if ok, err := l.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
			if ok, err := l.Delete(ctx); err != nil || ok {
				t.Fatalf("Delete again = %v, %v; want false", ok, err)
			}
		}
	})
}

// TestListInsertRemoveAtLongList moves more elements than one push takes
// (the scripts push 1000 at a time) on either side of the index.
func TestListInsertRemoveAtLongList(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	l := GetList[int64](c, uniqueName(t, rdb))
	model := make([]int64, 5000)
	for i := range model {
		model[i] = int64(i)
	}
	if _, err := l.AddAll(ctx, model...); err != nil {
		t.Fatal(err)
	}
	for _, at := range []int64{2500, 2499, 4990, 10, 2501} {
		if err := l.Insert(ctx, at, -at); err != nil {
			t.Fatalf("Insert(%d) = %v", at, err)
		}
		model = slices.Insert(model, int(at), -at)
		mustList(t, ctx, l, model)
	}
	for _, at := range []int64{2500, 2502, 4000, 7, 1} {
		v, err := l.RemoveAt(ctx, at)
		if err != nil || v != model[at] {
			t.Fatalf("RemoveAt(%d) = %d, %v; want %d", at, v, err, model[at])
		}
		model = slices.Delete(model, int(at), int(at)+1)
		mustList(t, ctx, l, model)
	}
}

// TestListIterator pages through 10,000 elements with LRANGE, batch by
// batch: every element once, in order, no LRANGE wider than the batch.
func TestListIterator(t *testing.T) {
	rdb := sharedRedis(t)
	log := newCmdLog(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	l := GetList[string](c, uniqueName(t, rdb))
	const n, batch = 10000, 100
	want := make([]string, n)
	for i := range want {
		want[i] = "e" + strconv.Itoa(i)
	}
	for chunk := range slices.Chunk(want, 1000) {
		if _, err := l.AddAll(ctx, chunk...); err != nil {
			t.Fatal(err)
		}
	}
	log.take()
	it := l.Iterator(batch)
	var got []string
	for i, v := range it.All(ctx) {
		if i != int64(len(got)) {
			t.Fatalf("index %d yielded at position %d", i, len(got))
		}
		got = append(got, v)
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("iterated %d elements, want the %d in order", len(got), n)
	}
	cmds := log.take()
	if len(cmds) < n/batch {
		t.Errorf("%d elements in batches of %d took %d commands; want at least %d", n, batch, len(cmds), n/batch)
	}
	for _, cmd := range cmds {
		from, _ := strconv.Atoi(cmd[2])
		to, _ := strconv.Atoi(cmd[3])
		if cmd[0] != "LRANGE" || to-from+1 != batch {
			t.Fatalf("iterator sent %q; want LRANGE of %d elements", cmd, batch)
		}
	}

	// Early stop, then a second pass from the front.
	k := 0
	for range it.All(ctx) {
		if k++; k == 5 {
			break
		}
	}
	for i, v := range it.All(ctx) {
		if v != want[0] || i != 0 {
			t.Fatalf("second pass starts at %d %q, want 0 %q", i, v, want[0])
		}
		break
	}
	if it := l.Iterator(0); func() error {
		for range it.All(ctx) {
		}
		return it.Err()
	}() == nil || !errors.Is(it.Err(), ErrInvalidBatch) {
		t.Errorf("Iterator(0).Err = %v; want ErrInvalidBatch", it.Err())
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	it = l.Iterator(batch)
	for range it.All(cctx) {
		t.Fatal("yielded with a cancelled context")
	}
	if !errors.Is(it.Err(), context.Canceled) {
		t.Errorf("Err with a cancelled context = %v; want context.Canceled", it.Err())
	}
}

// listCalls is every List call, for the tables of bad input.
func listCalls(ctx context.Context, l *List[*string], v *string, index int64) []namedCall {
	return []namedCall{
		{"Add", func() error { return second(l.Add(ctx, v)) }},
		{"AddAll", func() error { return second(l.AddAll(ctx, v, v)) }},
		{"Insert", func() error { return l.Insert(ctx, index, v) }},
		{"Get", func() error { return second(l.Get(ctx, index)) }},
		{"Set", func() error { return second(l.Set(ctx, index, v)) }},
		{"FastSet", func() error { return l.FastSet(ctx, index, v) }},
		{"Remove", func() error { return second(l.Remove(ctx, v)) }},
		{"RemoveAt", func() error { return second(l.RemoveAt(ctx, index)) }},
		{"IndexOf", func() error { return second(l.IndexOf(ctx, v)) }},
		{"Contains", func() error { return second(l.Contains(ctx, v)) }},
		{"Size", func() error { return second(l.Size(ctx)) }},
		{"Range", func() error { return second(l.Range(ctx, 0, -1)) }},
		{"ReadAll", func() error { return second(l.ReadAll(ctx)) }},
		{"Trim", func() error { return l.Trim(ctx, 0, 0) }},
		{"Iterator", func() error {
			it := l.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		}},
		{"Delete", func() error { return second(l.Delete(ctx)) }},
	}
}

// TestListBadInput: empty name, closed client, a key of another type, nil
// pointers, bad indexes and undecodable elements give their documented
// errors and leave Redis unchanged.
func TestListBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	v := "v"
	for _, tc := range []struct {
		what string
		l    *List[*string]
		want error
	}{
		{"empty name", GetList[*string](c, ""), ErrEmptyName},
		{"closed client", GetList[*string](closed, uniqueName(t, rdb)), ErrClientClosed},
	} {
		before := nameState(t, rdb, tc.l.Name())
		for _, nc := range listCalls(ctx, tc.l, &v, 0) {
			if err := nc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s = %v; want %v", tc.what, nc.op, err, tc.want)
			}
		}
		if tc.what != "empty name" {
			if after := nameState(t, rdb, tc.l.Name()); after != before {
				t.Errorf("%s: Redis changed: %s -> %s", tc.what, before, after)
			}
		}
	}

	name := uniqueName(t, rdb)
	rdb.Set(ctx, name, "a string", 0)
	before := nameState(t, rdb, name)
	for _, nc := range listCalls(ctx, GetList[*string](c, name), &v, 0) {
		if nc.op == "Delete" {
			continue
		}
		if err := nc.call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("string at key: %s = %v; want ErrWrongType", nc.op, err)
		}
		if after := nameState(t, rdb, name); after != before {
			t.Fatalf("string at key: %s changed Redis: %s -> %s", nc.op, before, after)
		}
	}

	// Distinct elements, and a value to write that none of them is: a call
	// that writes another index than it was given cannot go unseen.
	l := GetList[*string](c, uniqueName(t, rdb))
	a, b, cc, z := "a", "b", "c", "z"
	if _, err := l.AddAll(ctx, &a, &b, &cc); err != nil {
		t.Fatal(err)
	}
	before = nameState(t, rdb, l.Name())
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s = %v; want %v", what, err, want)
		}
		if after := nameState(t, rdb, l.Name()); after != before {
			t.Fatalf("%s changed Redis: %s -> %s", what, before, after)
		}
		got, err := l.ReadAll(ctx)
		if err != nil || len(got) != 3 || *got[0] != a || *got[1] != b || *got[2] != cc {
			t.Fatalf("after %s the list is %q (%v); want [a b c]", what, derefStrings(got), err)
		}
	}
	for _, nc := range listCalls(ctx, l, nil, 0) {
		switch nc.op {
		case "Add", "AddAll", "Insert", "Set", "FastSet", "Remove", "IndexOf", "Contains":
			check(nc.op+"(nil)", nc.call(), ErrNilValue)
		}
	}
	check("AddAll(v, nil)", second(l.AddAll(ctx, &v, nil)), ErrNilValue)
	anyList := GetList[any](c, l.Name())
	check("Add(a func), which msgpack cannot encode", second(anyList.Add(ctx, func() {})), ErrCodec)
	check("Insert(a channel)", anyList.Insert(ctx, 1, make(chan int)), ErrCodec)
	// 4294967295 and 2^40 are -1 and 0 once cut to 32 bits, as Redis 7.2+
	// and Valkey cut LSET's index; math.MaxInt32+1 is the first index refused
	// without asking Redis.
	for _, index := range []int64{-1, 3, 4, math.MaxInt32, math.MaxInt32 + 1, 1<<32 - 1, 1 << 32, 1 << 40, math.MaxInt64} {
		for _, nc := range listCalls(ctx, l, &z, index) {
			switch nc.op {
			case "Insert":
				if index == 3 {
					continue // Insert at the size appends
				}
				fallthrough
			case "Get", "Set", "FastSet", "RemoveAt":
				check(fmt.Sprintf("%s(%d)", nc.op, index), nc.call(), ErrIndexOutOfRange)
			}
		}
	}
	missing := GetList[string](c, uniqueName(t, rdb))
	for _, nc := range []namedCall{
		{"Get(0) on a missing list", func() error { return second(missing.Get(ctx, 0)) }},
		{"Set(0) on a missing list", func() error { return second(missing.Set(ctx, 0, "x")) }},
		{"FastSet(0) on a missing list", func() error { return missing.FastSet(ctx, 0, "x") }},
		{"RemoveAt(0) on a missing list", func() error { return second(missing.RemoveAt(ctx, 0)) }},
	} {
		if err := nc.call(); !errors.Is(err, ErrIndexOutOfRange) {
			t.Errorf("%s = %v; want ErrIndexOutOfRange", nc.op, err)
		}
	}
	if n := rdb.Exists(ctx, missing.Name()).Val(); n != 0 {
		t.Errorf("the calls on a missing list created it")
	}

	// An element that does not decode is ErrCodec naming the list.
	bad := GetList[int64](c, uniqueName(t, rdb))
	rdb.RPush(ctx, bad.Name(), "\xa1x")
	if _, err := bad.Get(ctx, 0); !errors.Is(err, ErrCodec) || !containsAll(err.Error(), fmt.Sprintf("list %q", bad.Name()), "msgpack") {
		t.Errorf("Get of a string as int64 = %v; want ErrCodec naming the list and msgpack", err)
	}
	if _, err := bad.ReadAll(ctx); !errors.Is(err, ErrCodec) {
		t.Errorf("ReadAll of a string as int64 = %v; want ErrCodec", err)
	}
}

// TestListInsertRemoveAtConcurrent runs inserts and removals by index from
// many goroutines at once: each is one atomic script, so no element is
// lost or duplicated (the list ends as the initial elements plus those
// inserted minus those RemoveAt returned).
func TestListInsertRemoveAtConcurrent(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	l := GetList[int64](c, uniqueName(t, rdb))
	want := map[int64]int{}
	for i := range int64(100) {
		want[i]++
	}
	if _, err := l.AddAll(ctx, slices.Sorted(maps.Keys(want))...); err != nil {
		t.Fatal(err)
	}
	const inserters, removers, each = 6, 3, 40
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, inserters+removers)
	for g := range inserters {
		wg.Go(func() {
			for k := range each {
				v := int64(1000 + g*each + k)
				if err := l.Insert(ctx, int64(5+k%50), v); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				want[v]++
				mu.Unlock()
			}
		})
	}
	for range removers {
		wg.Go(func() {
			for k := range each {
				v, err := l.RemoveAt(ctx, int64(3+k%40))
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				want[v]--
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	all, err := l.ReadAll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int{}
	for _, v := range all {
		got[v]++
	}
	maps.DeleteFunc(want, func(_ int64, n int) bool { return n == 0 })
	if !maps.Equal(got, want) {
		t.Fatalf("after concurrent Insert and RemoveAt the list has %d elements, want %d (multisets differ)", len(all), 100+inserters*each-removers*each)
	}
	if len(all) != 100+inserters*each-removers*each {
		t.Fatalf("size %d, want %d", len(all), 100+inserters*each-removers*each)
	}
}

// derefStrings returns the strings ps point to ("<nil>" for nil).
func derefStrings(ps []*string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "<nil>"
		if p != nil {
			out[i] = *p
		}
	}
	return out
}
