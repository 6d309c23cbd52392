package redisson

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func mustValues[T comparable](t *testing.T, what string, got []T, err error, want ...T) {
	t.Helper()
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
	}
}

func mustEntries[T comparable](t *testing.T, what string, got []ScoredEntry[T], err error, want ...ScoredEntry[T]) {
	t.Helper()
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("%s = %v, %v; want %v", what, got, err, want)
	}
}

// TestSortedSetOperations walks every SortedSet call on names spread over
// the cluster, with each codec that encodes strings.
func TestSortedSetOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}}
		for i, name := range spreadNames(t, rdb, 6) {
			codec := codecs[i%len(codecs)]
			z := GetSortedSet[string](c, name, WithCodec(codec))
			if z.Name() != name || z.Codec() != codec {
				t.Fatalf("Name, Codec = %q, %v", z.Name(), z.Codec())
			}
			if ok, err := z.Add(ctx, 1.5, "a"); err != nil || !ok {
				t.Fatalf("Add(1.5, a) = %v, %v; want true", ok, err)
			}
			if ok, err := z.Add(ctx, 1, "a"); err != nil || ok {
				t.Fatalf("Add(1, a) on a member = %v, %v; want false (score updated)", ok, err)
			}
			if n, err := z.AddAll(ctx, ScoredEntry[string]{"b", 3}, ScoredEntry[string]{"c", -1}, ScoredEntry[string]{"a", 1.5}); err != nil || n != 2 {
				t.Fatalf("AddAll = %d, %v; want 2", n, err)
			}
			if ok, err := z.AddIfAbsent(ctx, 9, "b"); err != nil || ok {
				t.Fatalf("AddIfAbsent(9, b) = %v, %v; want false", ok, err)
			}
			if ok, err := z.AddIfAbsent(ctx, 2, "d"); err != nil || !ok {
				t.Fatalf("AddIfAbsent(2, d) = %v, %v; want true", ok, err)
			}
			if f, ok, err := z.Score(ctx, "b"); err != nil || !ok || f != 3 {
				t.Fatalf("Score(b) = %v, %v, %v; want 3 (AddIfAbsent kept it)", f, ok, err)
			}
			if f, err := z.AddScore(ctx, "a", 10); err != nil || f != 11.5 {
				t.Fatalf("AddScore(a, 10) = %v, %v; want 11.5", f, err)
			}
			if f, err := z.AddScore(ctx, "new", -0.5); err != nil || f != -0.5 {
				t.Fatalf("AddScore(new, -0.5) = %v, %v; want -0.5", f, err)
			}
			if f, ok, err := z.Score(ctx, "zz"); err != nil || ok || f != 0 {
				t.Fatalf("Score(zz) = %v, %v, %v; want 0, false", f, ok, err)
			}
			// c -1, new -0.5, d 2, b 3, a 11.5
			if r, ok, err := z.Rank(ctx, "a"); err != nil || !ok || r != 4 {
				t.Fatalf("Rank(a) = %d, %v, %v; want 4", r, ok, err)
			}
			if r, ok, err := z.RevRank(ctx, "a"); err != nil || !ok || r != 0 {
				t.Fatalf("RevRank(a) = %d, %v, %v; want 0", r, ok, err)
			}
			if r, ok, err := z.Rank(ctx, "zz"); err != nil || ok || r != 0 {
				t.Fatalf("Rank(zz) = %d, %v, %v; want 0, false", r, ok, err)
			}
			if ok, err := z.Contains(ctx, "d"); err != nil || !ok {
				t.Fatalf("Contains(d) = %v, %v", ok, err)
			}
			if n, err := z.Size(ctx); err != nil || n != 5 {
				t.Fatalf("Size = %d, %v; want 5", n, err)
			}
			got, err := z.RangeByRank(ctx, 0, -1)
			mustValues(t, "RangeByRank(0, -1)", got, err, "c", "new", "d", "b", "a")
			got, err = z.RevRangeByRank(ctx, 0, 1)
			mustValues(t, "RevRangeByRank(0, 1)", got, err, "a", "b")
			es, err := z.EntryRangeByRank(ctx, 1, 2)
			mustEntries(t, "EntryRangeByRank(1, 2)", es, err, ScoredEntry[string]{"new", -0.5}, ScoredEntry[string]{"d", 2})
			es, err = z.EntryRevRangeByRank(ctx, -1, -1)
			mustEntries(t, "EntryRevRangeByRank(-1, -1)", es, err, ScoredEntry[string]{"c", -1})
			if ok, err := z.Remove(ctx, "new"); err != nil || !ok {
				t.Fatalf("Remove(new) = %v, %v", ok, err)
			}
			if ok, err := z.Remove(ctx, "new"); err != nil || ok {
				t.Fatalf("Remove(new) again = %v, %v; want false", ok, err)
			}
			es, err = z.PollFirst(ctx, 1)
			mustEntries(t, "PollFirst(1)", es, err, ScoredEntry[string]{"c", -1})
			es, err = z.PollLast(ctx, 2)
			mustEntries(t, "PollLast(2)", es, err, ScoredEntry[string]{"a", 11.5}, ScoredEntry[string]{"b", 3})
			es, err = z.PollFirst(ctx, 0)
			mustEntries(t, "PollFirst(0)", es, err)
			es, err = z.PollFirst(ctx, 5)
			mustEntries(t, "PollFirst(5)", es, err, ScoredEntry[string]{"d", 2})
			es, err = z.PollLast(ctx, 1)
			mustEntries(t, "PollLast on empty", es, err)
			if n := rdb.Exists(ctx, name).Val(); n != 0 {
				t.Fatalf("the emptied sorted set still exists")
			}
			z.Add(ctx, 1, "x")
			if ok, err := z.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	})
}

