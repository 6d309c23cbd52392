package redisson

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// mapCacheClient returns a client on rdb whose eviction pass runs every
// interval (an hour: never, within a test, so that a test sees entries
// that expired but were not deleted yet).
func mapCacheClient(t testing.TB, rdb redis.UniversalClient, interval time.Duration) *Client {
	t.Helper()
	tune := defaultTuning
	tune.mapCacheEvery = interval
	return newTunedClient(t, rdb, nil, tune)
}

// mapCacheName returns a unique MapCache name whose keys are deleted when
// the test ends.
func mapCacheName(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(name)[:mcCreated]...) })
	return name
}

// TestMapCacheOperations walks every MapCache call without expiry, on
// names spread over the cluster, with each codec that encodes strings and
// integers.
func TestMapCacheOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		codecs := []Codec{MsgpackCodec{}, JSONCodec{}, StringCodec{}}
		for i, name := range spreadNames(t, rdb, 6) {
			t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(name)[:mcCreated]...) })
			codec := codecs[i%len(codecs)]
			m := GetMapCache[string, int64](c, name, WithCodec(codec))
			check := func(op string, v int64, ok bool, err error, wantV int64, wantOK bool) {
				t.Helper()
				if err != nil || v != wantV || ok != wantOK {
					t.Fatalf("%s %s = %d, %v, %v; want %d, %v, nil", codec.Name(), op, v, ok, err, wantV, wantOK)
				}
			}
			v, ok, err := m.Get(ctx, "a")
			check("Get(a) on missing", v, ok, err, 0, false)
			v, ok, err = m.Put(ctx, "a", 1)
			check("Put(a, 1)", v, ok, err, 0, false)
			v, ok, err = m.Put(ctx, "a", 2)
			check("Put(a, 2)", v, ok, err, 1, true)
			v, ok, err = m.PutIfAbsent(ctx, "a", 3)
			check("PutIfAbsent(a, 3)", v, ok, err, 2, true)
			v, ok, err = m.PutIfAbsent(ctx, "b", 4)
			check("PutIfAbsent(b, 4)", v, ok, err, 0, false)
			v, ok, err = m.Get(ctx, "b")
			check("Get(b)", v, ok, err, 4, true)
			if isNew, err := m.FastPut(ctx, "c", -5); err != nil || !isNew {
				t.Fatalf("FastPut(c) new = %v, %v", isNew, err)
			}
			if isNew, err := m.FastPut(ctx, "c", 6); err != nil || isNew {
				t.Fatalf("FastPut(c) again = %v, %v", isNew, err)
			}
			if stored, err := m.FastPutIfAbsent(ctx, "c", 7); err != nil || stored {
				t.Fatalf("FastPutIfAbsent(c) = %v, %v; want false", stored, err)
			}
			if stored, err := m.FastPutIfAbsent(ctx, "d", 8); err != nil || !stored {
				t.Fatalf("FastPutIfAbsent(d) = %v, %v; want true", stored, err)
			}
			if has, err := m.ContainsKey(ctx, "c"); err != nil || !has {
				t.Fatalf("ContainsKey(c) = %v, %v", has, err)
			}
			if has, err := m.ContainsKey(ctx, "z"); err != nil || has {
				t.Fatalf("ContainsKey(z) = %v, %v", has, err)
			}
			if n, err := m.Size(ctx); err != nil || n != 4 {
				t.Fatalf("Size = %d, %v; want 4", n, err)
			}
			want := map[string]int64{"a": 2, "b": 4, "c": 6, "d": 8}
			if all, err := m.ReadAll(ctx); err != nil || !maps.Equal(all, want) {
				t.Fatalf("ReadAll = %v, %v; want %v", all, err, want)
			}
			it := m.Iterator(1)
			got := map[string]int64{}
			for k, v := range it.All(ctx) {
				got[k] = v
			}
			if err := it.Err(); err != nil || !maps.Equal(got, want) {
				t.Fatalf("Iterator(1) = %v, %v; want %v", got, err, want)
			}
			v, ok, err = m.Remove(ctx, "a")
			check("Remove(a)", v, ok, err, 2, true)
			v, ok, err = m.Remove(ctx, "a")
			check("Remove(a) again", v, ok, err, 0, false)
			if ok, err := m.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v; want true", ok, err)
			}
			if n := rdb.Exists(ctx, mapCacheKeys(name)[:mcCreated]...).Val(); n != 0 {
				t.Fatalf("after Delete %d of the keys exist", n)
			}
			if ok, err := m.Delete(ctx); err != nil || ok {
				t.Fatalf("Delete again = %v, %v; want false", ok, err)
			}
		}
	})
}

