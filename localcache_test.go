package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLocalCachedMapTwoInstances walks every call with two clients, on a
// single node and on a 3-master cluster (names spread over the masters),
// with each sync strategy.
func TestLocalCachedMapTwoInstances(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, time.Minute)
		ca, cb := newClient(t, rdb, nil), newClient(t, rdb, nil)
		for i, name := range spreadNames(t, rdb, 6) {
			o := LocalCacheOptions{SyncStrategy: []SyncStrategy{SyncInvalidate, SyncUpdate}[i%2]}
			t.Cleanup(func() { rdb.Del(context.Background(), name) })
			a := GetLocalCachedMap[string, int64](ca, name, o)
			b := GetLocalCachedMap[string, int64](cb, name, o)
			defer a.Close()
			defer b.Close()
			waitLive(t, a)
			waitLive(t, b)
			if prev, had, err := a.Put(ctx, "k", 1); err != nil || had || prev != 0 {
				t.Fatalf("Put(k, 1) = %d, %v, %v", prev, had, err)
			}
			if v, ok, err := b.Get(ctx, "k"); err != nil || !ok || v != 1 {
				t.Fatalf("b.Get(k) = %d, %v, %v; want 1", v, ok, err)
			}
			if prev, had, err := a.Put(ctx, "k", 2); err != nil || !had || prev != 1 {
				t.Fatalf("Put(k, 2) = %d, %v, %v", prev, had, err)
			}
			eventually(t, 5*time.Second, "b sees k = 2", func() bool {
				v, _, err := b.Get(ctx, "k")
				return err == nil && v == 2
			})
			if isNew, err := b.FastPut(ctx, "j", 3); err != nil || !isNew {
				t.Fatalf("FastPut(j) = %v, %v", isNew, err)
			}
			if err := b.PutAll(ctx, map[string]int64{"x": 4, "y": 5}); err != nil {
				t.Fatal(err)
			}
			eventually(t, 5*time.Second, "a sees j, x, y", func() bool {
				all, err := a.GetAll(ctx, "j", "x", "y", "none")
				return err == nil && len(all) == 3 && all["j"] == 3 && all["x"] == 4 && all["y"] == 5
			})
			if has, err := a.ContainsKey(ctx, "x"); err != nil || !has {
				t.Fatalf("ContainsKey(x) = %v, %v", has, err)
			}
			if n, err := a.Size(ctx); err != nil || n != 4 {
				t.Fatalf("Size = %d, %v; want 4", n, err)
			}
			if all, err := b.ReadAll(ctx); err != nil || len(all) != 4 || all["k"] != 2 {
				t.Fatalf("ReadAll = %v, %v", all, err)
			}
			if v, had, err := a.Remove(ctx, "x"); err != nil || !had || v != 4 {
				t.Fatalf("Remove(x) = %d, %v, %v", v, had, err)
			}
			if n, err := a.FastRemove(ctx, "y", "none"); err != nil || n != 1 {
				t.Fatalf("FastRemove(y, none) = %d, %v", n, err)
			}
			eventually(t, 5*time.Second, "b sees x and y removed", func() bool {
				all, err := b.GetAll(ctx, "x", "y", "k")
				return err == nil && len(all) == 1
			})
			if existed, err := b.Delete(ctx); err != nil || !existed {
				t.Fatalf("Delete = %v, %v", existed, err)
			}
			eventually(t, 5*time.Second, "a sees the map deleted", func() bool {
				_, ok, err := a.Get(ctx, "k")
				return err == nil && !ok && a.CachedSize() == 0
			})
		}
	})
}

