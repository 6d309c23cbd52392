package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// cacheStats returns the client-side cache's counters (zero before it
// started).
func cacheHits(c *Client) uint64 {
	if tc := c.csc.Load(); tc != nil {
		return tc.Stats().Hits
	}
	return 0
}

// waitCacheLive starts the client's cache and waits until its tracking
// connection is established.
func waitCacheLive(t testing.TB, c *Client) {
	t.Helper()
	tc := c.clientCache()
	if tc == nil {
		t.Fatal("no client-side cache")
	}
	eventually(t, 10*time.Second, "tracking connection", func() bool { return tc.Stats().Live })
}

// A cached bucket serves repeated reads from memory, sees its own writes at
// once and foreign writes (redis-cli's RESP, another go-redis client) once
// their invalidation arrives.
func TestBucketClientSideCaching(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, &Options{ClientSideCaching: ClientSideCaching{Prefixes: []string{"test:"}}})
	waitCacheLive(t, c)
	b := GetBucket[string](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	if v, ok, err := b.Get(ctx); err != nil || ok || v != "" {
		t.Fatalf("Get of a missing bucket = %q, %v, %v; want \"\", false, nil", v, ok, err)
	}
	if _, ok, _ := b.Get(ctx); ok || cacheHits(c) != 1 {
		t.Fatalf("absence not served from the cache: hits %d", cacheHits(c))
	}
	if err := b.Set(ctx, "own"); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := b.Get(ctx); v != "own" {
		t.Fatalf("Get after own Set = %q; want own", v)
	}
	// Redis reports the own write too; once that report is in, the value
	// stays cached.
	eventually(t, 10*time.Second, "own value cached", func() bool {
		before := cacheHits(c)
		v, _, _ := b.Get(ctx)
		if v != "own" {
			t.Fatalf("Get = %q; want own", v)
		}
		return cacheHits(c) > before
	})
	if _, err := rawDo(ctx, t, "set", name, "foreign"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "foreign write seen", func() bool {
		v, _, _ := b.Get(ctx)
		return v == "foreign"
	})
	if err := rdb.Del(ctx, name).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "foreign delete seen", func() bool {
		_, ok, _ := b.Get(ctx)
		return !ok
	})
	// A plain bucket of the same name neither reads nor fills the cache.
	plain := GetBucket[string](c, name, WithCodec(StringCodec{}))
	plain.Set(ctx, "plain")
	if v, _, _ := plain.Get(ctx); v != "plain" {
		t.Fatalf("plain Get = %q", v)
	}
	eventually(t, 10*time.Second, "plain write seen", func() bool {
		v, _, _ := b.Get(ctx)
		return v == "plain"
	})
}

// Every write method of a cached bucket drops the cached value before it
// returns.
func TestBucketClientSideCachingOwnWrites(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	b := GetBucket[int](c, name, WithClientSideCaching())
	step := 0
	check := func(what string, want int, wantOK bool) {
		t.Helper()
		if v, ok, err := b.Get(ctx); err != nil || v != want || ok != wantOK {
			t.Fatalf("after %s: Get = %d, %v, %v; want %d, %v", what, v, ok, err, want, wantOK)
		}
		b.Get(ctx) // cache it again
		step++
	}
	check("nothing", 0, false)
	b.Set(ctx, 1)
	check("Set", 1, true)
	b.SetWithTTL(ctx, 2, time.Hour)
	check("SetWithTTL", 2, true)
	b.SetIfExists(ctx, 3)
	check("SetIfExists", 3, true)
	b.GetAndSet(ctx, 4)
	check("GetAndSet", 4, true)
	b.CompareAndSet(ctx, 4, 5)
	check("CompareAndSet", 5, true)
	b.GetAndDelete(ctx)
	check("GetAndDelete", 0, false)
	b.SetIfAbsent(ctx, 6)
	check("SetIfAbsent", 6, true)
	b.SetIfExistsWithTTL(ctx, 7, time.Hour)
	check("SetIfExistsWithTTL", 7, true)
	b.Delete(ctx)
	check("Delete", 0, false)
	b.SetIfAbsentWithTTL(ctx, 8, time.Hour)
	check("SetIfAbsentWithTTL", 8, true)
}

// A value is not served past its key's expiry in Redis.
func TestBucketClientSideCachingKeyExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	b := GetBucket[string](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	rdb.Set(ctx, name, "short", 300*time.Millisecond)
	if v, _, _ := b.Get(ctx); v != "short" {
		t.Fatalf("Get = %q", v)
	}
	deadline := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(deadline.Add(-50 * time.Millisecond)) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Until(deadline) + 5*time.Millisecond)
	if _, ok, _ := b.Get(ctx); ok {
		t.Fatal("value served after its key expired")
	}
}