// TestMapCacheTTLNeverReturnedAfterExpiry checks that an entry whose TTL
// ran out is returned by no call, while it is still in the hash (the
// eviction pass has not run), and that Put replaces it as a new entry.
func TestMapCacheTTLNeverReturnedAfterExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, string](c, name)
	const ttl = 300 * time.Millisecond
	start := time.Now()
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		if _, _, err := m.PutWithTTL(ctx, k, "v"+k, ttl, 0); err != nil {
			t.Fatalf("PutWithTTL(%s): %v", k, err)
		}
	}
	if _, err := m.FastPutWithTTL(ctx, "long", "stays", time.Hour, 0); err != nil {
		t.Fatalf("FastPutWithTTL(long): %v", err)
	}
	if v, ok, err := m.Get(ctx, "a"); time.Since(start) < ttl && (err != nil || !ok || v != "va") {
		t.Fatalf("Get(a) within its TTL = %q, %v, %v", v, ok, err)
	}
	if d := time.Until(start.Add(ttl + 200*time.Millisecond)); d > 0 {
		time.Sleep(d)
	}
	if n := rdb.HLen(ctx, name).Val(); n != 6 {
		t.Fatalf("HLEN = %d, want 6: the expired entries are still stored", n)
	}
	want := map[string]string{"long": "stays"}
	if all, err := m.ReadAll(ctx); err != nil || !maps.Equal(all, want) {
		t.Errorf("ReadAll after expiry = %v, %v; want %v", all, err, want)
	}
	it := m.Iterator(2)
	got := map[string]string{}
	for k, v := range it.All(ctx) {
		got[k] = v
	}
	if err := it.Err(); err != nil || !maps.Equal(got, want) {
		t.Errorf("Iterator after expiry = %v, %v; want %v", got, err, want)
	}
	if v, ok, err := m.Get(ctx, "a"); err != nil || ok {
		t.Errorf("Get(a) after expiry = %q, %v, %v; want absent", v, ok, err)
	}
	if has, err := m.ContainsKey(ctx, "b"); err != nil || has {
		t.Errorf("ContainsKey(b) after expiry = %v, %v; want false", has, err)
	}
	if v, ok, err := m.Remove(ctx, "c"); err != nil || ok {
		t.Errorf("Remove(c) after expiry = %q, %v, %v; want absent", v, ok, err)
	}
	if v, ok, err := m.PutIfAbsent(ctx, "d", "new"); err != nil || ok {
		t.Errorf("PutIfAbsent(d) after expiry = %q, %v, %v; want stored", v, ok, err)
	}
	if v, ok, err := m.Put(ctx, "e", "new"); err != nil || ok {
		t.Errorf("Put(e) after expiry = %q, %v, %v; want no previous value", v, ok, err)
	}
	// The calls that met an expired entry deleted it; d and e are new and
	// without expiry.
	keys := rdb.HKeys(ctx, name).Val()
	sort.Strings(keys)
	if want := []string{"\xa1d", "\xa1e", "\xa4long"}; !equalStrings(keys, want) {
		t.Errorf("hash fields = %q, want %q", keys, want)
	}
	if n := rdb.ZCard(ctx, prefixName("redisson__timeout__set", name)).Val(); n != 1 {
		t.Errorf("timeout zset has %d members, want 1 (long)", n)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMapCacheMaxIdleRefreshedByReads checks that reads keep an entry with
// a max idle alive past it, moving its idle deadline, that it expires once
// unread for longer, and that an iteration is no read.
func TestMapCacheMaxIdleRefreshedByReads(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	idleKey := prefixName("redisson__idle__set", name)
	m := GetMapCache[string, string](c, name)
	const idle = time.Second
	if _, _, err := m.PutWithTTL(ctx, "k", "v", 0, idle); err != nil {
		t.Fatalf("PutWithTTL: %v", err)
	}
	first := rdb.ZScore(ctx, idleKey, "\xa1k").Val()
	start := time.Now()
	lastRead := start
	for time.Since(start) < 3*idle {
		time.Sleep(200 * time.Millisecond)
		v, ok, err := m.Get(ctx, "k")
		if time.Since(lastRead) < idle && (err != nil || !ok || v != "v") {
			t.Fatalf("Get %v after the previous read = %q, %v, %v; want v", time.Since(lastRead), v, ok, err)
		}
		lastRead = time.Now()
	}
	if moved := rdb.ZScore(ctx, idleKey, "\xa1k").Val(); moved < first+float64((2*idle).Milliseconds()) {
		t.Errorf("idle deadline %v, first %v: reads did not move it", moved, first)
	}
	// Iterations do not count as reads.
	for time.Since(lastRead) < idle+300*time.Millisecond {
		for range m.Iterator(10).All(ctx) {
		}
		time.Sleep(100 * time.Millisecond)
	}
	if v, ok, err := m.Get(ctx, "k"); err != nil || ok {
		t.Errorf("Get after %v unread = %q, %v, %v; want absent", time.Since(lastRead), v, ok, err)
	}
}

// TestMapCacheTTLAndMaxIdleWhicheverFirst checks that an entry with both
// expires at its TTL although reads keep it from idling out.
func TestMapCacheTTLAndMaxIdleWhicheverFirst(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	m := GetMapCache[string, string](c, mapCacheName(t, rdb))
	start := time.Now()
	if _, err := m.FastPutWithTTL(ctx, "k", "v", 800*time.Millisecond, 400*time.Millisecond); err != nil {
		t.Fatalf("FastPutWithTTL: %v", err)
	}
	for time.Since(start) < 1300*time.Millisecond {
		time.Sleep(100 * time.Millisecond)
		_, ok, err := m.Get(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if ok && time.Since(start) > 800*time.Millisecond {
			t.Fatalf("Get %v after a put with TTL 800ms returned the entry", time.Since(start))
		}
	}
}

// TestMapCacheEvictionPassDeletesInBatches writes 100,000 entries that have
// expired, as any writer leaves them, and checks that the background pass
// deletes them all, in calls of at most two batches each, and leaves the
// live entries.
func TestMapCacheEvictionPassDeletesInBatches(t *testing.T) {
	// Filling 100k entries: minute-long timeouts, as in
	// TestBloomFilterFalsePositiveRate (this test is about the batches).
	rdb := sharedRedis(t, func(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute })
	c := mapCacheClient(t, rdb, 10*time.Millisecond)
	ctx := testCtx(t, 5*time.Minute)
	name := mapCacheName(t, rdb)
	const n = 100_000
	fillExpired(t, ctx, rdb, name, n)
	m := GetMapCache[string, string](c, name)
	if _, err := m.FastPutWithTTL(ctx, "live", "v", time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastPut(ctx, "forever", "v"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Minute, "every expired entry deleted", func() bool { return rdb.HLen(ctx, name).Val() == 2 })
	eventually(t, 10*time.Second, "the pass counted them", func() bool { return c.mapCaches.stats().evicted >= n })
	st := c.mapCaches.stats()
	if st.evicted != n {
		t.Errorf("evicted %d entries, want %d", st.evicted, n)
	}
	if st.biggest > 2*mapCacheEvictBatch {
		t.Errorf("one call deleted %d entries, want at most %d", st.biggest, 2*mapCacheEvictBatch)
	}
	if min := n / (2 * mapCacheEvictBatch); st.calls < min {
		t.Errorf("%d calls, want at least %d", st.calls, min)
	}
	t.Logf("%d calls, longest %v", st.calls, st.longest)
	for _, k := range []string{prefixName("redisson__timeout__set", name), prefixName("redisson__idle__set", name)} {
		if got := rdb.ZCard(ctx, k).Val(); got != 1 {
			t.Errorf("%s has %d members after the eviction, want 1 (live)", k, got)
		}
	}
	all, err := m.ReadAll(ctx)
	if want := map[string]string{"live": "v", "forever": "v"}; err != nil || !maps.Equal(all, want) {
		t.Errorf("ReadAll = %v, %v; want %v", all, err, want)
	}
}

// fillExpired writes n entries as Redisson lays them out, half with a TTL
// and half with a max idle that ran out a minute ago.
func fillExpired(t testing.TB, ctx context.Context, rdb redis.UniversalClient, name string, n int) {
	t.Helper()
	keys := mapCacheKeys(name)
	past := float64(time.Now().Add(-time.Minute).UnixMilli())
	for lo := 0; lo < n; lo += 5000 {
		pipe := rdb.Pipeline()
		for i := lo; i < min(n, lo+5000); i++ {
			k, err := MsgpackCodec{}.Marshal("k" + strconv.Itoa(i))
			if err != nil {
				t.Fatal(err)
			}
			maxIdle := int64(0)
			z := keys[mcTimeout]
			if i%2 == 1 {
				maxIdle, z = 1000, keys[mcIdle]
			}
			pipe.HSet(ctx, name, k, mapCacheEntry(maxIdle, []byte("\xa1v")))
			pipe.ZAdd(ctx, z, redis.Z{Score: past, Member: string(k)})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatalf("filling %s: %v", name, err)
		}
	}
}

// TestMapCacheAfterClose checks that Close stops and joins the eviction
// pass and the listeners (goleak checks the goroutines at the end of the
// run) and that calls after it are ErrClientClosed, leaving Redis
// unchanged.
func TestMapCacheAfterClose(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, string](c, name)
	if _, err := m.FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	stop, err := m.OnCreated(ctx, func(MapCacheEvent[string, string]) {})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c.Close()
	before := nameState(t, rdb, name)
	calls := map[string]func() error{
		"Get":             func() error { _, _, err := m.Get(ctx, "k"); return err },
		"Put":             func() error { _, _, err := m.Put(ctx, "k", "w"); return err },
		"PutWithTTL":      func() error { _, _, err := m.PutWithTTL(ctx, "k", "w", time.Second, 0); return err },
		"PutIfAbsent":     func() error { _, _, err := m.PutIfAbsent(ctx, "n", "w"); return err },
		"FastPut":         func() error { _, err := m.FastPut(ctx, "k", "w"); return err },
		"FastPutIfAbsent": func() error { _, err := m.FastPutIfAbsent(ctx, "n", "w"); return err },
		"Remove":          func() error { _, _, err := m.Remove(ctx, "k"); return err },
		"ContainsKey":     func() error { _, err := m.ContainsKey(ctx, "k"); return err },
		"Size":            func() error { _, err := m.Size(ctx); return err },
		"ReadAll":         func() error { _, err := m.ReadAll(ctx); return err },
		"Iterator": func() error {
			it := m.Iterator(10)
			for range it.All(ctx) {
			}
			return it.Err()
		},
		"Delete":     func() error { _, err := m.Delete(ctx); return err },
		"SetMaxSize": func() error { return m.SetMaxSize(ctx, 3) },
		"OnExpired":  func() error { _, err := m.OnExpired(ctx, func(MapCacheEvent[string, string]) {}); return err },
	}
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrClientClosed) {
			t.Errorf("%s after Close: got %v, want ErrClientClosed", op, err)
		}
	}
	if after := nameState(t, rdb, name); after != before {
		t.Errorf("Redis changed after Close:\n got %s\nwant %s", after, before)
	}
}