// TestLocalCachedMapServesFromCache checks that a second read sends nothing
// to Redis, and that SyncUpdate caches the value written elsewhere.
func TestLocalCachedMapServesFromCache(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	a := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{SyncStrategy: SyncUpdate})
	b := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{SyncStrategy: SyncUpdate})
	defer a.Close()
	defer b.Close()
	waitLive(t, a)
	waitLive(t, b)
	if _, _, err := a.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b caches the update", func() bool { return b.CachedSize() == 1 })
	rdb.Del(ctx, name) // behind both caches' backs
	for _, m := range []*LocalCachedMap[string, string]{a, b} {
		if v, ok, err := m.Get(ctx, "k"); err != nil || !ok || v != "v" {
			t.Fatalf("Get(k) = %q, %v, %v; want the cached v", v, ok, err)
		}
	}
}

// TestLocalCachedMapInterfaceKeysOfOneEncodingInvalidatedTogether reads one
// key through two Go values of an interface K that encode to the same bytes
// (int 1 and int64 1), so that both are cached, and checks that another
// instance's write of the key invalidates both: a message names the key by
// the hash of its bytes only.
func TestLocalCachedMapInterfaceKeysOfOneEncodingInvalidatedTogether(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	reader := GetLocalCachedMap[any, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	writer := GetLocalCachedMap[any, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer reader.Close()
	defer writer.Close()
	for _, m := range []*LocalCachedMap[any, string]{reader, writer} {
		if _, err := m.ContainsKey(ctx, "other"); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "local cache serving", func() bool { return m.n.Load().live.Load() })
	}
	k1, k2 := mustEncodeKey(t, reader, any(int(1))), mustEncodeKey(t, reader, any(int64(1)))
	if string(k1) != string(k2) {
		t.Fatalf("int 1 and int64 1 encode to %x and %x: the test needs one encoding", k1, k2)
	}
	if _, err := writer.FastPut(ctx, int(1), "old"); err != nil {
		t.Fatal(err)
	}
	for _, k := range []any{int(1), int64(1)} {
		if v, ok, err := reader.Get(ctx, k); err != nil || !ok || v != "old" {
			t.Fatalf("Get(%T 1) = %q, %v, %v; want old", k, v, ok, err)
		}
	}
	if _, err := writer.FastPut(ctx, int64(1), "new"); err != nil {
		t.Fatal(err)
	}
	// The invalidation has arrived once the value last cached is dropped.
	eventually(t, 10*time.Second, "the reader reads new at int64 1", func() bool {
		v, _, err := reader.Get(ctx, int64(1))
		return err == nil && v == "new"
	})
	if v, ok, err := reader.Get(ctx, int(1)); err != nil || !ok || v != "new" {
		t.Errorf("Get(int 1) after the write = %q, %v, %v; want new", v, ok, err)
	}
}

// TestLocalCachedMapNeverStaleAfterPubSubKill kills the pub/sub connections
// (CLIENT KILL TYPE pubsub) while another client writes, round after round,
// and checks that once the reader's connection is back no read returns a
// value the writer had overwritten while it was down. The writer's
// invalidation may be published while the reader's connection is down, and
// so never reach it. A barrier message on another channel of the reader's
// connection, published after the write, makes sure that any message still
// on its way has been applied (that window, the invalidation in flight, is
// the documented one).
func TestLocalCachedMapNeverStaleAfterPubSubKill(t *testing.T) {
	for _, strategy := range []ReconnectionStrategy{ReconnectClear, ReconnectLoad} {
		t.Run(fmt.Sprint("strategy ", strategy), func(t *testing.T) {
			srv := redistest.Start(t)
			rdb := srv.Client(t)
			ctx := testCtx(t, 2*time.Minute)
			name := "lcm-kill"
			o := LocalCacheOptions{ReconnectionStrategy: strategy}
			cr := newClient(t, rdb, &Options{PubSubHealthCheck: 100 * time.Millisecond})
			reader := GetLocalCachedMap[string, int](cr, name, o)
			writer := GetLocalCachedMap[string, int](newClient(t, rdb, nil), name, o)
			defer reader.Close()
			defer writer.Close()
			marks := make(chan string, 16)
			sub, err := GetTopic[string](cr, "barrier", WithCodec(StringCodec{})).Subscribe(ctx, func(s string) { marks <- s })
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			waitLive(t, reader)
			const rounds = 15
			stop := make(chan struct{})
			readerDone := make(chan error, 1)
			go func() { // reads all along, for the race detector
				for {
					select {
					case <-stop:
						readerDone <- nil
						return
					default:
					}
					if _, _, err := reader.Get(ctx, "k"); err != nil && ctx.Err() == nil {
						readerDone <- err
						return
					}
				}
			}()
			for round := 1; round <= rounds; round++ {
				if _, err := writer.FastPut(ctx, "k", 10*round); err != nil {
					t.Fatal(err)
				}
				eventually(t, 10*time.Second, "reader caches the new value", func() bool {
					v, _, err := reader.Get(ctx, "k")
					return err == nil && v == 10*round && reader.CachedSize() == 1
				})
				if err := rdb.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
					t.Fatal(err)
				}
				for i := 1; i <= 3; i++ { // writes while the connections are down or coming back
					if _, err := writer.FastPut(ctx, "k", 10*round+i); err != nil {
						t.Fatal(err)
					}
				}
				want := 10*round + 3
				mark := strconv.Itoa(round)
				eventually(t, 20*time.Second, "the reader's connection carries messages again", func() bool {
					rdb.Publish(ctx, "barrier", mark)
					select {
					case got := <-marks:
						return got == mark
					case <-time.After(50 * time.Millisecond):
						return false
					}
				})
				for i := 0; i < 200; i++ {
					v, _, err := reader.Get(ctx, "k")
					if err != nil {
						t.Fatal(err)
					}
					if v != want {
						t.Fatalf("round %d read %d: got %d, want %d (a value overwritten while the connection was down)", round, i, v, want)
					}
				}
			}
			close(stop)
			if err := <-readerDone; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestLocalCachedMapReconnectLoadKeepsUnchangedKeys checks Load's reload: a
// key the updates log names is dropped after a reconnect, one it does not
// name stays cached.
func TestLocalCachedMapReconnectLoadKeepsUnchangedKeys(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := "lcr"
	m := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{ReconnectionStrategy: ReconnectLoad})
	defer m.Close()
	waitLive(t, m)
	rdb.HSet(ctx, name, "\xa2k1", "\xa2v1", "\xa2k2", "\xa2v1")
	if all, err := m.GetAll(ctx, "k1", "k2"); err != nil || len(all) != 2 || m.CachedSize() != 2 {
		t.Fatalf("GetAll = %v, %v; cached %d", all, err, m.CachedSize())
	}
	// A writer whose message is lost: the hash and the log change, no
	// message is published.
	h := keyHash([]byte("\xa2k1"))
	rdb.HSet(ctx, name, "\xa2k1", "\xa2v2", "\xa2k2", "\xa2v2")
	rdb.ZAdd(ctx, prefixName("redisson__cache_updates_log", name),
		redis.Z{Score: float64(time.Now().UnixMilli()), Member: string(h[:]) + ":12345678"})
	losses := func() uint64 {
		n := m.n.Load()
		n.mu.Lock()
		defer n.mu.Unlock()
		return m.losses
	}
	before := losses()
	if err := rdb.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the loss seen and reloaded", func() bool {
		return losses() > before && m.n.Load().live.Load()
	})
	all, err := m.GetAll(ctx, "k1", "k2")
	if err != nil || all["k1"] != "v2" || all["k2"] != "v1" {
		t.Fatalf("after the reload GetAll = %v, %v; want k1 = v2 (logged) and k2 = v1 (kept)", all, err)
	}
	if _, err := m.FastPut(ctx, "k3", "v"); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.ZCard(ctx, prefixName("redisson__cache_updates_log", name)).Result(); err != nil || n != 2 {
		t.Fatalf("updates log has %d members, %v; want 2 (Load's writes log)", n, err)
	}
}

// TestLocalCachedMapGuardRefusesStaleValues drives the guard through the
// races of a read or a write with an invalidation, a clear and another
// write of the same key.
func TestLocalCachedMapGuardRefusesStaleValues(t *testing.T) {
	h := keyHash([]byte("k"))
	fresh := func() *near[string, int] {
		n := newNear[string, int](LocalCacheOptions{}, &cacheCounters{})
		n.live.Store(true)
		return n
	}
	cached := func(n *near[string, int]) bool { _, ok := n.lookup("k"); return ok }
	cases := []struct {
		name  string
		run   func(n *near[string, int])
		cache bool
	}{
		{"read alone", func(n *near[string, int]) { n.loaded(n.read(h), "k", h, 1) }, true},
		{"invalidation during a read", func(n *near[string, int]) {
			t := n.read(h)
			n.invalidate(h)
			n.loaded(t, "k", h, 1)
		}, false},
		{"clear during a read", func(n *near[string, int]) {
			t := n.read(h)
			n.clear()
			n.loaded(t, "k", h, 1)
		}, false},
		{"local write during a read", func(n *near[string, int]) {
			t := n.read(h)
			w := n.writing("k", h)
			n.written(w, "k", h, 2, true)
			n.loaded(t, "k", h, 1)
			if v, _ := n.lookup("k"); v != 2 {
				panic(fmt.Sprintf("cached %d, want the write's 2", v))
			}
		}, true},
		{"read during a local write", func(n *near[string, int]) {
			w := n.writing("k", h)
			n.loaded(n.read(h), "k", h, 1)
			n.written(w, "k", h, 2, false)
		}, false},
		{"write alone", func(n *near[string, int]) { n.written(n.writing("k", h), "k", h, 2, true) }, true},
		{"overlapping writes", func(n *near[string, int]) {
			w1 := n.writing("k", h)
			w2 := n.writing("k", h)
			n.written(w2, "k", h, 2, true)
			n.written(w1, "k", h, 1, true)
		}, false},
		{"invalidation during a write", func(n *near[string, int]) {
			w := n.writing("k", h)
			n.invalidate(h)
			n.written(w, "k", h, 2, true)
		}, false},
		{"update during a write", func(n *near[string, int]) {
			w := n.writing("k", h)
			n.updated("k", h, 3)
			n.written(w, "k", h, 2, true)
		}, false},
		{"read while not live", func(n *near[string, int]) {
			n.live.Store(false)
			n.loaded(n.read(h), "k", h, 1)
			n.live.Store(true)
		}, false},
	}
	for _, c := range cases {
		n := fresh()
		c.run(n)
		if got := cached(n); got != c.cache {
			t.Errorf("%s: cached = %v, want %v", c.name, got, c.cache)
		}
		n.cache.stop()
	}
}

// TestLocalCachedMapEvictionAndExpiry checks CacheSize with each policy,
// TimeToLive and MaxIdle.
func TestLocalCachedMapEvictionAndExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	fill := func(t *testing.T, o LocalCacheOptions) *LocalCachedMap[int, int] {
		name := uniqueName(t, rdb)
		m := GetLocalCachedMap[int, int](c, name, o)
		t.Cleanup(func() { m.Close() })
		waitLive(t, m)
		for i := range 50 {
			if _, err := m.FastPut(ctx, i, i); err != nil {
				t.Fatal(err)
			}
		}
		return m
	}
	for _, p := range []EvictionPolicy{EvictionNone, EvictionLRU, EvictionLFU} {
		m := fill(t, LocalCacheOptions{CacheSize: 10, EvictionPolicy: p})
		for i := range 50 { // reads refill what eviction allows
			if v, _, err := m.Get(ctx, i); err != nil || v != i {
				t.Fatalf("policy %d: Get(%d) = %d, %v", p, i, v, err)
			}
		}
		if n := m.CachedSize(); n > 10 || n == 0 {
			t.Fatalf("policy %d: %d cached entries, want 1..10", p, n)
		}
	}
	m := fill(t, LocalCacheOptions{CacheSize: 3, EvictionPolicy: EvictionLRU})
	if _, ok := m.n.Load().lookup(49); !ok {
		t.Fatal("LRU dropped the most recent entry")
	}
	if _, ok := m.n.Load().lookup(0); ok {
		t.Fatal("LRU kept the oldest entry")
	}
	for _, o := range []LocalCacheOptions{{TimeToLive: time.Second}, {MaxIdle: time.Second}} {
		m := GetLocalCachedMap[int, int](c, uniqueName(t, rdb), o)
		defer m.Close()
		waitLive(t, m)
		if _, err := m.FastPut(ctx, 1, 1); err != nil {
			t.Fatal(err)
		}
		if _, ok := m.n.Load().lookup(1); !ok {
			t.Fatalf("%+v: entry not cached", o)
		}
		time.Sleep(1500 * time.Millisecond)
		if _, ok := m.n.Load().lookup(1); ok {
			t.Fatalf("%+v: entry served after its local expiry", o)
		}
	}
}

