package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/redistest"
)

// setCacheName returns a unique SetCache name deleted when the test ends.
func setCacheName(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	return name
}

// iterateSetCache returns what an iterator of batch yields, sorted.
func iterateSetCache[T any](ctx context.Context, s *SetCache[T], batch int) ([]string, error) {
	it := s.Iterator(batch)
	var out []string
	for v := range it.All(ctx) {
		out = append(out, fmt.Sprint(v))
	}
	slices.Sort(out)
	return out, it.Err()
}

// TestSetCacheOperations walks every call, and checks that a member whose
// TTL ran out is never returned nor counted although it is still in the
// zset (the eviction pass never runs here).
func TestSetCacheOperations(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	s := GetSetCache[string](c, setCacheName(t, rdb))
	for _, v := range []string{"a", "b", "c"} {
		if ok, err := s.Add(ctx, v); err != nil || !ok {
			t.Fatalf("Add(%s) = %v, %v; want true", v, ok, err)
		}
	}
	if ok, err := s.Add(ctx, "a"); err != nil || ok {
		t.Errorf("Add(a) again = %v, %v; want false", ok, err)
	}
	if ok, err := s.AddWithTTL(ctx, "short", 300*time.Millisecond); err != nil || !ok {
		t.Fatalf("AddWithTTL(short) = %v, %v", ok, err)
	}
	if ok, err := s.AddWithTTL(ctx, "b", time.Hour); err != nil || ok {
		t.Errorf("AddWithTTL(b) on a live member = %v, %v; want false", ok, err)
	}
	if ok, err := s.Contains(ctx, "short"); err != nil || !ok {
		t.Errorf("Contains(short) = %v, %v; want true", ok, err)
	}
	if n, err := s.Size(ctx); err != nil || n != 4 {
		t.Errorf("Size = %d, %v; want 4", n, err)
	}
	all, err := s.ReadAll(ctx)
	if want := []string{"short", "b", "a", "c"}; err != nil || len(all) != 4 || all[0] != "short" || all[1] != "b" {
		t.Errorf("ReadAll = %q, %v; want the earliest expiry first: %q", all, err, want)
	}
	time.Sleep(400 * time.Millisecond)
	if ok, err := s.Contains(ctx, "short"); err != nil || ok {
		t.Errorf("Contains(short) after its TTL = %v, %v; want false", ok, err)
	}
	if n, err := s.Size(ctx); err != nil || n != 3 {
		t.Errorf("Size after the TTL = %d, %v; want 3", n, err)
	}
	if all, err := s.ReadAll(ctx); err != nil || slices.Contains(all, "short") || len(all) != 3 {
		t.Errorf("ReadAll after the TTL = %q, %v", all, err)
	}
	for _, batch := range []int{1, 2, 100} {
		if got, err := iterateSetCache(ctx, s, batch); err != nil || !slices.Equal(got, []string{"a", "b", "c"}) {
			t.Errorf("iterator(%d) = %q, %v; want [a b c]", batch, got, err)
		}
	}
	if n := rdb.ZCard(ctx, s.Name()).Val(); n != 4 {
		t.Errorf("the zset has %d members; want 4 (the expired one not evicted yet)", n)
	}
	if ok, err := s.Add(ctx, "short"); err != nil || !ok {
		t.Errorf("Add(short) after its TTL = %v, %v; want true (it had expired)", ok, err)
	}
	if ok, err := s.Remove(ctx, "c"); err != nil || !ok {
		t.Errorf("Remove(c) = %v, %v; want true", ok, err)
	}
	if ok, err := s.Remove(ctx, "c"); err != nil || ok {
		t.Errorf("Remove(c) again = %v, %v; want false", ok, err)
	}
	if ok, err := s.Delete(ctx); err != nil || !ok {
		t.Errorf("Delete = %v, %v; want true", ok, err)
	}
	if n, err := s.Size(ctx); err != nil || n != 0 {
		t.Errorf("Size after Delete = %d, %v", n, err)
	}
}

