package redisson

import (
	"context"
	"errors"
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// cachedHit reports whether read was served from the client's cache alone
// (hits rose, misses did not).
func cachedHit(c *Client, read func()) bool {
	st := c.csc.Load().Stats()
	read()
	now := c.csc.Load().Stats()
	return now.Hits > st.Hits && now.Misses == st.Misses
}

// Map.GetAll of a cached map serves the cached fields from memory and reads
// the others in one call, returning exactly the present keys; own writes
// are seen at once, foreign ones once their invalidation arrives.
func TestMapGetAllClientSideCaching(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	m := GetMap[string, int64](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	plain := GetMap[string, int64](c, name, WithCodec(StringCodec{}))
	rdb.HSet(ctx, name, "a", 1, "b", 2, "c", 3)
	want := func(what string, got map[string]int64, err error, w map[string]int64) {
		t.Helper()
		if err != nil || !maps.Equal(got, w) {
			t.Fatalf("%s: GetAll = %v, %v; want %v", what, got, err, w)
		}
	}
	got, err := plain.GetAll(ctx, "a", "x", "c")
	want("uncached", got, err, map[string]int64{"a": 1, "c": 3})
	eventually(t, 10*time.Second, "a and x cached", func() bool {
		m.GetAll(ctx, "a", "x")
		return cachedHit(c, func() { m.GetAll(ctx, "a", "x") })
	})
	// a and x hit, b and c miss: one call for the misses, in order.
	before := c.csc.Load().Stats()
	got, err = m.GetAll(ctx, "c", "a", "x", "b")
	want("mixed", got, err, map[string]int64{"a": 1, "b": 2, "c": 3})
	if st := c.csc.Load().Stats(); st.Hits-before.Hits != 2 || st.Misses-before.Misses != 2 {
		t.Fatalf("mixed read: %d hits, %d misses; want 2 and 2", st.Hits-before.Hits, st.Misses-before.Misses)
	}
	// Get and ContainsKey share the entries GetAll stored.
	eventually(t, 10*time.Second, "all cached", func() bool {
		return cachedHit(c, func() { m.GetAll(ctx, "a", "b", "c", "x") })
	})
	if !cachedHit(c, func() {
		if v, ok, err := m.Get(ctx, "b"); v != 2 || !ok || err != nil {
			t.Fatalf("Get(b) = %d, %v, %v", v, ok, err)
		}
		if ok, err := m.ContainsKey(ctx, "x"); ok || err != nil {
			t.Fatalf("ContainsKey(x) = %v, %v", ok, err)
		}
	}) {
		t.Fatal("Get and ContainsKey missed what GetAll cached")
	}
	// Own write: seen by the next read, no window.
	if _, err := m.FastPut(ctx, "x", 9); err != nil {
		t.Fatal(err)
	}
	got, err = m.GetAll(ctx, "x", "a")
	want("after own FastPut", got, err, map[string]int64{"x": 9, "a": 1})
	if ok, err := m.ContainsKey(ctx, "x"); !ok || err != nil {
		t.Fatalf("ContainsKey(x) after own FastPut = %v, %v", ok, err)
	}
	// Foreign write of one field: the whole hash's entries go.
	eventually(t, 10*time.Second, "cached again", func() bool {
		return cachedHit(c, func() { m.GetAll(ctx, "a", "x") })
	})
	rdb.HSet(ctx, name, "a", 10)
	eventually(t, 10*time.Second, "foreign write seen", func() bool {
		got, _ := m.GetAll(ctx, "a", "x")
		return got["a"] == 10 && got["x"] == 9
	})
	rdb.HDel(ctx, name, "x")
	eventually(t, 10*time.Second, "foreign delete seen", func() bool {
		ok, _ := m.ContainsKey(ctx, "x")
		got, _ := m.GetAll(ctx, "x")
		return !ok && len(got) == 0
	})
	if got, err := m.GetAll(ctx); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("GetAll() = %v, %v; want an empty map", got, err)
	}
}

// GetAll's and cached ContainsKey's bad input and odd keys: an empty
// name, an uncomparable any key, a key of another type, a value that does
// not decode (ContainsKey: present), a closed client.
func TestMapGetAllErrors(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	for _, cached := range []bool{false, true} {
		var opts []ObjectOption
		if cached {
			opts = append(opts, WithClientSideCaching())
		}
		if _, err := GetMap[string, int](c, "", opts...).GetAll(ctx, "a"); !errors.Is(err, ErrEmptyName) {
			t.Fatalf("cached %v: empty name: %v", cached, err)
		}
		if _, err := GetMap[any, int](c, name, opts...).GetAll(ctx, "a", []int{1}); !errors.Is(err, ErrCodec) {
			t.Fatalf("cached %v: slice key: %v; want ErrCodec", cached, err)
		}
		rdb.Set(ctx, name+":s", "x", 0)
		for i := 0; i < 2; i++ {
			if _, err := GetMap[string, int](c, name+":s", opts...).GetAll(ctx, "a"); !errors.Is(err, ErrWrongType) {
				t.Fatalf("cached %v: GetAll of a string = %v; want ErrWrongType", cached, err)
			}
		}
		rdb.HSet(ctx, name, `"bad"`, "not json", `"good"`, "1") // JSON-encoded fields
		mj := GetMap[string, int](c, name, append(opts, WithCodec(JSONCodec{}))...)
		if _, err := mj.GetAll(ctx, "good", "bad"); !errors.Is(err, ErrCodec) {
			t.Fatalf("cached %v: undecodable value: %v; want ErrCodec", cached, err)
		}
		if ok, err := mj.ContainsKey(ctx, "bad"); !ok || err != nil {
			t.Fatalf("cached %v: ContainsKey of an undecodable value = %v, %v; want true, nil", cached, ok, err)
		}
		if got, err := mj.GetAll(ctx, "good"); err != nil || got["good"] != 1 {
			t.Fatalf("cached %v: GetAll(good) = %v, %v", cached, got, err)
		}
	}
	m := GetMap[string, int](c, name, WithClientSideCaching())
	c.Close()
	if _, err := m.GetAll(ctx, "a"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("GetAll after Close = %v; want ErrClientClosed", err)
	}
}

// Buckets.Get with the option serves cached names from memory, reads the
// rest in one call, shares entries with cached Buckets, sees own writes
// (Buckets.Set, Bucket.Set) at once and foreign writes once invalidated,
// and leaves out (uncached) a name of another type.
func TestBucketsGetClientSideCaching(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	bs := GetBuckets[string](c, WithCodec(StringCodec{}), WithClientSideCaching())
	a, b, h, x := name+":a", name+":b", name+":h", name+":x"
	rdb.Set(ctx, a, "A", 0)
	rdb.Set(ctx, b, "B", 0)
	rdb.HSet(ctx, h, "f", "v")
	want := func(what string, w map[string]string, names ...string) {
		t.Helper()
		got, err := bs.Get(ctx, names...)
		if err != nil || !maps.Equal(got, w) {
			t.Fatalf("%s: Get = %v, %v; want %v", what, got, err, w)
		}
	}
	want("first", map[string]string{a: "A"}, a, x, h)
	eventually(t, 10*time.Second, "a, x cached", func() bool {
		bs.Get(ctx, a, x)
		return cachedHit(c, func() { bs.Get(ctx, a, x) })
	})
	before := c.csc.Load().Stats()
	want("mixed", map[string]string{a: "A", b: "B"}, h, b, x, a)
	if st := c.csc.Load().Stats(); st.Hits-before.Hits != 2 || st.Misses-before.Misses != 2 {
		t.Fatalf("mixed read: %d hits, %d misses; want 2 (a, x) and 2 (h, b)", st.Hits-before.Hits, st.Misses-before.Misses)
	}
	// The hash is never cached as absent: a cached Bucket still says ErrWrongType.
	if _, _, err := GetBucket[string](c, h, WithClientSideCaching()).Get(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Bucket.Get of the hash after Buckets.Get = %v; want ErrWrongType", err)
	}
	// Shared with a cached Bucket of the same type: its write is seen at once.
	bk := GetBucket[string](c, b, WithCodec(StringCodec{}), WithClientSideCaching())
	eventually(t, 10*time.Second, "b cached", func() bool {
		return cachedHit(c, func() { bk.Get(ctx) })
	})
	if err := bk.Set(ctx, "B2"); err != nil {
		t.Fatal(err)
	}
	want("after own Bucket.Set", map[string]string{a: "A", b: "B2"}, a, b, x)
	if err := bs.Set(ctx, map[string]string{a: "A2", x: "X"}); err != nil {
		t.Fatal(err)
	}
	want("after own Buckets.Set", map[string]string{a: "A2", b: "B2", x: "X"}, a, b, x)
	if ok, err := bs.TrySet(ctx, map[string]string{name + ":y": "Y"}); !ok || err != nil {
		t.Fatalf("TrySet = %v, %v", ok, err)
	}
	want("after own TrySet", map[string]string{name + ":y": "Y"}, name+":y")
	eventually(t, 10*time.Second, "all cached", func() bool {
		return cachedHit(c, func() { bs.Get(ctx, a, b, x) })
	})
	rdb.Set(ctx, x, "foreign", 0)
	rdb.Del(ctx, a)
	eventually(t, 10*time.Second, "foreign writes seen", func() bool {
		got, _ := bs.Get(ctx, a, b, x)
		return maps.Equal(got, map[string]string{b: "B2", x: "foreign"})
	})
	rdb.Set(ctx, a, "not json", 0)
	if _, err := GetBuckets[int](c, WithClientSideCaching()).Get(ctx, b, a); !errors.Is(err, ErrCodec) {
		t.Fatalf("undecodable value: %v; want ErrCodec", err)
	}
	if _, err := bs.Get(ctx, a, ""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name: %v; want ErrEmptyName", err)
	}
	c.Close()
	if _, err := bs.Get(ctx, a); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Get after Close = %v; want ErrClientClosed", err)
	}
}