// TestLocalCachedMapLocalCacheOnly checks StoreLocalCacheOnly: nothing in
// Redis, values travel in update messages.
func TestLocalCachedMapLocalCacheOnly(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	o := LocalCacheOptions{StoreMode: StoreLocalCacheOnly, SyncStrategy: SyncUpdate}
	a := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, o)
	b := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, o)
	defer a.Close()
	defer b.Close()
	waitLive(t, a)
	waitLive(t, b)
	eventually(t, 5*time.Second, "both subscribed", func() bool {
		n, _ := rdb.PubSubNumSub(ctx, suffixName(name, "topic")).Result()
		return n[suffixName(name, "topic")] == 2
	})
	if _, _, err := a.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "b has k", func() bool {
		v, ok, err := b.Get(ctx, "k")
		return err == nil && ok && v == "v"
	})
	if n, err := rdb.Exists(ctx, name).Result(); err != nil || n != 0 {
		t.Fatalf("EXISTS %s = %d, %v; want nothing in Redis", name, n, err)
	}
	if v, had, err := b.Remove(ctx, "k"); err != nil || !had || v != "v" {
		t.Fatalf("Remove = %q, %v, %v", v, had, err)
	}
	eventually(t, 5*time.Second, "a dropped k", func() bool {
		_, ok, err := a.Get(ctx, "k")
		return err == nil && !ok
	})
}