// TestMapCacheBadInput checks that each bad argument is answered with its
// documented sentinel, before any I/O: Redis is left unchanged.
func TestMapCacheBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, *string](c, name)
	mp := GetMapCache[*string, string](c, name)
	empty := GetMapCache[string, string](c, "")
	v := "v"
	if _, err := m.FastPut(ctx, "present", &v); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		what string
		call func() error
		want error
	}{
		{"empty name Get", func() error { _, _, err := empty.Get(ctx, "k"); return err }, ErrEmptyName},
		{"empty name PutWithTTL", func() error { _, _, err := empty.PutWithTTL(ctx, "k", "v", time.Second, 0); return err }, ErrEmptyName},
		{"empty name Size", func() error { _, err := empty.Size(ctx); return err }, ErrEmptyName},
		{"empty name Delete", func() error { _, err := empty.Delete(ctx); return err }, ErrEmptyName},
		{"empty name SetMaxSize", func() error { return empty.SetMaxSize(ctx, 1) }, ErrEmptyName},
		{"empty name OnCreated", func() error {
			_, err := empty.OnCreated(ctx, func(MapCacheEvent[string, string]) {})
			return err
		}, ErrEmptyName},
		{"empty name Iterator", func() error {
			it := empty.Iterator(1)
			for range it.All(ctx) {
			}
			return it.Err()
		}, ErrEmptyName},
		{"nil key Get", func() error { _, _, err := mp.Get(ctx, nil); return err }, ErrNilValue},
		{"nil key Put", func() error { _, _, err := mp.Put(ctx, nil, "v"); return err }, ErrNilValue},
		{"nil key Remove", func() error { _, _, err := mp.Remove(ctx, nil); return err }, ErrNilValue},
		{"nil key ContainsKey", func() error { _, err := mp.ContainsKey(ctx, nil); return err }, ErrNilValue},
		{"nil value Put", func() error { _, _, err := m.Put(ctx, "k", nil); return err }, ErrNilValue},
		{"nil value PutWithTTL", func() error { _, _, err := m.PutWithTTL(ctx, "k", nil, time.Second, 0); return err }, ErrNilValue},
		{"nil value PutIfAbsent", func() error { _, _, err := m.PutIfAbsent(ctx, "k", nil); return err }, ErrNilValue},
		{"nil value FastPut", func() error { _, err := m.FastPut(ctx, "present", nil); return err }, ErrNilValue},
		{"nil value FastPutIfAbsent", func() error { _, err := m.FastPutIfAbsent(ctx, "k", nil); return err }, ErrNilValue},
		{"negative TTL", func() error { _, _, err := m.PutWithTTL(ctx, "present", &v, -time.Second, 0); return err }, ErrNegativeDuration},
		{"negative max idle", func() error { _, _, err := m.PutWithTTL(ctx, "k", &v, 0, -time.Millisecond); return err }, ErrNegativeDuration},
		{"negative TTL PutIfAbsent", func() error {
			_, _, err := m.PutIfAbsentWithTTL(ctx, "k", &v, -1, 0)
			return err
		}, ErrNegativeDuration},
		{"negative TTL FastPut", func() error { _, err := m.FastPutWithTTL(ctx, "k", &v, -1, 0); return err }, ErrNegativeDuration},
		{"negative TTL FastPutIfAbsent", func() error {
			_, err := m.FastPutIfAbsentWithTTL(ctx, "k", &v, 0, -1)
			return err
		}, ErrNegativeDuration},
		{"negative max size", func() error { return m.SetMaxSize(ctx, -1) }, ErrInvalidOption},
		{"unknown eviction mode", func() error { return m.SetMaxSizeWithMode(ctx, 5, EvictionMode(7)) }, ErrInvalidOption},
		{"nil listener", func() error { _, err := m.OnUpdated(ctx, nil); return err }, ErrInvalidOption},
		{"batch 0", func() error {
			it := m.Iterator(0)
			for range it.All(ctx) {
			}
			return it.Err()
		}, ErrInvalidBatch},
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

// TestMapCacheWrongType puts a string at each of a MapCache's keys in turn
// and checks that every call answers ErrWrongType and leaves Redis
// unchanged, the string included.
func TestMapCacheWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	for _, at := range []int{mcHash, mcTimeout, mcIdle, mcOptions, mcLastAccess} {
		name := mapCacheName(t, rdb)
		keys := mapCacheKeys(name)
		m := GetMapCache[string, string](c, name)
		if at != mcHash {
			// A live entry and an expired one, so that the calls get past
			// the hash.
			if _, err := m.FastPut(ctx, "k", "v"); err != nil {
				t.Fatal(err)
			}
			rdb.HSet(ctx, name, "\xa1x", mapCacheEntry(0, []byte("\xa1v")))
		}
		if at == mcLastAccess {
			if err := m.SetMaxSize(ctx, 10); err != nil {
				t.Fatal(err)
			}
		}
		if err := rdb.Set(ctx, keys[at], "foreign", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if at == mcTimeout || at == mcIdle {
			// The zset that is not foreign says x expired.
			other := keys[mcIdle+mcTimeout-at]
			rdb.ZAdd(ctx, other, redis.Z{Score: 1, Member: "\xa1x"})
		}
		calls := map[string]func() error{
			"Get":             func() error { _, _, err := m.Get(ctx, "k"); return err },
			"Get expired":     func() error { _, _, err := m.Get(ctx, "x"); return err },
			"Put":             func() error { _, _, err := m.Put(ctx, "k", "w"); return err },
			"PutWithTTL":      func() error { _, _, err := m.PutWithTTL(ctx, "n", "w", time.Minute, time.Minute); return err },
			"PutIfAbsent":     func() error { _, _, err := m.PutIfAbsent(ctx, "x", "w"); return err },
			"FastPut":         func() error { _, err := m.FastPut(ctx, "x", "w"); return err },
			"FastPutIfAbsent": func() error { _, err := m.FastPutIfAbsent(ctx, "n", "w"); return err },
			"Remove":          func() error { _, _, err := m.Remove(ctx, "k"); return err },
			"ContainsKey":     func() error { _, err := m.ContainsKey(ctx, "k"); return err },
			"ReadAll":         func() error { _, err := m.ReadAll(ctx); return err },
		}
		if at == mcHash {
			calls["Size"] = func() error { _, err := m.Size(ctx); return err }
			calls["Iterator"] = func() error {
				it := m.Iterator(10)
				for range it.All(ctx) {
				}
				return it.Err()
			}
		}
		if at == mcOptions {
			calls["SetMaxSize"] = func() error { return m.SetMaxSize(ctx, 3) }
			calls["OnCreated"] = func() error {
				_, err := m.OnCreated(ctx, func(MapCacheEvent[string, string]) {})
				return err
			}
		}
		if at == mcTimeout || at == mcIdle {
			calls["Iterator"] = func() error {
				it := m.Iterator(10)
				for range it.All(ctx) {
				}
				return it.Err()
			}
		}
		before := nameState(t, rdb, name)
		for op, call := range calls {
			if err := call(); !errors.Is(err, ErrWrongType) {
				t.Errorf("%s with a string at %s: got %v, want ErrWrongType", op, keys[at], err)
			}
		}
		if after := nameState(t, rdb, name); after != before {
			t.Errorf("string at %s: Redis changed:\n got %s\nwant %s", keys[at], after, before)
		}
	}
}

// TestMapCacheForeignLastAccessSetWithoutMaxSize puts a string at the
// last-access zset of a map cache that has no max size (so that the calls
// have no reason to read it) and checks that the calls that delete an entry
// answer ErrWrongType with Redis unchanged, the entry included, rather than
// deleting it and failing after: the background eviction's batch too.
func TestMapCacheForeignLastAccessSetWithoutMaxSize(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	keys := mapCacheKeys(name)
	m := GetMapCache[string, string](c, name)
	if _, err := m.FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	// x: an entry whose TTL ran out, not yet deleted.
	rdb.HSet(ctx, name, "\xa1x", mapCacheEntry(0, []byte("\xa1v")))
	rdb.ZAdd(ctx, keys[mcTimeout], redis.Z{Score: 1, Member: "\xa1x"})
	if err := rdb.Set(ctx, keys[mcLastAccess], "foreign", 0).Err(); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Remove":              func() error { _, _, err := m.Remove(ctx, "k"); return err },
		"Remove expired":      func() error { _, _, err := m.Remove(ctx, "x"); return err },
		"Get expired":         func() error { _, _, err := m.Get(ctx, "x"); return err },
		"ContainsKey expired": func() error { _, err := m.ContainsKey(ctx, "x"); return err },
		"Put expired":         func() error { _, _, err := m.Put(ctx, "x", "w"); return err },
		"evict": func() error {
			return c.scripts.run(ctx, scriptMapCacheEvict, keys, "publish", mapCacheEvictBatch).Err()
		},
	}
	before := nameState(t, rdb, name)
	for op, call := range calls {
		if err := call(); !errors.Is(m.m.wrap(err), ErrWrongType) {
			t.Errorf("%s with a string at %s: got %v, want ErrWrongType", op, keys[mcLastAccess], err)
		}
		if after := nameState(t, rdb, name); after != before {
			t.Fatalf("%s with a string at %s: Redis changed:\n got %s\nwant %s", op, keys[mcLastAccess], after, before)
		}
	}
}

