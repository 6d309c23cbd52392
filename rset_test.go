package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func mustMembers(t *testing.T, what string, got []string, err error, want ...string) {
	t.Helper()
	slices.Sort(got)
	slices.Sort(want)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
	}
}

// TestSetOperations walks every single-set call on names spread over the
// cluster, with each codec that encodes strings.
func TestSetOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}}
		for i, name := range spreadNames(t, rdb, 6) {
			codec := codecs[i%len(codecs)]
			s := GetSet[string](c, name, WithCodec(codec))
			if s.Name() != name || s.Codec() != codec {
				t.Fatalf("Name, Codec = %q, %v", s.Name(), s.Codec())
			}
			if ok, err := s.Add(ctx, "a"); err != nil || !ok {
				t.Fatalf("Add(a) = %v, %v; want true", ok, err)
			}
			if ok, err := s.Add(ctx, "a"); err != nil || ok {
				t.Fatalf("Add(a) again = %v, %v; want false", ok, err)
			}
			if n, err := s.AddAll(ctx, "b", "c", "a", "d"); err != nil || n != 3 {
				t.Fatalf("AddAll = %d, %v; want 3", n, err)
			}
			if n, err := s.AddAll(ctx); err != nil || n != 0 {
				t.Fatalf("AddAll() = %d, %v", n, err)
			}
			if ok, err := s.Contains(ctx, "c"); err != nil || !ok {
				t.Fatalf("Contains(c) = %v, %v", ok, err)
			}
			if ok, err := s.Contains(ctx, "z"); err != nil || ok {
				t.Fatalf("Contains(z) = %v, %v", ok, err)
			}
			if ok, err := s.Remove(ctx, "d"); err != nil || !ok {
				t.Fatalf("Remove(d) = %v, %v", ok, err)
			}
			if n, err := s.RemoveAll(ctx, "d", "z"); err != nil || n != 0 {
				t.Fatalf("RemoveAll(d, z) = %d, %v; want 0", n, err)
			}
			if n, err := s.Size(ctx); err != nil || n != 3 {
				t.Fatalf("Size = %d, %v; want 3", n, err)
			}
			got, err := s.Members(ctx)
			mustMembers(t, "Members", got, err, "a", "b", "c")
			if v, ok, err := s.RandomMember(ctx); err != nil || !ok || !slices.Contains([]string{"a", "b", "c"}, v) {
				t.Fatalf("RandomMember = %q, %v, %v", v, ok, err)
			}
			got, err = s.RandomMembers(ctx, 5)
			mustMembers(t, "RandomMembers(5)", got, err, "a", "b", "c")
			if got, err := s.RandomMembers(ctx, 0); err != nil || len(got) != 0 {
				t.Fatalf("RandomMembers(0) = %v, %v", got, err)
			}
			v, ok, err := s.Pop(ctx)
			if err != nil || !ok {
				t.Fatalf("Pop = %q, %v, %v", v, ok, err)
			}
			rest, err := s.PopN(ctx, 5)
			mustMembers(t, "Pop then PopN(5)", append(rest, v), err, "a", "b", "c")
			if v, ok, err := s.Pop(ctx); err != nil || ok || v != "" {
				t.Fatalf("Pop on empty = %q, %v, %v; want \"\", false", v, ok, err)
			}
			if v, ok, err := s.RandomMember(ctx); err != nil || ok || v != "" {
				t.Fatalf("RandomMember on empty = %q, %v, %v", v, ok, err)
			}
			if n := rdb.Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("the emptied set still exists")
			}
			s.Add(ctx, "x")
			if ok, err := s.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	})
}