// TestLocalCachedMapClearLocalCache checks that the clear reaches the other
// instance, which acknowledges it, so the call returns without its timeout.
func TestLocalCachedMapClearLocalCache(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	a := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	b := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer a.Close()
	defer b.Close()
	waitLive(t, a)
	waitLive(t, b)
	if _, _, err := a.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	// a's invalidation may reach b after b's first read: read until cached.
	eventually(t, 5*time.Second, "b caches k", func() bool {
		_, _, err := b.Get(ctx, "k")
		return err == nil && b.CachedSize() == 1
	})
	start := time.Now()
	if err := a.ClearLocalCache(ctx); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= clearAckWait {
		t.Fatalf("ClearLocalCache took %v: the acknowledgement did not arrive", d)
	}
	if a.CachedSize() != 0 || b.CachedSize() != 0 {
		t.Fatalf("cached after ClearLocalCache: a %d, b %d", a.CachedSize(), b.CachedSize())
	}
	if keys, _ := rdb.Keys(ctx, name+":clear:*").Result(); len(keys) != 0 {
		t.Fatalf("acknowledgement counters left behind: %v", keys)
	}
}

// TestLocalCachedMapBadInput checks every refusal: options, names, nil keys
// and values, values that do not encode; Redis is left unchanged.
func TestLocalCachedMapBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name, "\xa1x", "\x01")
	before := keyState(t, rdb, name)
	var nilKey *string
	good := GetLocalCachedMap[*string, any](c, name, LocalCacheOptions{})
	defer good.Close()
	k := "k"
	cases := []struct {
		name string
		call func() error
		want error
	}{
		{"negative CacheSize", func() error {
			_, _, err := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{CacheSize: -1}).Get(ctx, "k")
			return err
		}, ErrInvalidOption},
		{"negative TimeToLive", func() error {
			_, err := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{TimeToLive: -1}).FastPut(ctx, "k", 1)
			return err
		}, ErrInvalidOption},
		{"unknown SyncStrategy", func() error {
			_, _, err := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{SyncStrategy: 7}).Put(ctx, "k", 1)
			return err
		}, ErrInvalidOption},
		{"unknown ReconnectionStrategy", func() error {
			return GetLocalCachedMap[string, int](c, name, LocalCacheOptions{ReconnectionStrategy: -1}).PutAll(ctx, map[string]int{"k": 1})
		}, ErrInvalidOption},
		{"unknown EvictionPolicy", func() error {
			_, err := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{EvictionPolicy: 9}).Size(ctx)
			return err
		}, ErrInvalidOption},
		{"unknown StoreMode", func() error {
			_, err := GetLocalCachedMap[string, int](c, name, LocalCacheOptions{StoreMode: 2}).ReadAll(ctx)
			return err
		}, ErrInvalidOption},
		{"empty name", func() error {
			_, _, err := GetLocalCachedMap[string, int](c, "", LocalCacheOptions{}).Get(ctx, "k")
			return err
		}, ErrEmptyName},
		{"nil key Get", func() error { _, _, err := good.Get(ctx, nilKey); return err }, ErrNilValue},
		{"nil key Put", func() error { _, _, err := good.Put(ctx, nilKey, 1); return err }, ErrNilValue},
		{"nil value Put", func() error { _, _, err := good.Put(ctx, &k, nil); return err }, ErrNilValue},
		{"nil value FastPut", func() error { _, err := good.FastPut(ctx, &k, nil); return err }, ErrNilValue},
		{"nil value PutAll", func() error { return good.PutAll(ctx, map[*string]any{&k: nil}) }, ErrNilValue},
		{"nil key Remove", func() error { _, _, err := good.Remove(ctx, nilKey); return err }, ErrNilValue},
		{"nil key FastRemove", func() error { _, err := good.FastRemove(ctx, nilKey); return err }, ErrNilValue},
		{"nil key ContainsKey", func() error { _, err := good.ContainsKey(ctx, nilKey); return err }, ErrNilValue},
		{"nil key GetAll", func() error { _, err := good.GetAll(ctx, nilKey); return err }, ErrNilValue},
		{"value that does not encode", func() error { _, _, err := good.Put(ctx, &k, make(chan int)); return err }, ErrCodec},
		{"stored value that does not decode", func() error {
			_, _, err := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}).Get(ctx, "x")
			return err
		}, ErrCodec},
	}
	for _, tc := range cases {
		if err := tc.call(); !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
	}
	if after := keyState(t, rdb, name); after != before {
		t.Fatalf("Redis changed by refused calls:\nbefore %s\nafter  %s", before, after)
	}
}