// TestMapCacheMaxSize checks Redisson's max size: the least recently used
// (LRU) or least often used (LFU) entries beyond it are evicted by the write
// that exceeds it, never the entry written.
func TestMapCacheMaxSize(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	keysOf := func(m *MapCache[string, int64]) []string {
		all, err := m.ReadAll(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for k := range all {
			ks = append(ks, k)
		}
		sort.Strings(ks)
		return ks
	}
	put := func(m *MapCache[string, int64], k string) {
		t.Helper()
		if _, err := m.FastPut(ctx, k, 1); err != nil {
			t.Fatal(err)
		}
	}
	get := func(m *MapCache[string, int64], k string) {
		t.Helper()
		if _, ok, err := m.Get(ctx, k); err != nil || !ok {
			t.Fatalf("Get(%s) = %v, %v", k, ok, err)
		}
	}

	lru := GetMapCache[string, int64](c, mapCacheName(t, rdb))
	if err := lru.SetMaxSize(ctx, 2); err != nil {
		t.Fatal(err)
	}
	put(lru, "a")
	time.Sleep(5 * time.Millisecond) // distinct access times
	put(lru, "b")
	time.Sleep(5 * time.Millisecond)
	get(lru, "a") // b is now the least recently used
	time.Sleep(5 * time.Millisecond)
	put(lru, "c")
	if got, want := keysOf(lru), []string{"a", "c"}; !equalStrings(got, want) {
		t.Errorf("LRU with max 2 after a, b, read a, c: %q, want %q", got, want)
	}
	put(lru, "c") // an update evicts nothing
	if got, want := keysOf(lru), []string{"a", "c"}; !equalStrings(got, want) {
		t.Errorf("LRU after updating c: %q, want %q", got, want)
	}

	lfu := GetMapCache[string, int64](c, mapCacheName(t, rdb))
	if err := lfu.SetMaxSizeWithMode(ctx, 2, EvictLFU); err != nil {
		t.Fatal(err)
	}
	put(lfu, "a")
	put(lfu, "b")
	get(lfu, "b")
	get(lfu, "b")
	get(lfu, "a")
	put(lfu, "c") // a used twice, b three times: a goes
	if got, want := keysOf(lfu), []string{"b", "c"}; !equalStrings(got, want) {
		t.Errorf("LFU with max 2: %q, want %q", got, want)
	}
	if err := lfu.SetMaxSize(ctx, 0); err != nil { // no limit
		t.Fatal(err)
	}
	put(lfu, "d")
	put(lfu, "e")
	if n, err := lfu.Size(ctx); err != nil || n != 4 {
		t.Errorf("Size without a limit = %d, %v; want 4", n, err)
	}
}

// TestMapCachePutAndGetAreOneRoundTrip counts the commands a PutWithTTL
// and a Get send once their scripts are loaded: one each.
func TestMapCachePutAndGetAreOneRoundTrip(t *testing.T) {
	var sent atomic.Int64
	rdb := sharedRedis(t)
	rdb.AddHook(countHook{&sent})
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	m := GetMapCache[string, string](c, mapCacheName(t, rdb))
	m.PutWithTTL(ctx, "warm", "v", time.Minute, time.Minute) // loads the scripts
	m.Get(ctx, "warm")
	for op, call := range map[string]func() error{
		"PutWithTTL": func() error { _, _, err := m.PutWithTTL(ctx, "k", "v", time.Minute, time.Minute); return err },
		"Get":        func() error { _, _, err := m.Get(ctx, "k"); return err },
	} {
		sent.Store(0)
		if err := call(); err != nil {
			t.Fatal(err)
		}
		if n := sent.Load(); n != 1 {
			t.Errorf("%s sent %d commands, want 1", op, n)
		}
	}
}

// countHook counts the commands a go-redis client sends.
type countHook struct{ n *atomic.Int64 }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.n.Add(1)
		return next(ctx, cmd)
	}
}
func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.n.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