// TestSetAlgebra checks union, intersection and difference, read and
// stored, on sets named with one hash tag (one slot on the cluster too),
// and that a destination of another type is ErrWrongType and unchanged.
func TestSetAlgebra(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		tag := "{" + uniqueName(t, rdb) + "}"
		set := func(suffix string, members ...string) *Set[string] {
			s := GetSet[string](c, tag+":"+suffix)
			t.Cleanup(func() { rdb.Del(context.Background(), s.Name()) })
			if _, err := s.AddAll(ctx, members...); err != nil {
				t.Fatal(err)
			}
			return s
		}
		a, b, d := set("a", "1", "2", "3"), set("b", "2", "3", "4"), set("d", "3", "5")
		got, err := a.Union(ctx, b, d)
		mustMembers(t, "Union", got, err, "1", "2", "3", "4", "5")
		got, err = a.Intersection(ctx, b, d)
		mustMembers(t, "Intersection", got, err, "3")
		got, err = a.Difference(ctx, b)
		mustMembers(t, "Difference", got, err, "1")
		got, err = a.Union(ctx)
		mustMembers(t, "Union of a alone", got, err, "1", "2", "3")
		got, err = a.Union(ctx, GetSet[string](c, tag+":missing"))
		mustMembers(t, "Union with a missing set", got, err, "1", "2", "3")

		dest := set("dest", "old")
		if n, err := a.UnionStore(ctx, dest, b); err != nil || n != 4 {
			t.Fatalf("UnionStore = %d, %v; want 4", n, err)
		}
		got, err = dest.Members(ctx)
		mustMembers(t, "dest after UnionStore", got, err, "1", "2", "3", "4")
		if n, err := a.IntersectionStore(ctx, dest, b); err != nil || n != 2 {
			t.Fatalf("IntersectionStore = %d, %v; want 2", n, err)
		}
		got, err = dest.Members(ctx)
		mustMembers(t, "dest after IntersectionStore", got, err, "2", "3")
		if n, err := a.DifferenceStore(ctx, a, b); err != nil || n != 1 {
			t.Fatalf("DifferenceStore into itself = %d, %v; want 1", n, err)
		}
		got, err = a.Members(ctx)
		mustMembers(t, "a after DifferenceStore into a", got, err, "1")
		// Redisson's s.union("st2"): SUNIONSTORE st st2.
		if n, err := b.UnionStore(ctx, a); err != nil || n != 3 {
			t.Fatalf("b.UnionStore(a) = %d, %v; want 3", n, err)
		}
		got, err = a.Members(ctx)
		mustMembers(t, "a after b.UnionStore(a)", got, err, "2", "3", "4")
		if n, err := a.IntersectionStore(ctx, dest, GetSet[string](c, tag+":missing")); err != nil || n != 0 {
			t.Fatalf("IntersectionStore with a missing set = %d, %v; want 0", n, err)
		}
		if n := rdb.Exists(ctx, dest.Name()).Val(); n != 0 {
			t.Fatalf("an empty result left dest in Redis")
		}

		foreign := GetSet[string](c, tag+":foreign")
		t.Cleanup(func() { rdb.Del(context.Background(), foreign.Name()) })
		rdb.Set(ctx, foreign.Name(), "a string", 0)
		before := nameState(t, rdb, tag)
		for _, nc := range []namedCall{
			{"UnionStore into a string", func() error { return second(a.UnionStore(ctx, foreign, b)) }},
			{"IntersectionStore into a string", func() error { return second(a.IntersectionStore(ctx, foreign, b)) }},
			{"DifferenceStore into a string", func() error { return second(a.DifferenceStore(ctx, foreign, b)) }},
			{"UnionStore from a string", func() error { return second(a.UnionStore(ctx, dest, foreign)) }},
			{"Union with a string", func() error { return second(a.Union(ctx, foreign)) }},
			{"Intersection with a string", func() error { return second(a.Intersection(ctx, foreign)) }},
			{"Difference with a string", func() error { return second(a.Difference(ctx, foreign)) }},
		} {
			if err := nc.call(); !errors.Is(err, ErrWrongType) {
				t.Errorf("%s = %v; want ErrWrongType", nc.op, err)
			}
			if after := nameState(t, rdb, tag); after != before {
				t.Fatalf("%s changed Redis:\n%s\n->\n%s", nc.op, before, after)
			}
		}
		for _, nc := range []namedCall{
			{"Union with a nil set", func() error { return second(a.Union(ctx, nil)) }},
			{"UnionStore into nil", func() error { return second(a.UnionStore(ctx, nil, b)) }},
			{"DifferenceStore from nil", func() error { return second(a.DifferenceStore(ctx, dest, b, nil)) }},
		} {
			if err := nc.call(); !errors.Is(err, ErrNilValue) {
				t.Errorf("%s = %v; want ErrNilValue", nc.op, err)
			}
		}
		if _, err := a.Union(ctx, GetSet[string](c, "")); !errors.Is(err, ErrEmptyName) {
			t.Errorf("Union with an unnamed set = %v; want ErrEmptyName", err)
		}
		if after := nameState(t, rdb, tag); after != before {
			t.Fatalf("bad input changed Redis:\n%s\n->\n%s", before, after)
		}
	})
}