// A cached AtomicLong and AtomicDouble serve Get from memory, see every
// own write method's result at once and a foreign write once invalidated;
// a value that is no number is ErrWrongType, never cached.
func TestAtomicClientSideCaching(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	al := c.GetAtomicLong(name+":l", WithClientSideCaching())
	ad := c.GetAtomicDouble(name+":d", WithClientSideCaching())
	checkL := func(what string, want int64) {
		t.Helper()
		if v, err := al.Get(ctx); v != want || err != nil {
			t.Fatalf("after %s: AtomicLong.Get = %d, %v; want %d", what, v, err, want)
		}
		eventually(t, 10*time.Second, "cached", func() bool { return cachedHit(c, func() { al.Get(ctx) }) })
	}
	checkL("nothing", 0)
	al.Set(ctx, 5)
	checkL("Set", 5)
	al.IncrementAndGet(ctx)
	checkL("IncrementAndGet", 6)
	al.GetAndAdd(ctx, 4)
	checkL("GetAndAdd", 10)
	al.GetAndSet(ctx, 20)
	checkL("GetAndSet", 20)
	al.CompareAndSet(ctx, 20, 21)
	checkL("CompareAndSet", 21)
	al.GetAndDelete(ctx)
	checkL("GetAndDelete", 0)
	al.Set(ctx, 7)
	checkL("Set", 7)
	al.Delete(ctx)
	checkL("Delete", 0)
	rdb.Set(ctx, al.Name(), "33", 0)
	eventually(t, 10*time.Second, "foreign write seen", func() bool { v, _ := al.Get(ctx); return v == 33 })

	checkD := func(what string, want float64) {
		t.Helper()
		if v, err := ad.Get(ctx); v != want || err != nil {
			t.Fatalf("after %s: AtomicDouble.Get = %v, %v; want %v", what, v, err, want)
		}
		eventually(t, 10*time.Second, "cached", func() bool { return cachedHit(c, func() { ad.Get(ctx) }) })
	}
	checkD("nothing", 0)
	ad.Set(ctx, 1.5)
	checkD("Set", 1.5)
	ad.AddAndGet(ctx, 1)
	checkD("AddAndGet", 2.5)
	ad.GetAndSet(ctx, 4)
	checkD("GetAndSet", 4)
	ad.CompareAndSet(ctx, 4, 4.25)
	checkD("CompareAndSet", 4.25)
	ad.GetAndDelete(ctx)
	checkD("GetAndDelete", 0)
	ad.Set(ctx, 1)
	checkD("Set", 1)
	ad.Delete(ctx)
	checkD("Delete", 0)
	rdb.Set(ctx, ad.Name(), "0.5", 0)
	eventually(t, 10*time.Second, "foreign write seen", func() bool { v, _ := ad.Get(ctx); return v == 0.5 })

	// A cached Bucket of the same name never serves the counter's entry.
	bk := GetBucket[string](c, al.Name(), WithCodec(StringCodec{}), WithClientSideCaching())
	if v, _, err := bk.Get(ctx); v != "33" || err != nil {
		t.Fatalf("Bucket.Get of the counter = %q, %v", v, err)
	}
	for _, k := range []string{al.Name(), ad.Name()} {
		rdb.Set(ctx, k, "abc", 0)
	}
	eventually(t, 10*time.Second, "non-numbers seen", func() bool {
		_, e1 := al.Get(ctx)
		_, e2 := ad.Get(ctx)
		return errors.Is(e1, ErrWrongType) && errors.Is(e2, ErrWrongType)
	})
	if _, err := al.Get(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("second read of a non-integer = %v; want ErrWrongType", err)
	}
	rdb.Del(ctx, al.Name())
	rdb.HSet(ctx, al.Name(), "f", "v")
	eventually(t, 10*time.Second, "hash seen", func() bool { _, err := al.Get(ctx); return errors.Is(err, ErrWrongType) })
	if _, err := c.GetAtomicLong("", WithClientSideCaching()).Get(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name: %v", err)
	}
}