// TestMapCacheCluster runs a MapCache on a 3-master cluster: its keys and
// channels share the slot of {name}, every call and the eviction pass run
// there, and listeners hear the events over the cluster's (sharded by
// default) pub/sub. A name with braces but no hash tag is ErrInvalidName.
func TestMapCacheCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := mapCacheClient(t, rdb, 20*time.Millisecond)
	ctx := testCtx(t, time.Minute)
	for _, name := range []string{mapCacheName(t, rdb), "{" + mapCacheName(t, rdb) + "}:cache"} {
		t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(name)[:mcCreated]...) })
		for _, k := range mapCacheKeys(name) {
			if hashSlot(k) != hashSlot(name) {
				t.Fatalf("%s is in slot %d, %s in %d", k, hashSlot(k), name, hashSlot(name))
			}
		}
		m := GetMapCache[string, any](c, name)
		log := newEventLog()
		listenAll(t, ctx, m, log)
		if _, _, err := m.Put(ctx, "a", "1"); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.PutWithTTL(ctx, "a", "2", 0, 300*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if v, ok, err := m.Get(ctx, "a"); err != nil || !ok || v != "2" {
			t.Fatalf("Get(a) = %v, %v, %v", v, ok, err)
		}
		want := []string{"created a=1 old=<nil>", "expired a=2 old=<nil>", "updated a=2 old=1"}
		if got := log.next(t, 3); !equalStrings(got, want) {
			t.Errorf("%s: events %q, want %q", name, got, want)
		}
		if n := rdb.HLen(ctx, name).Val(); n != 0 {
			t.Errorf("%s: %d entries after the expiry's eviction", name, n)
		}
		if all, err := m.ReadAll(ctx); err != nil || len(all) != 0 {
			t.Errorf("ReadAll = %v, %v", all, err)
		}
	}
	bad := GetMapCache[string, string](c, "a{b")
	if _, _, err := bad.Get(ctx, "k"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("Get on a{b: got %v, want ErrInvalidName", err)
	}
}

