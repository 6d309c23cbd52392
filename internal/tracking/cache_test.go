package tracking

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

var seq atomic.Uint64

func testKey(t *testing.T) string { return fmt.Sprintf("trk:%s:%d", t.Name(), seq.Add(1)) }

// newTestCache starts a Cache over the shared server and waits until it is
// live. rdb must not have sent a command yet (its options are copied).
func newTestCache(t *testing.T, rdb *redis.Client, cfg Config) *Cache {
	t.Helper()
	o := *rdb.Options()
	cfg.Server, cfg.Master = &o, rdb
	if cfg.MaxEntries == 0 {
		cfg.MaxEntries = 1000
	}
	if cfg.HealthCheck == 0 {
		cfg.HealthCheck = time.Second
	}
	c := New(cfg)
	t.Cleanup(c.Close)
	redistest.Eventually(t, 10*time.Second, "tracking live", func() bool { return c.Stats().Live })
	return c
}

// read is the root's miss path: Begin, GET, Store.
func read(ctx context.Context, c *Cache, rdb *redis.Client, key string) (string, bool) {
	if v, ok := c.Get(key, ""); ok {
		return v.(string), true
	}
	l := c.Begin(key, "")
	v, err := rdb.Get(ctx, key).Result()
	l.Store(v, err == nil)
	return v, false
}

// cacheIt reads key until its value is cached: the invalidation of the
// write that set it may arrive during the first read and keep it out.
func cacheIt(t *testing.T, ctx context.Context, c *Cache, rdb *redis.Client, key, want string) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, "value cached", func() bool {
		v, hit := read(ctx, c, rdb, key)
		if v != want {
			t.Fatalf("read = %q; want %q", v, want)
		}
		return hit
	})
}

// A value read is served from the cache until a write by another client
// (no library involved) invalidates it.
func TestForeignWriteInvalidates(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	c := newTestCache(t, rdb, Config{Prefixes: []string{"trk:"}})
	key := testKey(t)
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	if err := rdb.Set(ctx, key, "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, hit := read(ctx, c, rdb, key); v != "a" || hit {
		t.Fatalf("first read = %q hit %v; want a, miss", v, hit)
	}
	cacheIt(t, ctx, c, rdb, key, "a")
	if _, err := srv.Do(ctx, "set", key, "b"); err != nil { // a raw RESP2 connection
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "invalidated", func() bool {
		_, ok := c.Get(key, "")
		return !ok
	})
	if v, _ := read(ctx, c, rdb, key); v != "b" {
		t.Fatalf("read after foreign write = %q; want b", v)
	}
}

// An invalidation that arrives while a read is in flight keeps its reply
// (possibly the old value) out of the cache.
func TestInvalidationDuringReadStoresNothing(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	c := newTestCache(t, rdb, Config{Prefixes: []string{"trk:"}})
	key := testKey(t)
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	rdb.Set(ctx, key, "old", 0)
	l := c.Begin(key, "")
	old, _ := rdb.Get(ctx, key).Result()
	before := c.Stats().Invalidations
	rdb.Set(ctx, key, "new", 0)
	redistest.Eventually(t, 10*time.Second, "invalidation", func() bool { return c.Stats().Invalidations > before })
	if l.Store(old, true) {
		t.Fatal("Store kept a value read before an invalidation that arrived meanwhile")
	}
	if _, ok := c.Get(key, ""); ok {
		t.Fatal("value cached")
	}
}

// A local write keeps every read in flight, or begun during the write,
// from storing.
func TestLocalWriteGuard(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	c := newTestCache(t, rdb, Config{Prefixes: []string{"trk:"}})
	key := testKey(t)
	early := c.Begin(key, "")
	c.WriteBegin(key)
	during := c.Begin(key, "")
	if early.Store("x", true) {
		t.Fatal("a read begun before the write stored")
	}
	c.WriteEnd(key)
	if during.Store("x", true) {
		t.Fatal("a read begun during the write stored")
	}
	after := c.Begin(key, "")
	if !after.Store("y", true) {
		t.Fatal("a read begun after the write did not store")
	}
	if v, ok := c.Get(key, ""); !ok || v != "y" {
		t.Fatalf("Get = %v, %v; want y, true", v, ok)
	}
	c.WriteBegin(key)
	if _, ok := c.Get(key, ""); ok {
		t.Fatal("WriteBegin left the value")
	}
	c.WriteEnd(key)
}