// A hit of a cached AtomicLong allocates nothing, as a cached Bucket's.
func TestAtomicLongClientSideCachingHitAllocatesNothing(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := context.Background()
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	al := c.GetAtomicLong(uniqueName(t, rdb), WithClientSideCaching())
	al.Set(ctx, 3)
	eventually(t, 10*time.Second, "cached", func() bool { return cachedHit(c, func() { al.Get(ctx) }) })
	before := cacheHits(c)
	if n := testing.AllocsPerRun(1000, func() { al.Get(ctx) }); n != 0 {
		t.Fatalf("a hit allocates %v times; want 0", n)
	}
	if hits := cacheHits(c) - before; hits < 1000 {
		t.Fatalf("%d hits; want every read a hit", hits)
	}
}

// On a 3-master Cluster, one Buckets.Get over keys on every master serves
// the cached ones and reads the others (one call per slot, pipelined), and
// a foreign write on each master is seen.
func TestBucketsGetClientSideCachingCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, cl.Client(t), nil)
	raw := cl.Client(t)
	waitCacheLive(t, c)
	bks, _, _, _ := cscClusterRegisters(t, ctx, cl, c, raw, 3)
	var names []string
	want := map[string]string{}
	for _, b := range bks {
		names = append(names, b.Name())
		want[b.Name()] = "own-init"
	}
	bs := GetBuckets[string](c, WithCodec(StringCodec{}), WithClientSideCaching())
	eventually(t, 10*time.Second, "the first two cached", func() bool {
		bs.Get(ctx, names[:2]...)
		return cachedHit(c, func() { bs.Get(ctx, names[:2]...) })
	})
	got, err := bs.Get(ctx, append([]string{"csc:missing"}, names...)...)
	if err != nil || !maps.Equal(got, want) {
		t.Fatalf("Get across slots = %v, %v; want %v", got, err, want)
	}
	eventually(t, 10*time.Second, "all cached", func() bool {
		return cachedHit(c, func() { bs.Get(ctx, names...) })
	})
	for i, n := range names {
		want[n] = "raw-" + strconv.Itoa(i)
		if err := raw.Set(ctx, n, want[n], 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "foreign writes on every master seen", func() bool {
		got, err := bs.Get(ctx, names...)
		return err == nil && maps.Equal(got, want)
	})
	if err := bs.Set(ctx, map[string]string{names[0]: "own-0", names[2]: "own-2"}); err != nil {
		t.Fatal(err)
	}
	want[names[0]], want[names[2]] = "own-0", "own-2"
	if got, err := bs.Get(ctx, names...); err != nil || !maps.Equal(got, want) {
		t.Fatalf("after own Set: %v, %v; want %v", got, err, want)
	}
}