// TestMapCacheObserved checks what an Observer sees of MapCache calls:
// their operation, kind map_cache, one round trip, and the outcome.
func TestMapCacheObserved(t *testing.T) {
	rdb := sharedRedis(t)
	r := &recorder{}
	c := newClient(t, rdb, &Options{Observer: r})
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, string](c, name)
	for range 2 { // the first calls load the scripts
		if _, _, err := m.PutWithTTL(ctx, "k", "v", time.Minute, 0); err != nil {
			t.Fatal(err)
		}
		if _, _, err := m.Get(ctx, "k"); err != nil {
			t.Fatal(err)
		}
	}
	m.PutWithTTL(ctx, "k", "v", -1, 0)
	for _, want := range []struct {
		op      string
		outcome Outcome
		trips   int
	}{{opMapCachePut, OutcomeInvalid, 0}, {opMapCacheGet, OutcomeOK, 1}} {
		o := r.last(t, want.op, name)
		if o.Kind != "map_cache" || o.Outcome != want.outcome || o.RoundTrips != want.trips {
			t.Errorf("%s: kind %q, outcome %v, %d round trips; want map_cache, %v, %d", want.op, o.Kind, o.Outcome, o.RoundTrips, want.outcome, want.trips)
		}
	}
	if ops := r.opsOf(opMapCachePut, name); len(ops) != 3 || ops[1].RoundTrips != 1 || ops[1].Outcome != OutcomeOK {
		t.Errorf("puts observed: %+v; want three, the second one round trip, ok", ops)
	}
}