// TestSortedSetScoreRanges checks the range calls by score: inclusive and
// exclusive bounds, infinities, offset and count, reversed, with scores,
// Count and RemoveRangeByScore/ByRank.
func TestSortedSetScoreRanges(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	z := GetSortedSet[int64](c, uniqueName(t, rdb))
	for i := range int64(10) { // member i with score i
		if _, err := z.Add(ctx, float64(i), i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := z.Add(ctx, math.Inf(1), 100); err != nil {
		t.Fatal(err)
	}
	if _, err := z.Add(ctx, math.Inf(-1), -100); err != nil {
		t.Fatal(err)
	}
	inf := math.Inf(1)
	for _, tc := range []struct {
		r    ScoreRange
		o    RangeOptions
		want []int64
	}{
		{ScoreRange{Min: 2, Max: 4}, RangeOptions{}, []int64{2, 3, 4}},
		{ScoreRange{Min: 2, Max: 4, MinExclusive: true}, RangeOptions{}, []int64{3, 4}},
		{ScoreRange{Min: 2, Max: 4, MaxExclusive: true}, RangeOptions{}, []int64{2, 3}},
		{ScoreRange{Min: 2, Max: 4, MinExclusive: true, MaxExclusive: true}, RangeOptions{}, []int64{3}},
		{ScoreRange{Min: 2, Max: 4}, RangeOptions{Reverse: true}, []int64{4, 3, 2}},
		{ScoreRange{Min: 2, Max: 4, MaxExclusive: true}, RangeOptions{Reverse: true}, []int64{3, 2}},
		{ScoreRange{Min: 0, Max: 9}, RangeOptions{Offset: 2, Count: 3}, []int64{2, 3, 4}},
		{ScoreRange{Min: 0, Max: 9}, RangeOptions{Offset: 7}, []int64{7, 8, 9}},
		{ScoreRange{Min: 0, Max: 9}, RangeOptions{Count: 2}, []int64{0, 1}},
		{ScoreRange{Min: 0, Max: 9}, RangeOptions{Reverse: true, Offset: 1, Count: 2}, []int64{8, 7}},
		{ScoreRange{Min: 8, Max: inf}, RangeOptions{}, []int64{8, 9, 100}},
		{ScoreRange{Min: -inf, Max: 0}, RangeOptions{}, []int64{-100, 0}},
		{ScoreRange{Min: 8, Max: inf, MaxExclusive: true}, RangeOptions{}, []int64{8, 9}},
		{ScoreRange{Min: 5, Max: 4}, RangeOptions{}, []int64{}},
	} {
		got, err := z.RangeByScore(ctx, tc.r, tc.o)
		mustValues(t, fmt.Sprintf("RangeByScore(%+v, %+v)", tc.r, tc.o), got, err, tc.want...)
		es, err := z.EntryRangeByScore(ctx, tc.r, tc.o)
		var want []ScoredEntry[int64]
		for _, v := range tc.want {
			s := float64(v)
			if v == 100 || v == -100 {
				s = math.Copysign(inf, float64(v))
			}
			want = append(want, ScoredEntry[int64]{v, s})
		}
		mustEntries(t, fmt.Sprintf("EntryRangeByScore(%+v, %+v)", tc.r, tc.o), es, err, want...)
		if tc.o == (RangeOptions{}) {
			if n, err := z.Count(ctx, tc.r); err != nil || n != int64(len(tc.want)) {
				t.Fatalf("Count(%+v) = %d, %v; want %d", tc.r, n, err, len(tc.want))
			}
		}
	}
	if n, err := z.RemoveRangeByScore(ctx, ScoreRange{Min: 0, Max: 3, MaxExclusive: true}); err != nil || n != 3 {
		t.Fatalf("RemoveRangeByScore([0, 3)) = %d, %v; want 3", n, err)
	}
	if n, err := z.RemoveRangeByRank(ctx, 0, 1); err != nil || n != 2 {
		t.Fatalf("RemoveRangeByRank(0, 1) = %d, %v; want 2", n, err)
	}
	got, err := z.RangeByRank(ctx, 0, -1)
	mustValues(t, "after the removals", got, err, 4, 5, 6, 7, 8, 9, 100)
}

// TestSortedSetIterator scans 10,000 members with ZSCAN in pages: every
// member once with its score, in many round trips.
func TestSortedSetIterator(t *testing.T) {
	rdb := sharedRedis(t)
	log := newCmdLog(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	z := GetSortedSet[int64](c, uniqueName(t, rdb))
	const n, batch = 10000, 100
	var entries []ScoredEntry[int64]
	for i := range int64(n) {
		entries = append(entries, ScoredEntry[int64]{i, float64(i) / 4})
	}
	for chunk := range slices.Chunk(entries, 1000) {
		if _, err := z.AddAll(ctx, chunk...); err != nil {
			t.Fatal(err)
		}
	}
	log.take()
	it := z.Iterator(batch)
	seen := map[int64]float64{}
	for v, score := range it.All(ctx) {
		if _, dup := seen[v]; dup {
			t.Fatalf("member %d yielded twice", v)
		}
		seen[v] = score
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n {
		t.Fatalf("iterated %d members, want %d", len(seen), n)
	}
	for v, score := range seen {
		if score != float64(v)/4 {
			t.Fatalf("member %d with score %v, want %v", v, score, float64(v)/4)
		}
	}
	cmds := log.take()
	if len(cmds) < n/(2*batch) {
		t.Errorf("%d members in batches of %d took %d ZSCANs; want at least %d", n, batch, len(cmds), n/(2*batch))
	}
	for _, cmd := range cmds {
		if cmd[0] != "ZSCAN" || cmd[len(cmd)-1] != strconv.Itoa(batch) {
			t.Fatalf("iterator sent %q; want ZSCAN ... COUNT %d only", cmd, batch)
		}
	}
	bad := z.Iterator(-1)
	for range bad.All(ctx) {
	}
	if !errors.Is(bad.Err(), ErrInvalidBatch) {
		t.Errorf("Iterator(-1).Err = %v; want ErrInvalidBatch", bad.Err())
	}
}

func sortedSetCalls(ctx context.Context, z *SortedSet[*string], v *string, score float64, r ScoreRange, o RangeOptions, n int64) []namedCall {
	return []namedCall{
		{"Add", func() error { return second(z.Add(ctx, score, v)) }},
		{"AddIfAbsent", func() error { return second(z.AddIfAbsent(ctx, score, v)) }},
		{"AddAll", func() error { return second(z.AddAll(ctx, ScoredEntry[*string]{v, score})) }},
		{"AddScore", func() error { return second(z.AddScore(ctx, v, score)) }},
		{"Score", func() error { return third(z.Score(ctx, v)) }},
		{"Contains", func() error { return second(z.Contains(ctx, v)) }},
		{"Rank", func() error { return third(z.Rank(ctx, v)) }},
		{"RevRank", func() error { return third(z.RevRank(ctx, v)) }},
		{"Remove", func() error { return second(z.Remove(ctx, v)) }},
		{"Size", func() error { return second(z.Size(ctx)) }},
		{"Count", func() error { return second(z.Count(ctx, r)) }},
		{"RemoveRangeByRank", func() error { return second(z.RemoveRangeByRank(ctx, 0, 0)) }},
		{"RemoveRangeByScore", func() error { return second(z.RemoveRangeByScore(ctx, r)) }},
		{"PollFirst", func() error { return second(z.PollFirst(ctx, n)) }},
		{"PollLast", func() error { return second(z.PollLast(ctx, n)) }},
		{"RangeByRank", func() error { return second(z.RangeByRank(ctx, 0, -1)) }},
		{"RevRangeByRank", func() error { return second(z.RevRangeByRank(ctx, 0, -1)) }},
		{"EntryRangeByRank", func() error { return second(z.EntryRangeByRank(ctx, 0, -1)) }},
		{"EntryRevRangeByRank", func() error { return second(z.EntryRevRangeByRank(ctx, 0, -1)) }},
		{"RangeByScore", func() error { return second(z.RangeByScore(ctx, r, o)) }},
		{"EntryRangeByScore", func() error { return second(z.EntryRangeByScore(ctx, r, o)) }},
		{"Iterator", func() error {
			it := z.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		}},
		{"Delete", func() error { return second(z.Delete(ctx)) }},
	}
}

// TestSortedSetBadInput: empty name, closed client, a key of another type,
// nil pointers, NaN scores and bounds, negative counts and undecodable
// members give their documented errors and leave Redis unchanged.
func TestSortedSetBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	v := "v"
	all := ScoreRange{Min: math.Inf(-1), Max: math.Inf(1)}
	for _, tc := range []struct {
		what string
		z    *SortedSet[*string]
		want error
	}{
		{"empty name", GetSortedSet[*string](c, ""), ErrEmptyName},
		{"closed client", GetSortedSet[*string](closed, uniqueName(t, rdb)), ErrClientClosed},
	} {
		for _, nc := range sortedSetCalls(ctx, tc.z, &v, 1, all, RangeOptions{}, 1) {
			if err := nc.call(); !errors.Is(err, tc.want) {
				t.Errorf("%s: %s = %v; want %v", tc.what, nc.op, err, tc.want)
			}
		}
	}

	name := uniqueName(t, rdb)
	rdb.Set(ctx, name, "a string", 0)
	before := nameState(t, rdb, name)
	for _, nc := range sortedSetCalls(ctx, GetSortedSet[*string](c, name), &v, 1, all, RangeOptions{}, 1) {
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

	z := GetSortedSet[*string](c, uniqueName(t, rdb))
	if _, err := z.Add(ctx, 1, &v); err != nil {
		t.Fatal(err)
	}
	before = nameState(t, rdb, z.Name())
	nan := math.NaN()
	check := func(what string, err, want error) {
		t.Helper()
		if !errors.Is(err, want) {
			t.Errorf("%s = %v; want %v", what, err, want)
		}
		if after := nameState(t, rdb, z.Name()); after != before {
			t.Fatalf("%s changed Redis: %s -> %s", what, before, after)
		}
	}
	for _, nc := range sortedSetCalls(ctx, z, nil, 1, all, RangeOptions{}, 1) {
		switch nc.op {
		case "Add", "AddIfAbsent", "AddAll", "AddScore", "Score", "Contains", "Rank", "RevRank", "Remove":
			check(nc.op+"(nil)", nc.call(), ErrNilValue)
		}
	}
	for _, nc := range sortedSetCalls(ctx, z, &v, nan, all, RangeOptions{}, 1) {
		switch nc.op {
		case "Add", "AddIfAbsent", "AddAll", "AddScore":
			check(nc.op+"(NaN)", nc.call(), ErrInvalidScore)
		}
	}
	for _, r := range []ScoreRange{{Min: nan, Max: 1}, {Min: 0, Max: nan}} {
		for _, nc := range sortedSetCalls(ctx, z, &v, 1, r, RangeOptions{}, 1) {
			switch nc.op {
			case "Count", "RemoveRangeByScore", "RangeByScore", "EntryRangeByScore":
				check(fmt.Sprintf("%s(%v)", nc.op, r), nc.call(), ErrInvalidScore)
			}
		}
	}
	for _, o := range []RangeOptions{{Offset: -1}, {Count: -1}, {Offset: 1, Count: -1, Reverse: true}} {
		for _, nc := range sortedSetCalls(ctx, z, &v, 1, all, o, -1) {
			switch nc.op {
			case "RangeByScore", "EntryRangeByScore", "PollFirst", "PollLast":
				check(fmt.Sprintf("%s(%+v, n=-1)", nc.op, o), nc.call(), ErrNegativeCount)
			}
		}
	}
	check("AddAll(good, NaN)", second(z.AddAll(ctx, ScoredEntry[*string]{&v, 2}, ScoredEntry[*string]{&v, nan})), ErrInvalidScore)
	check("AddAll(good, nil)", second(z.AddAll(ctx, ScoredEntry[*string]{&v, 2}, ScoredEntry[*string]{nil, 3})), ErrNilValue)

	// +Inf plus -Inf is NaN: Redis refuses it and the score stays.
	inf := GetSortedSet[string](c, uniqueName(t, rdb))
	inf.Add(ctx, math.Inf(1), "m")
	if _, err := inf.AddScore(ctx, "m", math.Inf(-1)); !errors.Is(err, ErrInvalidScore) {
		t.Errorf("AddScore(+Inf member, -Inf) = %v; want ErrInvalidScore", err)
	}
	if f, _, _ := inf.Score(ctx, "m"); !math.IsInf(f, 1) {
		t.Errorf("score after the refused AddScore = %v; want +Inf", f)
	}

	bad := GetSortedSet[int64](c, uniqueName(t, rdb))
	rdb.ZAdd(ctx, bad.Name(), redis.Z{Score: 1, Member: "\xa1x"})
	if _, err := bad.RangeByRank(ctx, 0, -1); !errors.Is(err, ErrCodec) || !containsAll(err.Error(), fmt.Sprintf("sorted set %q", bad.Name()), "msgpack") {
		t.Errorf("RangeByRank of a string as int64 = %v; want ErrCodec naming the sorted set and msgpack", err)
	}
}