// TestLocalCachedMapWrongType checks that every call on a key of another
// type is ErrWrongType, publishes nothing and leaves Redis unchanged.
func TestLocalCachedMapWrongType(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	rdb.Set(ctx, name, "foreign", 0)
	msgs := topicMessages(t, rdb, name)
	m := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{})
	defer m.Close()
	calls := map[string]func() error{
		"Get":         func() error { _, _, err := m.Get(ctx, "k"); return err },
		"GetAll":      func() error { _, err := m.GetAll(ctx, "k"); return err },
		"Put":         func() error { _, _, err := m.Put(ctx, "k", "v"); return err },
		"FastPut":     func() error { _, err := m.FastPut(ctx, "k", "v"); return err },
		"PutAll":      func() error { return m.PutAll(ctx, map[string]string{"k": "v"}) },
		"Remove":      func() error { _, _, err := m.Remove(ctx, "k"); return err },
		"FastRemove":  func() error { _, err := m.FastRemove(ctx, "k"); return err },
		"ContainsKey": func() error { _, err := m.ContainsKey(ctx, "k"); return err },
		"Size":        func() error { _, err := m.Size(ctx); return err },
		"ReadAll":     func() error { _, err := m.ReadAll(ctx); return err },
	}
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s: err = %v, want ErrWrongType", op, err)
		}
	}
	if v, err := rdb.Get(ctx, name).Result(); err != nil || v != "foreign" {
		t.Fatalf("key = %q, %v; want foreign", v, err)
	}
	select {
	case msg := <-msgs:
		t.Fatalf("a refused write published %q", msg.Payload)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestLocalCachedMapForeignUpdatesLogLeavesMapUnchanged puts a string at
// the updates log of a map with ReconnectLoad and checks that every write
// is ErrWrongType with the hash unchanged, rather than writing the hash and
// failing before its message is published (which would leave the other
// instances serving the old value).
func TestLocalCachedMapForeignUpdatesLogLeavesMapUnchanged(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	log := prefixName("redisson__cache_updates_log", name)
	t.Cleanup(func() { rdb.Del(context.Background(), log) })
	m := GetLocalCachedMap[string, string](newClient(t, rdb, nil), name, LocalCacheOptions{ReconnectionStrategy: ReconnectLoad})
	defer m.Close()
	rdb.HSet(ctx, name, mustEncodeKey(t, m, "k"), mustEncodeKey(t, m, "v"))
	rdb.Set(ctx, log, "foreign", 0)
	calls := map[string]func() error{
		"Put":        func() error { _, _, err := m.Put(ctx, "k", "w"); return err },
		"FastPut":    func() error { _, err := m.FastPut(ctx, "n", "w"); return err },
		"PutAll":     func() error { return m.PutAll(ctx, map[string]string{"k": "w", "n": "w"}) },
		"Remove":     func() error { _, _, err := m.Remove(ctx, "k"); return err },
		"FastRemove": func() error { _, err := m.FastRemove(ctx, "k"); return err },
	}
	before := nameState(t, rdb, name)
	for op, call := range calls {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s with a string at %s: err = %v, want ErrWrongType", op, log, err)
		}
		if after := nameState(t, rdb, name); after != before {
			t.Fatalf("%s with a string at %s: Redis changed:\n got %s\nwant %s", op, log, after, before)
		}
	}
}

