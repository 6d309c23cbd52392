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

// multimapName returns a unique multimap name whose keys (the index and
// every values key) are deleted when the test ends.
func multimapName(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, k := range rdb.HVals(ctx, name).Val() {
			rdb.Del(ctx, suffixName(name, k))
		}
		rdb.Del(ctx, name)
	})
	return name
}

// multimapAPI is what both multimaps offer, for tests run on each.
type multimapAPI interface {
	Put(context.Context, string, string) (bool, error)
	PutAll(context.Context, string, ...string) (int64, error)
	Get(context.Context, string) ([]string, error)
	Remove(context.Context, string, string) (bool, error)
	RemoveAll(context.Context, string) ([]string, error)
	ReplaceValues(context.Context, string, ...string) ([]string, error)
	FastRemove(context.Context, ...string) (int64, error)
	ContainsKey(context.Context, string) (bool, error)
	ContainsEntry(context.Context, string, string) (bool, error)
	Size(context.Context) (int64, error)
	KeySize(context.Context) (int64, error)
	KeySet(context.Context) ([]string, error)
	Entries(context.Context) (map[string][]string, error)
	Delete(context.Context) (bool, error)
}

func bothMultimaps(c *Client, name string) map[string]multimapAPI {
	return map[string]multimapAPI{
		"list": GetListMultimap[string, string](c, name+".list"),
		"set":  GetSetMultimap[string, string](c, name+".set"),
	}
}

func sortedStrings(ss []string, err error) ([]string, error) {
	slices.Sort(ss)
	return ss, err
}