// TestSetCacheEvictionPass: the client's eviction pass (MapCache's) deletes
// a SetCache's expired members in bounded batches and keeps the live ones.
func TestSetCacheEvictionPass(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, 10*time.Millisecond)
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	const n = 1000
	past := float64(time.Now().Add(-time.Minute).UnixMilli())
	pipe := rdb.Pipeline()
	for i := range n {
		pipe.ZAdd(ctx, name, redis.Z{Score: past, Member: fmt.Sprintf("\xa4k%03d", i)})
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	s := GetSetCache[string](c, name)
	if _, err := s.AddWithTTL(ctx, "live", time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, "forever"); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "every expired member deleted", func() bool { return rdb.ZCard(ctx, name).Val() == 2 })
	st := c.mapCaches.stats()
	if st.evicted < n {
		t.Errorf("the pass counted %d deletions, want at least %d", st.evicted, n)
	}
	if st.biggest > 2*mapCacheEvictBatch {
		t.Errorf("one call deleted %d members, want at most %d", st.biggest, 2*mapCacheEvictBatch)
	}
	if all, err := s.ReadAll(ctx); err != nil || !slices.Equal(all, []string{"live", "forever"}) {
		t.Errorf("ReadAll = %q, %v; want [live forever]", all, err)
	}
}

// TestSetCacheBadInput: every refusal is its sentinel and leaves Redis as
// it was.
func TestSetCacheBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	s := GetSetCache[*string](c, name)
	empty := GetSetCache[string](c, "")
	v := "v"
	if _, err := s.Add(ctx, &v); err != nil {
		t.Fatal(err)
	}
	closed := newClient(t, rdb, nil)
	closed.Close()
	cs := GetSetCache[string](closed, name)
	iterate := func(it *SetCacheIterator[string]) error {
		for range it.All(ctx) {
		}
		return it.Err()
	}
	cases := []struct {
		what string
		call func() error
		want error
	}{
		{"empty name Add", func() error { _, err := empty.Add(ctx, "v"); return err }, ErrEmptyName},
		{"empty name AddWithTTL", func() error { _, err := empty.AddWithTTL(ctx, "v", time.Second); return err }, ErrEmptyName},
		{"empty name Contains", func() error { _, err := empty.Contains(ctx, "v"); return err }, ErrEmptyName},
		{"empty name Remove", func() error { _, err := empty.Remove(ctx, "v"); return err }, ErrEmptyName},
		{"empty name Size", func() error { _, err := empty.Size(ctx); return err }, ErrEmptyName},
		{"empty name ReadAll", func() error { _, err := empty.ReadAll(ctx); return err }, ErrEmptyName},
		{"empty name Delete", func() error { _, err := empty.Delete(ctx); return err }, ErrEmptyName},
		{"empty name Iterator", func() error { return iterate(empty.Iterator(1)) }, ErrEmptyName},
		{"nil Add", func() error { _, err := s.Add(ctx, nil); return err }, ErrNilValue},
		{"nil AddWithTTL", func() error { _, err := s.AddWithTTL(ctx, nil, time.Second); return err }, ErrNilValue},
		{"nil Contains", func() error { _, err := s.Contains(ctx, nil); return err }, ErrNilValue},
		{"nil Remove", func() error { _, err := s.Remove(ctx, nil); return err }, ErrNilValue},
		{"negative TTL", func() error { _, err := s.AddWithTTL(ctx, &v, -time.Millisecond); return err }, ErrNegativeDuration},
		{"undecodable member", func() error { _, err := GetSetCache[int](c, name).ReadAll(ctx); return err }, ErrCodec},
		{"batch 0", func() error { return iterate(GetSetCache[string](c, name).Iterator(0)) }, ErrInvalidBatch},
		{"closed Add", func() error { _, err := cs.Add(ctx, "v"); return err }, ErrClientClosed},
		{"closed Size", func() error { _, err := cs.Size(ctx); return err }, ErrClientClosed},
		{"cancelled Add", func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := s.Add(cctx, &v)
			return err
		}, context.Canceled},
	}
	before := nameState(t, rdb, name)
	beforeAll := nameState(t, rdb, "")
	for _, tc := range cases {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
	}
	if after := nameState(t, rdb, name); after != before {
		t.Errorf("Redis changed:\n got %s\nwant %s", after, before)
	}
	if after := nameState(t, rdb, ""); after != beforeAll {
		t.Errorf("Redis changed (empty names)")
	}
}