// TestLocalCachedMapAfterClose checks the handle's Close (ErrHandleClosed,
// unsubscribed) and the client's (ErrClientClosed); goleak (TestMain)
// checks that the handle's goroutines were joined.
func TestLocalCachedMapAfterClose(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	m := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{TimeToLive: time.Minute})
	waitLive(t, m)
	if _, _, err := m.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.Get(ctx, "k"); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("Get after Close: %v, want ErrHandleClosed", err)
	}
	if err := m.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	eventually(t, 5*time.Second, "unsubscribed", func() bool {
		n, _ := rdb.PubSubNumSub(ctx, suffixName(name, "topic")).Result()
		return n[suffixName(name, "topic")] == 0
	})
	open := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{MaxIdle: time.Minute})
	waitLive(t, open)
	c.Close()
	if _, _, err := open.Get(ctx, "k"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Get after Client.Close: %v, want ErrClientClosed", err)
	}
	if _, _, err := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{}).Get(ctx, "k"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("new handle after Client.Close: %v, want ErrClientClosed", err)
	}
	open.Close()
}

// mustEncodeKey is key as m's codec encodes it.
func mustEncodeKey[K comparable, V any](t *testing.T, m *LocalCachedMap[K, V], key K) []byte {
	t.Helper()
	b, err := m.m.encodeKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