// TestMultimapOperations walks every call of both multimaps.
func TestMultimapOperations(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, rdb)
	for kind, m := range bothMultimaps(c, base) {
		name := base + "." + kind
		t.Cleanup(func() {
			for _, k := range rdb.Keys(context.Background(), "*"+name+"*").Val() {
				rdb.Del(context.Background(), k)
			}
		})
		isList := kind == "list"
		if ok, err := m.Put(ctx, "k", "a"); err != nil || !ok {
			t.Fatalf("%s: Put = %v, %v", kind, ok, err)
		}
		if ok, err := m.Put(ctx, "k", "a"); err != nil || ok != isList {
			t.Errorf("%s: Put of a duplicate = %v, %v; want %v", kind, ok, err, isList)
		}
		if n, err := m.PutAll(ctx, "k", "b", "c"); err != nil || n != 2 {
			t.Errorf("%s: PutAll = %d, %v; want 2", kind, n, err)
		}
		if n, err := m.PutAll(ctx, "k"); err != nil || n != 0 {
			t.Errorf("%s: PutAll of nothing = %d, %v", kind, n, err)
		}
		if _, err := m.PutAll(ctx, "j", "x"); err != nil {
			t.Fatal(err)
		}
		want := []string{"a", "b", "c"}
		if isList {
			want = []string{"a", "a", "b", "c"}
		}
		got, err := m.Get(ctx, "k")
		if !isList {
			got, err = sortedStrings(got, err)
		}
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: Get = %q, %v; want %q", kind, got, err, want)
		}
		if n, err := m.Size(ctx); err != nil || n != int64(len(want)+1) {
			t.Errorf("%s: Size = %d, %v; want %d", kind, n, err, len(want)+1)
		}
		if n, err := m.KeySize(ctx); err != nil || n != 2 {
			t.Errorf("%s: KeySize = %d, %v; want 2", kind, n, err)
		}
		if ks, err := sortedStrings(m.KeySet(ctx)); err != nil || !slices.Equal(ks, []string{"j", "k"}) {
			t.Errorf("%s: KeySet = %q, %v", kind, ks, err)
		}
		if e, err := m.Entries(ctx); err != nil || len(e) != 2 || len(e["k"]) != len(want) || !slices.Equal(e["j"], []string{"x"}) {
			t.Errorf("%s: Entries = %q, %v", kind, e, err)
		}
		for _, tc := range []struct {
			k, v string
			want bool
		}{{"k", "b", true}, {"k", "x", false}, {"none", "b", false}} {
			if ok, err := m.ContainsEntry(ctx, tc.k, tc.v); err != nil || ok != tc.want {
				t.Errorf("%s: ContainsEntry(%s, %s) = %v, %v", kind, tc.k, tc.v, ok, err)
			}
		}
		if ok, err := m.ContainsKey(ctx, "none"); err != nil || ok {
			t.Errorf("%s: ContainsKey(none) = %v, %v", kind, ok, err)
		}
		if ok, err := m.Remove(ctx, "j", "x"); err != nil || !ok {
			t.Errorf("%s: Remove(j, x) = %v, %v", kind, ok, err)
		}
		if ok, err := m.ContainsKey(ctx, "j"); err != nil || ok {
			t.Errorf("%s: j still a key after its last value went: %v, %v", kind, ok, err)
		}
		if old, err := sortedStrings(m.ReplaceValues(ctx, "k", "z")); err != nil || !slices.Equal(old, want) {
			t.Errorf("%s: ReplaceValues = %q, %v; want %q", kind, old, err, want)
		}
		if old, err := m.RemoveAll(ctx, "k"); err != nil || !slices.Equal(old, []string{"z"}) {
			t.Errorf("%s: RemoveAll = %q, %v", kind, old, err)
		}
		m.Put(ctx, "p", "1")
		m.Put(ctx, "q", "2")
		if n, err := m.FastRemove(ctx, "p", "q", "none"); err != nil || n != 2 {
			t.Errorf("%s: FastRemove = %d, %v; want 2", kind, n, err)
		}
		m.Put(ctx, "r", "1")
		if old, err := m.ReplaceValues(ctx, "r"); err != nil || !slices.Equal(old, []string{"1"}) {
			t.Errorf("%s: ReplaceValues(r) with nothing = %q, %v", kind, old, err)
		}
		if ok, err := m.ContainsKey(ctx, "r"); err != nil || ok {
			t.Errorf("%s: r is a key after ReplaceValues with nothing", kind)
		}
		m.PutAll(ctx, "s", "1", "2")
		if ok, err := m.Delete(ctx); err != nil || !ok {
			t.Errorf("%s: Delete = %v, %v", kind, ok, err)
		}
		if keys := rdb.Keys(ctx, "*"+name+"*").Val(); len(keys) != 0 {
			t.Errorf("%s: keys left after Delete: %q", kind, keys)
		}
		if ok, err := m.Delete(ctx); err != nil || ok {
			t.Errorf("%s: Delete again = %v, %v", kind, ok, err)
		}
	}
}