// TestSetCrossSlot: on a cluster, sets in different slots are ErrCrossSlot
// before anything is sent, for every multi-set call; on a single node the
// same names work.
func TestSetCrossSlot(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	log := newCmdLog(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, rdb)
	var names []string
	for i := 0; len(names) < 2; i++ { // two names in different slots
		n := base + ":" + strconv.Itoa(i)
		if len(names) == 0 || hashSlot(n) != hashSlot(names[0]) {
			names = append(names, n)
			t.Cleanup(func() { rdb.Del(context.Background(), n) })
		}
	}
	a, b := GetSet[string](c, names[0]), GetSet[string](c, names[1])
	a.Add(ctx, "1")
	b.Add(ctx, "2")
	log.take()
	for _, nc := range []namedCall{
		{"Union", func() error { return second(a.Union(ctx, b)) }},
		{"Intersection", func() error { return second(a.Intersection(ctx, b)) }},
		{"Difference", func() error { return second(a.Difference(ctx, b)) }},
		{"UnionStore", func() error { return second(a.UnionStore(ctx, a, b)) }},
		{"IntersectionStore", func() error { return second(a.IntersectionStore(ctx, b, a)) }},
		{"DifferenceStore into the other slot", func() error { return second(a.DifferenceStore(ctx, b)) }},
	} {
		err := nc.call()
		if !errors.Is(err, ErrCrossSlot) {
			t.Errorf("%s across slots = %v; want ErrCrossSlot", nc.op, err)
		}
	}
	if cmds := log.take(); len(cmds) != 0 {
		t.Errorf("cross-slot calls sent %q; want nothing", cmds)
	}
	got, err := a.Members(ctx)
	mustMembers(t, "a after the refused calls", got, err, "1")

	// The same names on a single node are one server: no slot rule.
	single := sharedRedis(t)
	sc := newClient(t, single, nil)
	sa, sb := GetSet[string](sc, names[0]), GetSet[string](sc, names[1])
	t.Cleanup(func() { single.Del(context.Background(), names...) })
	sa.Add(ctx, "1")
	sb.Add(ctx, "2")
	got, err = sa.Union(ctx, sb)
	mustMembers(t, "Union on a single node", got, err, "1", "2")
}