// An eviction call that fails (the map's key holds another Redis type) is
// an evict_failed event, logged at Warn; the pass goes on visiting.
func TestMapCacheEvictFailedIsAnEvent(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	rec, logs := &recorder{}, newLogCapture(slog.LevelDebug)
	tune := defaultTuning
	tune.mapCacheEvery = 20 * time.Millisecond
	c := newTunedClient(t, rdb, &Options{Observer: rec, Logger: slog.New(logs)}, tune)
	name := mapCacheName(t, rdb)
	if err := rdb.Set(ctx, name, "not a hash", 0).Err(); err != nil {
		t.Fatal(err)
	}
	mc := GetMapCache[string, string](c, name)
	if _, _, err := mc.Get(ctx, "k"); !errors.Is(err, ErrWrongType) { // registers the map with the pass
		t.Fatalf("Get on a string key: %v; want ErrWrongType", err)
	}
	eventually(t, 20*time.Second, "an evict_failed event", func() bool { return len(rec.eventsOf(EventEvictFailed)) > 0 })
	e := rec.eventsOf(EventEvictFailed)[0]
	if e.Kind != mapCacheKind || e.Name != name || !errors.Is(e.Err, ErrWrongType) {
		t.Errorf("evict_failed event %+v; want kind %q, name %q, an error matching ErrWrongType", e, mapCacheKind, name)
	}
	recs := logs.find("evict_failed")
	if len(recs) == 0 || recs[0].level != slog.LevelWarn || recs[0].attrs["name"] != name {
		t.Errorf("evict_failed log records %+v; want them at Warn naming %q", recs, name)
	}
}