// TestSetCacheWrongType: a key of another type is ErrWrongType for every
// call but Delete, and is left as it was.
func TestSetCacheWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	if err := rdb.Set(ctx, name, "not a zset", 0).Err(); err != nil {
		t.Fatal(err)
	}
	s := GetSetCache[string](c, name)
	for what, call := range map[string]func() error{
		"Add":        func() error { _, err := s.Add(ctx, "v"); return err },
		"AddWithTTL": func() error { _, err := s.AddWithTTL(ctx, "v", time.Minute); return err },
		"Contains":   func() error { _, err := s.Contains(ctx, "v"); return err },
		"Remove":     func() error { _, err := s.Remove(ctx, "v"); return err },
		"Size":       func() error { _, err := s.Size(ctx); return err },
		"ReadAll":    func() error { _, err := s.ReadAll(ctx); return err },
		"Iterator": func() error {
			it := s.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		},
	} {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s: got %v, want ErrWrongType", what, err)
		}
	}
	if got := rdb.Get(ctx, name).Val(); got != "not a zset" {
		t.Errorf("the string is now %q", got)
	}
}

// TestSetCacheOneRoundTrip counts the commands of each simple call once
// its script is loaded: one each.
func TestSetCacheOneRoundTrip(t *testing.T) {
	var sent atomic.Int64
	rdb := sharedRedis(t)
	rdb.AddHook(countHook{&sent})
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	s := GetSetCache[string](c, setCacheName(t, rdb))
	calls := map[string]func() error{
		"Add":        func() error { _, err := s.Add(ctx, "k"); return err },
		"AddWithTTL": func() error { _, err := s.AddWithTTL(ctx, "t", time.Minute); return err },
		"Contains":   func() error { _, err := s.Contains(ctx, "k"); return err },
		"Size":       func() error { _, err := s.Size(ctx); return err },
		"ReadAll":    func() error { _, err := s.ReadAll(ctx); return err },
		"Remove":     func() error { _, err := s.Remove(ctx, "x"); return err },
		"Delete":     func() error { _, err := s.Delete(ctx); return err },
	}
	for _, call := range calls { // load the scripts
		if err := call(); err != nil {
			t.Fatal(err)
		}
	}
	for op, call := range calls {
		sent.Store(0)
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if n := sent.Load(); n != 1 {
			t.Errorf("%s sent %d commands, want 1", op, n)
		}
	}
}

// TestSetCacheObserved: an Observer sees kind set_cache, one round trip,
// and a refused call as invalid.
func TestSetCacheObserved(t *testing.T) {
	rdb := sharedRedis(t)
	r := &recorder{}
	c := newClient(t, rdb, &Options{Observer: r})
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	s := GetSetCache[string](c, name)
	for range 2 { // the first calls load the scripts
		if _, err := s.AddWithTTL(ctx, "k", time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Contains(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	s.AddWithTTL(ctx, "k", -1)
	for _, want := range []struct {
		op      string
		outcome Outcome
		trips   int
	}{{opSetCacheAdd, OutcomeInvalid, 0}, {opSetCacheContains, OutcomeOK, 1}} {
		o := r.last(t, want.op, name)
		if o.Kind != "set_cache" || o.Outcome != want.outcome || o.RoundTrips != want.trips {
			t.Errorf("%s: kind %q, outcome %v, %d round trips; want set_cache, %v, %d", want.op, o.Kind, o.Outcome, o.RoundTrips, want.outcome, want.trips)
		}
	}
}

// TestSetCacheCluster runs a SetCache on a 3-master cluster, with a plain
// name and a hash-tagged one: calls, expiry and the eviction pass.
func TestSetCacheCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := mapCacheClient(t, rdb, 20*time.Millisecond)
	ctx := testCtx(t, time.Minute)
	for _, name := range []string{setCacheName(t, rdb), "{" + setCacheName(t, rdb) + "}:sc"} {
		t.Cleanup(func() { rdb.Del(context.Background(), name) })
		s := GetSetCache[int64](c, name)
		if _, err := s.Add(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddWithTTL(ctx, 2, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Size(ctx); err != nil || n != 2 {
			t.Errorf("%s: Size = %d, %v; want 2", name, n, err)
		}
		eventually(t, 20*time.Second, "the expired member evicted", func() bool { return rdb.ZCard(ctx, name).Val() == 1 })
		if got, err := iterateSetCache(ctx, s, 10); err != nil || !slices.Equal(got, []string{"1"}) {
			t.Errorf("%s: iterator = %q, %v; want [1]", name, got, err)
		}
	}
}