// TestMultimapBadInput: every refusal is its sentinel and leaves Redis as
// it was.
func TestMultimapBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := multimapName(t, rdb)
	lp := GetListMultimap[*string, *string](c, name)
	sp := GetSetMultimap[*string, *string](c, name+"s")
	t.Cleanup(func() { rdb.Del(context.Background(), name+"s") })
	empty := GetListMultimap[string, string](c, "")
	v := "v"
	if _, err := lp.Put(ctx, &v, &v); err != nil {
		t.Fatal(err)
	}
	closed := newClient(t, rdb, nil)
	closed.Close()
	cm := GetSetMultimap[string, string](closed, name)
	cases := []struct {
		what string
		call func() error
		want error
	}{
		{"empty name Put", func() error { _, err := empty.Put(ctx, "k", "v"); return err }, ErrEmptyName},
		{"empty name Get", func() error { _, err := empty.Get(ctx, "k"); return err }, ErrEmptyName},
		{"empty name Size", func() error { _, err := empty.Size(ctx); return err }, ErrEmptyName},
		{"empty name KeySet", func() error { _, err := empty.KeySet(ctx); return err }, ErrEmptyName},
		{"empty name Entries", func() error { _, err := empty.Entries(ctx); return err }, ErrEmptyName},
		{"empty name Delete", func() error { _, err := empty.Delete(ctx); return err }, ErrEmptyName},
		{"nil key Put", func() error { _, err := lp.Put(ctx, nil, &v); return err }, ErrNilValue},
		{"nil value Put", func() error { _, err := lp.Put(ctx, &v, nil); return err }, ErrNilValue},
		{"nil value PutAll", func() error { _, err := sp.PutAll(ctx, &v, &v, nil); return err }, ErrNilValue},
		{"nil key Get", func() error { _, err := sp.Get(ctx, nil); return err }, ErrNilValue},
		{"nil key Remove", func() error { _, err := lp.Remove(ctx, nil, &v); return err }, ErrNilValue},
		{"nil value Remove", func() error { _, err := lp.Remove(ctx, &v, nil); return err }, ErrNilValue},
		{"nil key RemoveAll", func() error { _, err := lp.RemoveAll(ctx, nil); return err }, ErrNilValue},
		{"nil value ReplaceValues", func() error { _, err := lp.ReplaceValues(ctx, &v, nil); return err }, ErrNilValue},
		{"nil key FastRemove", func() error { _, err := lp.FastRemove(ctx, &v, nil); return err }, ErrNilValue},
		{"nil key ContainsKey", func() error { _, err := lp.ContainsKey(ctx, nil); return err }, ErrNilValue},
		{"nil value ContainsEntry", func() error { _, err := sp.ContainsEntry(ctx, &v, nil); return err }, ErrNilValue},
		{"undecodable value", func() error { _, err := GetListMultimap[string, int](c, name).Get(ctx, "v"); return err }, ErrCodec},
		{"undecodable key", func() error { _, err := GetListMultimap[int, string](c, name).KeySet(ctx); return err }, ErrCodec},
		{"undecodable entries", func() error { _, err := GetListMultimap[string, int](c, name).Entries(ctx); return err }, ErrCodec},
		{"closed Put", func() error { _, err := cm.Put(ctx, "k", "v"); return err }, ErrClientClosed},
		{"closed Delete", func() error { _, err := cm.Delete(ctx); return err }, ErrClientClosed},
		{"cancelled Put", func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := lp.Put(cctx, &v, &v)
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

// TestMultimapWrongType: a string at the index, or at a key's values, is
// ErrWrongType for the calls that meet it, and is left as it was.
func TestMultimapWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for kind, m := range bothMultimaps(c, uniqueName(t, rdb)) {
		var name string
		if l, ok := m.(*ListMultimap[string, string]); ok {
			name = l.Name()
		} else {
			name = m.(*SetMultimap[string, string]).Name()
		}
		k, _ := MsgpackCodec{}.Marshal("k")
		values := suffixName(name, multimapID(k))
		t.Cleanup(func() { rdb.Del(context.Background(), name, values) })
		for _, bad := range []string{name, values} {
			rdb.Del(ctx, name, values)
			if err := rdb.Set(ctx, bad, "not it", 0).Err(); err != nil {
				t.Fatal(err)
			}
			calls := map[string]func() error{
				"Put":           func() error { _, err := m.Put(ctx, "k", "v"); return err },
				"ReplaceValues": func() error { _, err := m.ReplaceValues(ctx, "k", "v"); return err },
				"Remove":        func() error { _, err := m.Remove(ctx, "k", "v"); return err },
				"RemoveAll":     func() error { _, err := m.RemoveAll(ctx, "k"); return err },
				"Get":           func() error { _, err := m.Get(ctx, "k"); return err },
				"ContainsEntry": func() error { _, err := m.ContainsEntry(ctx, "k", "v"); return err },
			}
			if bad == name {
				calls["Size"] = func() error { _, err := m.Size(ctx); return err }
				calls["KeySet"] = func() error { _, err := m.KeySet(ctx); return err }
				calls["FastRemove"] = func() error { _, err := m.FastRemove(ctx, "k"); return err }
				delete(calls, "Get")
				delete(calls, "ContainsEntry")
			}
			for what, call := range calls {
				if err := call(); !errors.Is(err, ErrWrongType) {
					t.Errorf("%s, a string at %s: %s: got %v, want ErrWrongType", kind, bad, what, err)
				}
			}
			if got := rdb.Get(ctx, bad).Val(); got != "not it" {
				t.Errorf("%s: the string at %s is now %q", kind, bad, got)
			}
			if n := rdb.Exists(ctx, name, values).Val(); n != 1 {
				t.Errorf("%s: %d keys exist; want only the string", kind, n)
			}
		}
	}
}

// TestMultimapOneRoundTrip counts the commands of each simple call once
// its script is loaded: one each.
func TestMultimapOneRoundTrip(t *testing.T) {
	var sent atomic.Int64
	rdb := sharedRedis(t)
	rdb.AddHook(countHook{&sent})
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, rdb)
	for kind, m := range bothMultimaps(c, base) {
		t.Cleanup(func() { m.Delete(context.Background()) })
		calls := map[string]func() error{
			"Put":           func() error { _, err := m.Put(ctx, "k", "v"); return err },
			"PutAll":        func() error { _, err := m.PutAll(ctx, "k", "a", "b"); return err },
			"Get":           func() error { _, err := m.Get(ctx, "k"); return err },
			"Remove":        func() error { _, err := m.Remove(ctx, "k", "a"); return err },
			"RemoveAll":     func() error { _, err := m.RemoveAll(ctx, "x"); return err },
			"ReplaceValues": func() error { _, err := m.ReplaceValues(ctx, "y", "1"); return err },
			"FastRemove":    func() error { _, err := m.FastRemove(ctx, "y", "z"); return err },
			"ContainsKey":   func() error { _, err := m.ContainsKey(ctx, "k"); return err },
			"ContainsEntry": func() error { _, err := m.ContainsEntry(ctx, "k", "v"); return err },
			"Size":          func() error { _, err := m.Size(ctx); return err },
			"KeySize":       func() error { _, err := m.KeySize(ctx); return err },
			"KeySet":        func() error { _, err := m.KeySet(ctx); return err },
			"Entries":       func() error { _, err := m.Entries(ctx); return err },
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
				t.Errorf("%s: %s sent %d commands, want 1", kind, op, n)
			}
		}
	}
}