// Killing the tracking connection drops every value and refuses the
// reads in flight; a new connection is established.
func TestKilledConnectionFlushes(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	c := newTestCache(t, rdb, Config{Prefixes: []string{"trk:"}})
	key := testKey(t)
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	rdb.Set(ctx, key, "a", 0)
	cacheIt(t, ctx, c, rdb, key, "a")
	inFlight := c.Begin(key, "")
	killTracking(t, ctx, rdb)
	redistest.Eventually(t, 10*time.Second, "flushed", func() bool {
		_, ok := c.Get(key, "")
		return !ok
	})
	if inFlight.Store("a", true) {
		t.Fatal("a read begun before the loss stored")
	}
	redistest.Eventually(t, 10*time.Second, "reconnected", func() bool { return c.Connections() >= 2 && c.Stats().Live })
	rdb.Set(ctx, key, "b", 0)
	cacheIt(t, ctx, c, rdb, key, "b")
	rdb.Set(ctx, key, "c", 0)
	redistest.Eventually(t, 10*time.Second, "invalidated on the new connection", func() bool {
		_, ok := c.Get(key, "")
		return !ok
	})
}

// killTracking kills every tracking connection of the server.
func killTracking(t *testing.T, ctx context.Context, rdb *redis.Client) {
	t.Helper()
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range splitLines(list) {
		var id int64
		if _, err := fmt.Sscanf(line, "id=%d", &id); err == nil && contains(line, "name=redisson-tracking-") {
			rdb.ClientKillByFilter(ctx, "id", fmt.Sprint(id))
			n++
		}
	}
	if n == 0 {
		t.Fatal("no tracking connection to kill")
	}
}

// FLUSHALL reaches the cache as a flush.
func TestFlushAllFlushes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	c := newTestCache(t, rdb, Config{})
	rdb.Set(ctx, "k", "a", 0)
	cacheIt(t, ctx, c, rdb, "k", "a")
	rdb.FlushAll(ctx)
	redistest.Eventually(t, 10*time.Second, "flushed", func() bool {
		_, ok := c.Get("k", "")
		return !ok
	})
}

// Fields of a hash are dropped together when the hash is written.
func TestFieldsInvalidatedWithTheirKey(t *testing.T) {
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	ctx := redistest.Ctx(t, 30*time.Second)
	c := newTestCache(t, rdb, Config{Prefixes: []string{"trk:"}})
	key := testKey(t)
	t.Cleanup(func() { rdb.Del(context.Background(), key) })
	rdb.HSet(ctx, key, "f1", "a", "f2", "b")
	redistest.Eventually(t, 10*time.Second, "fields cached", func() bool {
		for _, f := range []string{"f1", "f2"} {
			if _, ok := c.Get(key, f); !ok {
				l := c.Begin(key, f)
				v, err := rdb.HGet(ctx, key, f).Result()
				l.Store(v, err == nil)
			}
		}
		_, ok1 := c.Get(key, "f1")
		_, ok2 := c.Get(key, "f2")
		return ok1 && ok2
	})
	if v, ok := c.Get(key, "f2"); !ok || v != "b" {
		t.Fatalf("Get f2 = %v %v", v, ok)
	}
	rdb.HSet(ctx, key, "f1", "z")
	redistest.Eventually(t, 10*time.Second, "both fields dropped", func() bool {
		_, ok1 := c.Get(key, "f1")
		_, ok2 := c.Get(key, "f2")
		return !ok1 && !ok2
	})
}

// MaxEntries bounds the values held.
func TestMaxEntries(t *testing.T) {
	s := newStore(shardCount, 0)
	s.setLive(true)
	for i := 0; i < 10*shardCount; i++ {
		s.begin(fmt.Sprint("k", i), "").Store(i, true)
	}
	if n := s.size(); n > shardCount {
		t.Fatalf("size %d; want at most %d", n, shardCount)
	}
	if s.evictions.Load() == 0 {
		t.Fatal("no eviction")
	}
}

// TTL bounds how long a value is served.
func TestTTL(t *testing.T) {
	s := newStore(100, 20*time.Millisecond)
	s.setLive(true)
	s.begin("k", "").Store(1, true)
	if _, ok := s.get("k", ""); !ok {
		t.Fatal("not served")
	}
	time.Sleep(40 * time.Millisecond)
	if _, ok := s.get("k", ""); ok {
		t.Fatal("served after its TTL")
	}
}

// A hit allocates nothing.
func TestHitAllocatesNothing(t *testing.T) {
	s := newStore(100, 0)
	s.setLive(true)
	s.begin("key", "").Store("value", true)
	if n := testing.AllocsPerRun(1000, func() { s.get("key", "") }); n != 0 {
		t.Fatalf("a hit allocates %v times; want 0", n)
	}
}

func BenchmarkHit(b *testing.B) {
	s := newStore(100, 0)
	s.setLive(true)
	s.begin("bucket:name", "").Store("value", true)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, ok := s.get("bucket:name", ""); !ok {
				b.Fatal("miss")
			}
		}
	})
}

func BenchmarkHitSerial(b *testing.B) {
	s := newStore(100, 0)
	s.setLive(true)
	s.begin("bucket:name", "").Store("value", true)
	b.ReportAllocs()
	for b.Loop() {
		s.get("bucket:name", "")
	}
}

func splitLines(s string) []string { return strings.Split(strings.TrimSpace(s), "\n") }

func contains(s, sub string) bool { return strings.Contains(s, sub) }