// TestSetIterator scans 10,000 members with SSCAN in pages of about the
// batch: every member at least once, no duplicates on an unchanging set,
// many round trips.
func TestSetIterator(t *testing.T) {
	rdb := sharedRedis(t)
	log := newCmdLog(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	s := GetSet[int64](c, uniqueName(t, rdb))
	const n, batch = 10000, 100
	var all []int64
	for i := range int64(n) {
		all = append(all, i)
	}
	for chunk := range slices.Chunk(all, 1000) {
		if _, err := s.AddAll(ctx, chunk...); err != nil {
			t.Fatal(err)
		}
	}
	log.take()
	it := s.Iterator(batch)
	seen := map[int64]int{}
	for v := range it.All(ctx) {
		seen[v]++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("iterated %d distinct members, want %d", len(seen), n)
	}
	cmds := log.take()
	if len(cmds) < n/(2*batch) {
		t.Errorf("%d members in batches of %d took %d SSCANs; want at least %d", n, batch, len(cmds), n/(2*batch))
	}
	for _, cmd := range cmds {
		if cmd[0] != "SSCAN" || cmd[len(cmd)-1] != strconv.Itoa(batch) {
			t.Fatalf("iterator sent %q; want SSCAN ... COUNT %d only", cmd, batch)
		}
	}
	k := 0
	for range it.All(ctx) {
		if k++; k == 3 {
			break
		}
	}
	if k != 3 || it.Err() != nil {
		t.Errorf("early stop: %d yielded, Err %v", k, it.Err())
	}
	bad := s.Iterator(0)
	for range bad.All(ctx) {
	}
	if !errors.Is(bad.Err(), ErrInvalidBatch) {
		t.Errorf("Iterator(0).Err = %v; want ErrInvalidBatch", bad.Err())
	}
}

func setCalls(ctx context.Context, s *Set[*string], v *string, n int64) []namedCall {
	return []namedCall{
		{"Add", func() error { return second(s.Add(ctx, v)) }},
		{"AddAll", func() error { return second(s.AddAll(ctx, v)) }},
		{"Remove", func() error { return second(s.Remove(ctx, v)) }},
		{"RemoveAll", func() error { return second(s.RemoveAll(ctx, v)) }},
		{"Contains", func() error { return second(s.Contains(ctx, v)) }},
		{"Size", func() error { return second(s.Size(ctx)) }},
		{"Members", func() error { return second(s.Members(ctx)) }},
		{"RandomMember", func() error { return third(s.RandomMember(ctx)) }},
		{"RandomMembers", func() error { return second(s.RandomMembers(ctx, n)) }},
		{"Pop", func() error { return third(s.Pop(ctx)) }},
		{"PopN", func() error { return second(s.PopN(ctx, n)) }},
		{"Union", func() error { return second(s.Union(ctx, s)) }},
		{"Intersection", func() error { return second(s.Intersection(ctx, s)) }},
		{"Difference", func() error { return second(s.Difference(ctx, s)) }},
		{"UnionStore", func() error { return second(s.UnionStore(ctx, s, s)) }},
		{"IntersectionStore", func() error { return second(s.IntersectionStore(ctx, s, s)) }},
		{"DifferenceStore", func() error { return second(s.DifferenceStore(ctx, s, s)) }},
		{"Iterator", func() error {
			it := s.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		}},
		{"Delete", func() error { return second(s.Delete(ctx)) }},
	}
}

// TestSetBadInput: empty name, closed client, a key of another type, nil
// pointers, negative counts and undecodable members give their documented
// errors and leave Redis unchanged.
func TestSetBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	v := "v"
	for _, tc := range []struct {
		what string
		s    *Set[*string]
		want error
	}{
		{"empty name", GetSet[*string](c, ""), ErrEmptyName},
		{"closed client", GetSet[*string](closed, uniqueName(t, rdb)), ErrClientClosed},
	} {
		for _, nc := range setCalls(ctx, tc.s, &v, 1) {
			if err := nc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s = %v; want %v", tc.what, nc.op, err, tc.want)
			}
		}
	}
	closedName := GetSet[*string](closed, uniqueName(t, rdb)).Name()
	if n := rdb.Exists(ctx, closedName).Val(); n != 0 {
		t.Errorf("calls after Close created the set")
	}

	name := uniqueName(t, rdb)
	rdb.Set(ctx, name, "a string", 0)
	before := nameState(t, rdb, name)
	for _, nc := range setCalls(ctx, GetSet[*string](c, name), &v, 1) {
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

	s := GetSet[*string](c, uniqueName(t, rdb))
	if _, err := s.AddAll(ctx, &v); err != nil {
		t.Fatal(err)
	}
	before = nameState(t, rdb, s.Name())
	for _, nc := range setCalls(ctx, s, nil, -1) {
		var want error
		switch nc.op {
		case "Add", "AddAll", "Remove", "RemoveAll", "Contains":
			want = ErrNilValue
		case "RandomMembers", "PopN":
			want = ErrNegativeCount
		default:
			continue
		}
		if err := nc.call(); !errors.Is(err, want) {
			t.Errorf("%s(bad) = %v; want %v", nc.op, err, want)
		}
		if after := nameState(t, rdb, s.Name()); after != before {
			t.Fatalf("%s(bad) changed Redis: %s -> %s", nc.op, before, after)
		}
	}
	if _, err := s.AddAll(ctx, &v, nil); !errors.Is(err, ErrNilValue) {
		t.Errorf("AddAll(v, nil) = %v; want ErrNilValue", err)
	}

	bad := GetSet[int64](c, uniqueName(t, rdb))
	rdb.SAdd(ctx, bad.Name(), "\xa1x")
	if _, err := bad.Members(ctx); !errors.Is(err, ErrCodec) || !containsAll(err.Error(), fmt.Sprintf("set %q", bad.Name()), "msgpack") {
		t.Errorf("Members of a string as int64 = %v; want ErrCodec naming the set and msgpack", err)
	}
}