// TestMultimapObserved: an Observer sees kinds list_multimap and
// set_multimap, one round trip, and a refused call as invalid.
func TestMultimapObserved(t *testing.T) {
	rdb := sharedRedis(t)
	r := &recorder{}
	c := newClient(t, rdb, &Options{Observer: r})
	ctx := testCtx(t, time.Minute)
	name := multimapName(t, rdb)
	lm := GetListMultimap[string, *string](c, name)
	sm := GetSetMultimap[string, string](c, name+"s")
	t.Cleanup(func() { sm.Delete(context.Background()) })
	v := "v"
	for range 2 { // the first calls load the scripts
		if _, err := lm.Put(ctx, "k", &v); err != nil {
			t.Fatal(err)
		}
		if _, err := sm.Size(ctx); err != nil {
			t.Fatal(err)
		}
	}
	lm.Put(ctx, "k", nil)
	for _, want := range []struct {
		op, name, kind string
		outcome        Outcome
		trips          int
	}{{opMultimapPut, name, "list_multimap", OutcomeInvalid, 0}, {opMultimapSize, name + "s", "set_multimap", OutcomeOK, 1}} {
		o := r.last(t, want.op, want.name)
		if o.Kind != want.kind || o.Outcome != want.outcome || o.RoundTrips != want.trips {
			t.Errorf("%s: kind %q, outcome %v, %d round trips; want %s, %v, %d", want.op, o.Kind, o.Outcome, o.RoundTrips, want.kind, want.outcome, want.trips)
		}
	}
}