// A key of another type is ErrWrongType, on a hit as on a miss; a closed
// client's cached bucket reports ErrClientClosed.
func TestBucketClientSideCachingErrors(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	rdb.HSet(ctx, name, "f", "v")
	b := GetBucket[string](c, name, WithClientSideCaching())
	for i := 0; i < 2; i++ {
		if _, _, err := b.Get(ctx); !errors.Is(err, ErrWrongType) {
			t.Fatalf("Get of a hash = %v; want ErrWrongType", err)
		}
	}
	if _, _, err := GetBucket[string](c, "", WithClientSideCaching()).Get(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name: %v", err)
	}
	c.Close()
	if _, _, err := b.Get(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Get after Close = %v; want ErrClientClosed", err)
	}
	if _, err := New(rdb, &Options{ClientSideCaching: ClientSideCaching{MaxEntries: -1}}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("MaxEntries -1: %v", err)
	}
	if _, err := New(rdb, &Options{ClientSideCaching: ClientSideCaching{TTL: -time.Second}}); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("TTL -1s: %v", err)
	}
}

// rawDo sends one command on a fresh RESP2 connection to the shared
// server, as redis-cli would.
func rawDo(ctx context.Context, t testing.TB, args ...string) (any, error) {
	t.Helper()
	return redistest.Shared(t).Do(ctx, args...)
}

// Every write method of a cached map drops its cached entries before it
// returns; a foreign write of another field drops them too.
func TestMapClientSideCaching(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	m := GetMap[string, int64](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	cache := func(key string, want int64, wantOK bool) {
		t.Helper()
		eventually(t, 10*time.Second, "entry cached", func() bool {
			before := cacheHits(c)
			v, ok, err := m.Get(ctx, key)
			if err != nil || v != want || ok != wantOK {
				t.Fatalf("Get(%s) = %d, %v, %v; want %d, %v", key, v, ok, err, want, wantOK)
			}
			return cacheHits(c) > before
		})
	}
	check := func(what, key string, want int64, wantOK bool) {
		t.Helper()
		if v, ok, err := m.Get(ctx, key); err != nil || v != want || ok != wantOK {
			t.Fatalf("after %s: Get(%s) = %d, %v, %v; want %d, %v", what, key, v, ok, err, want, wantOK)
		}
	}
	cache("a", 0, false)
	m.Put(ctx, "a", 1)
	check("Put", "a", 1, true)
	cache("a", 1, true)
	m.PutIfAbsent(ctx, "b", 2)
	check("PutIfAbsent of another key", "a", 1, true)
	check("PutIfAbsent", "b", 2, true)
	cache("b", 2, true)
	m.FastPut(ctx, "b", 3)
	check("FastPut", "b", 3, true)
	cache("b", 3, true)
	m.AddAndGet(ctx, "b", 4)
	check("AddAndGet", "b", 7, true)
	cache("b", 7, true)
	m.Remove(ctx, "b")
	check("Remove", "b", 0, false)
	cache("a", 1, true)
	m.FastRemove(ctx, "a")
	check("FastRemove", "a", 0, false)
	m.Put(ctx, "a", 8)
	cache("a", 8, true)
	m.Delete(ctx)
	check("Delete", "a", 0, false)
	m.Put(ctx, "a", 9)
	cache("a", 9, true)
	rdb.HSet(ctx, name, "other", 1)
	eventually(t, 10*time.Second, "foreign write of another field drops the entry", func() bool {
		before := cacheHits(c)
		m.Get(ctx, "a")
		return cacheHits(c) == before
	})
}

// cachedBucket returns a cached bucket holding "value", with the value
// cached.
func cachedBucket(t testing.TB) (*Bucket[string], *Client) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	c := newClient(t, rdb, nil)
	waitCacheLive(t, c)
	b := GetBucket[string](c, name, WithCodec(StringCodec{}), WithClientSideCaching())
	b.Set(ctx, "value")
	eventually(t, 10*time.Second, "cached", func() bool {
		before := cacheHits(c)
		b.Get(ctx)
		return cacheHits(c) > before
	})
	return b, c
}

// A hit of a cached bucket allocates nothing.
func TestBucketClientSideCachingHitAllocatesNothing(t *testing.T) {
	b, c := cachedBucket(t)
	ctx := context.Background()
	before := cacheHits(c)
	if n := testing.AllocsPerRun(1000, func() { b.Get(ctx) }); n != 0 {
		t.Fatalf("a hit allocates %v times; want 0", n)
	}
	if hits := cacheHits(c) - before; hits < 1000 {
		t.Fatalf("%d hits; want every read a hit", hits)
	}
}

func BenchmarkBucketClientSideCachingHit(b *testing.B) {
	bk, _ := cachedBucket(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, ok, _ := bk.Get(ctx); !ok {
			b.Fatal("miss")
		}
	}
}