// TestMultimapCluster runs both multimaps on a 3-master cluster, with a
// plain name and a hash-tagged one: every values key is in the index's
// slot, so every call, the scripts over all keys included, runs there.
func TestMultimapCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, name := range []string{uniqueName(t, rdb), "{" + uniqueName(t, rdb) + "}:mm"} {
		for kind, m := range bothMultimaps(c, name) {
			t.Cleanup(func() { m.Delete(context.Background()) })
			for i := range 20 {
				if _, err := m.PutAll(ctx, fmt.Sprint("k", i), "a", "b"); err != nil {
					t.Fatalf("%s %s: PutAll: %v", kind, name, err)
				}
			}
			if n, err := m.Size(ctx); err != nil || n != 40 {
				t.Errorf("%s %s: Size = %d, %v; want 40", kind, name, n, err)
			}
			if e, err := m.Entries(ctx); err != nil || len(e) != 20 {
				t.Errorf("%s %s: Entries has %d keys, %v; want 20", kind, name, len(e), err)
			}
			if v, err := sortedStrings(m.Get(ctx, "k3")); err != nil || !slices.Equal(v, []string{"a", "b"}) {
				t.Errorf("%s %s: Get = %q, %v", kind, name, v, err)
			}
			if n, err := m.FastRemove(ctx, "k1", "k2"); err != nil || n != 2 {
				t.Errorf("%s %s: FastRemove = %d, %v", kind, name, n, err)
			}
			if ok, err := m.Delete(ctx); err != nil || !ok {
				t.Errorf("%s %s: Delete = %v, %v", kind, name, ok, err)
			}
		}
	}
	if _, err := GetSetMultimap[string, string](c, "a{b").Put(ctx, "k", "v"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Put on a{b: got %v, want ErrInvalidName", err)
	}
}

// TestMultimapListed: ListObjects names a multimap's values keys
// KindMultimapValues of the multimap, and its index a map.
func TestMultimapListed(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	base := uniqueName(t, rdb)
	want := map[string]ObjectInfo{}
	for kind, m := range bothMultimaps(c, base) {
		t.Cleanup(func() { m.Delete(context.Background()) })
		if _, err := m.Put(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
		name := base + "." + kind
		k, _ := MsgpackCodec{}.Marshal("k")
		values := suffixName(name, multimapID(k))
		want[name] = ObjectInfo{Key: name, Name: name, Kind: KindMap}
		want[values] = ObjectInfo{Key: values, Name: name, Kind: KindMultimapValues}
	}
	it := c.ListObjects("*"+base+"*", 10)
	got := map[string]ObjectInfo{}
	for o := range it.All(ctx) {
		got[o.Key] = o
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	for k, w := range want {
		if g := got[k]; g.Name != w.Name || g.Kind != w.Kind {
			t.Errorf("%s listed as %+v; want name %q, kind %s", k, g, w.Name, w.Kind)
		}
	}
}

// TestMultimapManyKeysAndValues: calls over more keys or values than Lua
// unpacks at once (they go in chunks).
func TestMultimapManyKeysAndValues(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	m := GetSetMultimap[int, int](c, multimapName(t, rdb))
	vs := make([]int, 12000)
	keys := make([]int, 12000)
	for i := range vs {
		vs[i], keys[i] = i, i
	}
	if n, err := m.PutAll(ctx, -1, vs...); err != nil || n != int64(len(vs)) {
		t.Fatalf("PutAll of %d values = %d, %v", len(vs), n, err)
	}
	for i := 0; i < 10; i++ {
		if _, err := m.Put(ctx, i, i); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := m.FastRemove(ctx, keys...); err != nil || n != 10 {
		t.Errorf("FastRemove of %d keys = %d, %v; want 10", len(keys), n, err)
	}
	if n, err := m.Size(ctx); err != nil || n != int64(len(vs)) {
		t.Errorf("Size = %d, %v; want %d", n, err, len(vs))
	}
	if ok, err := m.Delete(ctx); err != nil || !ok {
		t.Errorf("Delete = %v, %v", ok, err)
	}
}
