package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A Go holder is read back with its client id, owner number, hold count,
// lease and fencing token, and a Go waiter shows as a channel subscriber.
func TestInspectLockGoHolder(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	l := c.GetLock(name)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Unlock(ctx)
	hctx, cancel := l.Context(ctx)
	defer cancel()
	if err := l.Lock(hctx); err != nil { // re-entry
		t.Fatal(err)
	}
	defer l.Unlock(hctx)

	waiter := newClient(t, rdb, nil).GetLock(name)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- waiter.Lock(wctx) }()
	defer func() { stop(); <-done }()

	var info LockInfo
	eventually(t, 10*time.Second, "the waiter subscribed", func() bool {
		var err error
		info, err = c.InspectLock(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return info.Subscribers >= 1
	})
	if !info.Held || info.Kind != "lock" || info.Name != name || len(info.Owners) != 1 {
		t.Fatalf("info = %+v; want one owner of a held lock", info)
	}
	o := info.Owners[0]
	clientID, n := splitOwner(l.Owner())
	if o.Field != l.Owner() || o.ClientID != c.ID() || clientID != c.ID() || o.Thread != n || o.Holds != 2 || o.Write {
		t.Errorf("owner = %+v; want field %s, client %s, thread %d, 2 holds", o, l.Owner(), c.ID(), n)
	}
	if info.Lease <= 0 || info.Lease > c.Options().WatchdogTimeout || info.NoExpiry {
		t.Errorf("lease = %v (no expiry %v); want within (0, %v]", info.Lease, info.NoExpiry, c.Options().WatchdogTimeout)
	}
	if info.Token != l.Token() || info.Token == 0 {
		t.Errorf("token = %d; want the holder's %d", info.Token, l.Token())
	}
	if d := time.Since(info.ServerTime); d > time.Minute || d < -time.Minute {
		t.Errorf("server time %v is %v from ours", info.ServerTime, d)
	}
}

// A holder written as Java's Redisson writes it (its uuid and thread id,
// re-entered once) reads the same; a free lock is not held, not an error.
func TestInspectLockRedissonHolder(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)

	info, err := c.InspectLock(ctx, name)
	if err != nil || info.Held || len(info.Owners) != 0 || info.Lease != 0 || info.Token != 0 {
		t.Fatalf("free lock: %+v, %v; want not held, no error", info, err)
	}
	f := newForeignClient(rdb).getLock(name)
	for range 2 {
		if ttl, err := f.tryLock(ctx, 20000); err != nil || ttl != nil {
			t.Fatalf("foreign tryLock = %v, %v", ttl, err)
		}
	}
	info, err = c.InspectLock(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Held || len(info.Owners) != 1 {
		t.Fatalf("info = %+v; want the foreign owner", info)
	}
	if o := info.Owners[0]; o.ClientID != f.uuid || o.Thread != f.threadID || o.Holds != 2 || o.Field != f.me() {
		t.Errorf("owner = %+v; want %s thread %d with 2 holds", o, f.uuid, f.threadID)
	}
	if info.Lease <= 0 || info.Lease > 20*time.Second {
		t.Errorf("lease = %v; want within (0, 20s]", info.Lease)
	}
}

// Bad input: an empty name, a key of another type (Redis unchanged), a
// closed client.
func TestInspectBadInput(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	if _, err := c.InspectLock(ctx, ""); !errors.Is(err, ErrEmptyName) {
		t.Errorf("empty name: %v; want ErrEmptyName", err)
	}
	if _, err := c.InspectMap(ctx, "", nil, 0, 10); !errors.Is(err, ErrEmptyName) {
		t.Errorf("map, empty name: %v; want ErrEmptyName", err)
	}
	rdb.Set(ctx, name, "not a lock", 0)
	before := keyState(t, rdb, name)
	for what, call := range map[string]func() error{
		"lock":      func() error { _, err := c.InspectLock(ctx, name); return err },
		"fair lock": func() error { _, err := c.InspectFairLock(ctx, name); return err },
		"rwlock":    func() error { _, err := c.InspectReadWriteLock(ctx, name); return err },
		"map":       func() error { _, err := c.InspectMap(ctx, name, nil, 0, 10); return err },
		"ratelimit": func() error { _, err := c.InspectRateLimiter(ctx, name); return err },
		"semaphore": func() error { _, err := c.InspectSemaphore(ctx, name); return err },
		"latch":     func() error { _, err := c.InspectCountDownLatch(ctx, name); return err },
	} {
		if err := call(); !errors.Is(err, ErrWrongType) {
			t.Errorf("%s on a string: %v; want ErrWrongType", what, err)
		}
	}
	rdb.HSet(ctx, name+":h", "f", "v")
	defer rdb.Del(ctx, name+":h")
	if _, err := c.InspectBucket(ctx, name+":h", nil); !errors.Is(err, ErrWrongType) {
		t.Errorf("bucket on a hash: %v; want ErrWrongType", err)
	}
	if after := keyState(t, rdb, name); after != before {
		t.Errorf("Redis changed: %s -> %s", before, after)
	}
	missing := name + ":missing"
	for what, call := range map[string]func() error{
		"bucket":    func() error { _, err := c.InspectBucket(ctx, missing, nil); return err },
		"map":       func() error { _, err := c.InspectMap(ctx, missing, nil, 0, 10); return err },
		"semaphore": func() error { _, err := c.InspectSemaphore(ctx, missing); return err },
		"permits":   func() error { _, err := c.InspectPermitExpirableSemaphore(ctx, missing); return err },
		"latch":     func() error { _, err := c.InspectCountDownLatch(ctx, missing); return err },
		"ratelimit": func() error { _, err := c.InspectRateLimiter(ctx, missing); return err },
	} {
		if err := call(); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s not there: %v; want ErrNotFound", what, err)
		}
	}
	c.Close()
	if _, err := c.InspectLock(ctx, name); !errors.Is(err, ErrClientClosed) {
		t.Errorf("after Close: %v; want ErrClientClosed", err)
	}
	if _, err := c.InspectBucket(ctx, name, nil); !errors.Is(err, ErrClientClosed) {
		t.Errorf("bucket after Close: %v; want ErrClientClosed", err)
	}
	it := c.ListObjects("*", 10)
	for range it.All(ctx) {
		t.Error("ListObjects yielded after Close")
	}
	if !errors.Is(it.Err(), ErrClientClosed) {
		t.Errorf("ListObjects after Close: %v; want ErrClientClosed", it.Err())
	}
}

// A fair lock's queue lists a Java waiter (no liveness entry: alive by its
// Redisson deadline) and a Go waiter behind it (alive by its liveness,
// subscribed on its own channel), in turn order.
func TestInspectFairLockQueue(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		rdb.Del(context.Background(), prefixName("redisson_lock_queue", name), prefixName("redisson_lock_timeout", name), prefixName("redisson_lock_alive", name))
	})
	holder := c.GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	defer holder.Unlock(ctx)

	java := newForeignFair(rdb, name)
	if ttl, err := java.acquire(ctx, 30000, 60000); err != nil || ttl == nil {
		t.Fatalf("foreign acquire = %v, %v; want queued", ttl, err)
	}
	waiter := newClient(t, rdb, nil).GetFairLock(name)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { _, err := waiter.TryLock(wctx, time.Minute, 0); done <- err }()
	defer func() { stop(); <-done }()

	var info LockInfo
	eventually(t, 10*time.Second, "the Go waiter queued and subscribed", func() bool {
		var err error
		if info, err = c.InspectFairLock(ctx, name); err != nil {
			t.Fatal(err)
		}
		return len(info.Queue) == 2 && info.Queue[1].Subscribed
	})
	if info.QueueLength != 2 || info.Kind != "fair lock" || len(info.Owners) != 1 || info.Owners[0].ClientID != c.ID() {
		t.Fatalf("info = %+v; want the Go holder and 2 waiters", info)
	}
	j, g := info.Queue[0], info.Queue[1]
	if j.Position != 1 || j.Owner != java.me() || j.ClientID != java.uuid || j.Thread != java.threadID {
		t.Errorf("first waiter = %+v; want the Java one %s", j, java.me())
	}
	if !j.AliveUntil.IsZero() || !j.Alive || j.Timeout <= 0 || j.Deadline.IsZero() {
		t.Errorf("Java waiter = %+v; want no liveness entry, alive by a future deadline", j)
	}
	if g.Position != 2 || g.ClientID == java.uuid || g.AliveUntil.IsZero() || !g.Alive || g.Deadline.IsZero() {
		t.Errorf("Go waiter = %+v; want alive by its liveness entry, with a deadline", g)
	}
	if plain, err := c.InspectLock(ctx, name); err != nil || len(plain.Queue) != 0 || plain.QueueLength != 0 {
		t.Errorf("as a plain lock: %+v, %v; want no queue", plain, err)
	}
}

// A read-write lock read-held by Go and by Java lists both readers with
// the lease of each read hold; write-held, the writer with its token.
func TestInspectReadWriteLock(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	rw := c.GetReadWriteLock(name)
	if err := rw.ReadLock().LockLease(ctx, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	java := newForeignRW(rdb, name)
	if ttl, err := java.tryRead(ctx, 25000); err != nil || ttl != nil {
		t.Fatalf("foreign read = %v, %v", ttl, err)
	}
	t.Cleanup(func() { java.readUnlock(context.Background()) })
	info, err := c.InspectReadWriteLock(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode != "read" || len(info.Owners) != 2 || info.Lease <= 20*time.Second || info.Lease > 25*time.Second {
		t.Fatalf("info = %+v; want read mode, 2 readers, the longest lease (25s)", info)
	}
	for _, o := range info.Owners {
		want := 20 * time.Second
		if o.ClientID == java.uuid {
			want = 25 * time.Second
		} else if o.ClientID != c.ID() {
			t.Errorf("owner %+v is neither reader", o)
		}
		if o.Write || o.Holds != 1 || len(o.ReadLeases) != 1 || o.ReadLeases[0] <= want-10*time.Second || o.ReadLeases[0] > want {
			t.Errorf("reader %+v; want one read hold with a lease near %v", o, want)
		}
	}
	if err := rw.ReadLock().Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := java.readUnlock(ctx); err != nil {
		t.Fatal(err)
	}

	w := rw.WriteLock()
	mustTryLock(t, ctx, w, 0, 0)
	defer w.Unlock(ctx)
	info, err = c.InspectReadWriteLock(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode != "write" || len(info.Owners) != 1 || info.Token != w.Token() {
		t.Fatalf("info = %+v; want write mode and the writer's token %d", info, w.Token())
	}
	if o := info.Owners[0]; !o.Write || o.Field != w.Owner()+":write" || o.ClientID != c.ID() || o.Holds != 1 {
		t.Errorf("writer = %+v; want write field %s:write", o, w.Owner())
	}
}

// The value objects read back with what Go and Java holders left.
func TestInspectValueObjects(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	base := uniqueName(t, rdb)
	t.Cleanup(func() {
		var keys []string
		for _, s := range []string{"sem", "latch", "bucket", "map", "permits", "rl"} {
			keys = append(keys, base+s, suffixName(base+s, "timeout"), suffixName(base+s, "value"),
				suffixName(base+s, "permits"), suffixName(base+s, "permits:sum"))
		}
		rdb.Del(context.Background(), keys...)
	})

	sem := c.GetSemaphore(base + "sem")
	if _, err := sem.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := sem.Acquire(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if s, err := c.InspectSemaphore(ctx, base+"sem"); err != nil || s.Permits != 2 || s.Reserved != 0 {
		t.Errorf("semaphore = %+v, %v; want 2 permits", s, err)
	}

	if _, err := c.GetCountDownLatch(base+"latch").TrySetCount(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if l, err := c.InspectCountDownLatch(ctx, base+"latch"); err != nil || l.Count != 4 {
		t.Errorf("latch = %+v, %v; want count 4", l, err)
	}

	if err := GetBucket[string](c, base+"bucket").SetWithTTL(ctx, "hello", time.Minute); err != nil {
		t.Fatal(err)
	}
	b, err := c.InspectBucket(ctx, base+"bucket", nil)
	if err != nil || b.Value != "hello" || b.Size != len(rdb.Get(ctx, base+"bucket").Val()) || b.NoExpiry || b.TTL <= 0 || b.TTL > time.Minute {
		t.Errorf("bucket = %+v, %v; want \"hello\" with a TTL up to 1m", b, err)
	}
	if raw, err := c.InspectBucket(ctx, base+"bucket", BytesCodec{}); err != nil || string(raw.Value.([]byte)) != rdb.Get(ctx, base+"bucket").Val() {
		t.Errorf("bucket as bytes = %+v, %v; want the stored bytes", raw, err)
	}
	if _, err := c.InspectBucket(ctx, base+"bucket", JSONCodec{}); !errors.Is(err, ErrCodec) {
		t.Errorf("msgpack read as JSON: %v; want ErrCodec", err)
	}

	m := GetMap[string, int64](c, base+"map")
	want := map[string]int64{}
	for i := range 25 {
		k := "k" + strconv.Itoa(i)
		want[k] = int64(i)
		if _, _, err := m.Put(ctx, k, int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]int64{}
	var cursor uint64
	for pages := 0; ; pages++ {
		page, err := c.InspectMap(ctx, base+"map", nil, cursor, 5)
		if err != nil || page.Size != 25 {
			t.Fatalf("map page = %+v, %v; want size 25", page, err)
		}
		for _, e := range page.Entries {
			got[e.Key.(string)] = e.Value.(int64)
		}
		if cursor = page.Cursor; cursor == 0 {
			break
		}
		if pages > 100 {
			t.Fatal("map scan does not end")
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("map entries = %v; want %v", got, want)
	}
	if _, err := c.InspectMap(ctx, base+"map", nil, 0, 0); !errors.Is(err, ErrInvalidBatch) {
		t.Errorf("page size 0: %v; want ErrInvalidBatch", err)
	}

	ps := c.GetPermitExpirableSemaphore(base + "permits")
	if _, err := ps.TrySetPermits(ctx, 3); err != nil {
		t.Fatal(err)
	}
	id, err := ps.Acquire(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	java := &foreignPermitSemaphore{rdb: rdb, name: base + "permits"}
	raw, _, err := java.tryAcquire(ctx, 0)
	if err != nil || raw == "" {
		t.Fatalf("foreign acquire = %q, %v", raw, err)
	}
	p, err := c.InspectPermitExpirableSemaphore(ctx, base+"permits")
	if err != nil || p.Available != 1 || p.HeldCount != 2 || len(p.Held) != 2 {
		t.Fatalf("permits = %+v, %v; want 1 available, 2 held", p, err)
	}
	if h := p.Held[0]; h.ID != id || h.Expires.IsZero() || h.Expired || h.Expires.Sub(p.ServerTime) > time.Minute {
		t.Errorf("first held = %+v; want the Go permit %s expiring within 1m", h, id)
	}
	if h := p.Held[1]; h.ID != hex.EncodeToString([]byte(raw)) || !h.Expires.IsZero() {
		t.Errorf("second held = %+v; want the Java permit without lease", h)
	}

	rl := c.GetRateLimiter(base + "rl")
	if _, err := rl.TrySetRate(ctx, Overall, 10, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{3, 2} {
		if ok, err := rl.TryAcquire(ctx, n); err != nil || !ok {
			t.Fatalf("TryAcquire(%d) = %v, %v", n, ok, err)
		}
	}
	r, err := c.InspectRateLimiter(ctx, base+"rl")
	wantCfg := RateLimiterConfig{Type: Overall, Rate: 10, Interval: time.Minute}
	if err != nil || r.Config != wantCfg || r.Grants != 2 || r.Permits != 5 || r.Available != 5 {
		t.Errorf("rate limiter = %+v, %v; want %+v, 2 grants of 5 permits, 5 available", r, err, wantCfg)
	}
}

// ListObjects names each object of a single node by kind, batch by batch,
// and only the keys its pattern matches.
func TestListObjectsSingleNode(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	base := uniqueName(t, rdb)
	created := createObjects(t, ctx, c, base)
	t.Cleanup(func() {
		for k := range created {
			rdb.Del(context.Background(), k)
		}
	})
	checkListed(t, ctx, c, base, created, 1)
}

// On a 3-master cluster ListObjects finds every object, on its master.
func TestListObjectsCluster(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	base := fmt.Sprintf("test:list-cluster:%d:", nameSeq.Add(1))
	created := map[string]wantListed{}
	for i := range 12 {
		maps.Copy(created, createObjects(t, ctx, c, base+strconv.Itoa(i)))
	}
	t.Cleanup(func() {
		for k := range created {
			rdb.Del(context.Background(), k)
		}
	})
	nodes := checkListed(t, ctx, c, base, created, 50)
	if len(nodes) != 3 {
		t.Errorf("keys found on masters %v; want all 3", nodes)
	}
}

// wantListed is what ListObjects should say of a key.
type wantListed struct {
	kind ObjectKind
	name string
}

// createObjects creates one object of each main kind, named base+kind, and
// returns their keys with what ListObjects should say of them.
func createObjects(t *testing.T, ctx context.Context, c *Client, base string) map[string]wantListed {
	t.Helper()
	out := map[string]wantListed{}
	lock := c.GetLock(base + "lock")
	mustTryLock(t, ctx, lock, 0, time.Minute)
	out[base+"lock"] = wantListed{KindLock, base + "lock"}
	out[prefixName("redisson_lock_token", base+"lock")] = wantListed{KindFencingCounter, base + "lock"}

	read := c.GetReadWriteLock(base + "rw").ReadLock()
	if err := read.LockLease(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	out[base+"rw"] = wantListed{KindReadWriteLock, base + "rw"}
	out[suffixName(base+"rw", read.Owner()+":rwlock_timeout:1")] = wantListed{KindReadLease, base + "rw"}

	if _, err := c.GetSemaphore(base+"sem").TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	out[base+"sem"] = wantListed{KindValue, base + "sem"}

	if _, _, err := GetMap[string, string](c, base+"map").Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	out[base+"map"] = wantListed{KindMap, base + "map"}

	rl := c.GetRateLimiter(base + "rl")
	if _, err := rl.TrySetRate(ctx, Overall, 5, time.Minute); err != nil {
		t.Fatal(err)
	}
	if ok, err := rl.TryAcquire(ctx, 1); err != nil || !ok {
		t.Fatalf("TryAcquire = %v, %v", ok, err)
	}
	out[base+"rl"] = wantListed{KindRateLimiter, base + "rl"}
	out[suffixName(base+"rl", "value")] = wantListed{KindRateLimiterState, base + "rl"}
	out[suffixName(base+"rl", "permits")] = wantListed{KindRateLimiterState, base + "rl"}

	ps := c.GetPermitExpirableSemaphore(base + "ps")
	if _, err := ps.TrySetPermits(ctx, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := ps.Acquire(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	out[base+"ps"] = wantListed{KindValue, base + "ps"}
	out[suffixName(base+"ps", "timeout")] = wantListed{KindHeldPermits, base + "ps"}

	// Keyed limiters: one identity of each kind, one under a hash-tagged
	// name, and a plain number with a TTL that is no limiter's.
	fw, gcra, tagged := c.GetFixedWindowLimiter(base+"fw", 10, time.Hour), c.GetGCRALimiter(base+"gcra", 1, time.Minute, 5),
		c.GetGCRALimiter("{"+base+"api}", 1, time.Minute, 5)
	for _, l := range []KeyedLimiter{fw, gcra, tagged} {
		if d, err := l.Allow(ctx, "10.0.0.1", 2); err != nil || !d.Allowed {
			t.Fatalf("Allow = %+v, %v", d, err)
		}
	}
	out[identityKey(base+"fw", "10.0.0.1")] = wantListed{KindFixedWindowLimiter, base + "fw"}
	out[identityKey(base+"gcra", "10.0.0.1")] = wantListed{KindGCRALimiter, base + "gcra"}
	out[identityKey("{"+base+"api}", "10.0.0.1")] = wantListed{KindGCRALimiter, "{" + base + "api}"}
	if err := c.rdb.Set(ctx, base+"count", "12", time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	out[base+"count"] = wantListed{KindValue, base + "count"}

	if _, err := GetList[string](c, base+"list").AddAll(ctx, "a", "b"); err != nil {
		t.Fatal(err)
	}
	out[base+"list"] = wantListed{KindList, base + "list"}
	if _, err := GetSet[string](c, base+"set").Add(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	out[base+"set"] = wantListed{KindSet, base + "set"}
	if _, err := GetSortedSet[string](c, base+"zset").Add(ctx, 1, "a"); err != nil {
		t.Fatal(err)
	}
	out[base+"zset"] = wantListed{KindSortedSet, base + "zset"}
	sc := GetSetCache[string](c, base+"sc")
	if _, err := sc.AddWithTTL(ctx, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	out[base+"sc"] = wantListed{KindSetCache, base + "sc"}
	if _, err := GetSetCache[string](c, base+"scplain").Add(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	out[base+"scplain"] = wantListed{KindSetCache, base + "scplain"}
	rq := GetReliableQueue[string](c, base+"rq")
	for _, o := range [][]EnqueueOption{nil, {JobDelay(time.Hour)}, {JobDedupID("d1", time.Hour)}} {
		if _, _, err := rq.Enqueue(ctx, "job", o...); err != nil {
			t.Fatal(err)
		}
	}
	out[base+"rq"] = wantListed{KindStream, base + "rq"}
	out[prefixName("redisson_rq_delayed", base+"rq")] = wantListed{KindReliableDelayed, base + "rq"}
	out[prefixName("redisson_rq_jobs", base+"rq")] = wantListed{KindReliableDelayed, base + "rq"}
	out[prefixName("redisson_rq_dedup", base+"rq")+":d1"] = wantListed{KindBookkeeping, base + "rq"}
	dq := GetDelayedQueue[string](c, base+"dq")
	t.Cleanup(dq.Destroy)
	if err := dq.Offer(ctx, "later", time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := dq.Offer(ctx, "now", 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the due element moved to the destination", func() bool {
		n, err := c.rdb.Exists(ctx, base+"dq").Result()
		return err == nil && n == 1
	})
	out[base+"dq"] = wantListed{KindList, base + "dq"}
	out[prefixName("redisson_delay_queue_timeout", base+"dq")] = wantListed{KindDelayDeadlines, base + "dq"}
	out[prefixName("redisson_delay_queue", base+"dq")] = wantListed{KindDelayPending, base + "dq"}

	mc := GetMapCache[string, string](c, base+"mc")
	if _, _, err := mc.PutWithTTL(ctx, "k", "v", time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := mc.SetMaxSize(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mc.Put(ctx, "k2", "v2"); err != nil {
		t.Fatal(err)
	}
	out[base+"mc"] = wantListed{KindMapCache, base + "mc"}
	out[prefixName("redisson__timeout__set", base+"mc")] = wantListed{KindMapCacheExpiry, base + "mc"}
	out[prefixName("redisson__idle__set", base+"mc")] = wantListed{KindMapCacheIdle, base + "mc"}
	out[prefixName("redisson__map_cache__last_access__set", base+"mc")] = wantListed{KindMapCacheAccess, base + "mc"}
	out[suffixName(base+"mc", "redisson_options")] = wantListed{KindMapCacheOptions, base + "mc"}
	// A MapCache whose entries never expire has its hash alone, told from
	// a Map's by the entry encoding of its values.
	if _, _, err := GetMapCache[string, string](c, base+"mcplain").Put(ctx, "k", "a value"); err != nil {
		t.Fatal(err)
	}
	out[base+"mcplain"] = wantListed{KindMapCache, base + "mcplain"}

	lc := GetLocalCachedMap[string, string](c, base+"lc", LocalCacheOptions{ReconnectionStrategy: ReconnectLoad})
	t.Cleanup(func() { lc.Close() })
	if _, _, err := lc.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	out[base+"lc"] = wantListed{KindMap, base + "lc"}
	out[prefixName("redisson__cache_updates_log", base+"lc")] = wantListed{KindLocalCacheUpdates, base + "lc"}
	// A ClearLocalCache counter lives for the call only: written as the
	// call writes it.
	clearKey := base + "lc:clear:8a656eb687d8e1abe8ab62afdafde55a"
	if err := c.rdb.Set(ctx, clearKey, 0, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	out[clearKey] = wantListed{KindLocalCacheClear, base + "lc"}

	bq := GetBoundedBlockingQueue[string](c, base+"bq")
	if _, err := bq.TrySetCapacity(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if ok, err := bq.Offer(ctx, "a"); err != nil || !ok {
		t.Fatalf("Offer = %v, %v", ok, err)
	}
	out[base+"bq"] = wantListed{KindList, base + "bq"}
	out[prefixName("redisson_bqs", base+"bq")] = wantListed{KindQueueCapacity, base + "bq"}
	// In-flight and drain lists live one round trip, or for good when
	// their client died in between: written as a dead client left them,
	// with the registry of in-flight lists beside them.
	lingering := map[string]wantListed{
		inflightKey(c.id, base+"bq", true): {KindQueueInFlight, base + "bq"},
		inflightKey(c.id, base+"q", false): {KindQueueInFlight, base + "q"},
		drainKey(c.id, base+"q", "1"):      {KindQueueDrain, base + "q"},
	}
	for k, w := range lingering {
		if err := c.rdb.RPush(ctx, k, "x").Err(); err != nil {
			t.Fatal(err)
		}
		out[k] = w
	}
	registry := prefixName("redisson_queue_inflight", base+"q")
	if err := c.rdb.ZAdd(ctx, registry, redis.Z{Score: 1, Member: c.id}).Err(); err != nil {
		t.Fatal(err)
	}
	out[registry] = wantListed{KindQueueInFlightRegistry, base + "q"}

	ad := c.GetAtomicDouble(base + "ad")
	if err := ad.Set(ctx, 1.5); err != nil {
		t.Fatal(err)
	}
	out[base+"ad"] = wantListed{KindValue, base + "ad"}
	adder := c.GetLongAdder(base+"adder", WithFlushInterval(time.Hour))
	adder.Add(3)
	if err := adder.Close(); err != nil { // flushes
		t.Fatal(err)
	}
	out[suffixName(base+"adder", "adder-flushed")] = wantListed{KindAdderFlushed, base + "adder"}
	for _, k := range []string{prefixName("redisson_ad_call", base+"ad") + ":x:1", prefixName("redisson_adder_call", base+"adder") + ":x:1"} {
		if err := c.rdb.Set(ctx, k, "1", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	out[prefixName("redisson_ad_call", base+"ad")+":x:1"] = wantListed{KindBookkeeping, base + "ad"}
	out[prefixName("redisson_adder_call", base+"adder")+":x:1"] = wantListed{KindBookkeeping, base + "adder"}

	t.Cleanup(func() {
		for _, k := range []string{suffixName(base+"rl", "permits:sum"), prefixName("redisson_sc_queue", base+"sem"), prefixName("redisson_sc_waiters", base+"sem")} {
			c.rdb.Del(context.Background(), k)
		}
	})
	return out
}

// checkListed lists the keys containing base in batches of batch, checks
// each created key is listed once with its kind, name and TTL, and that
// anything else listed is bookkeeping; it returns the nodes seen.
func checkListed(t *testing.T, ctx context.Context, c *Client, base string, created map[string]wantListed, batch int) map[string]int {
	t.Helper()
	it := c.ListObjects("*"+base+"*", batch)
	seen := map[string]ObjectInfo{}
	nodes := map[string]int{}
	for o := range it.All(ctx) {
		seen[o.Key] = o
		nodes[o.Node]++
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	for k, w := range created {
		o, ok := seen[k]
		switch {
		case !ok:
			t.Errorf("%s not listed", k)
		case o.Kind != w.kind || o.Name != w.name:
			t.Errorf("%s listed as %s of %q; want %s of %q", k, o.Kind, o.Name, w.kind, w.name)
		case (w.kind == KindFixedWindowLimiter || w.kind == KindGCRALimiter) != (o.Identity == "10.0.0.1"):
			t.Errorf("%s listed with identity %q; want 10.0.0.1 for a keyed limiter's only", k, o.Identity)
		case o.Type == "" || (o.Node == "") != (c.topo.cluster == nil):
			t.Errorf("%s listed without type, or with a node only on Cluster: %+v", k, o)
		}
	}
	for k, o := range seen {
		if _, ok := created[k]; !ok && o.Kind != KindBookkeeping && !strings.HasSuffix(k, ":permits:sum") {
			t.Errorf("unexpected key listed: %+v", o)
		}
	}
	for k, w := range created {
		o := seen[k]
		switch {
		case w.kind == KindLock && (o.NoExpiry || o.TTL <= 0 || o.TTL > time.Minute):
			t.Errorf("lock TTL = %+v; want up to 1m", o)
		case w.kind == KindMap && !o.NoExpiry:
			t.Errorf("map TTL = %+v; want none", o)
		}
	}
	if err := c.ListObjects("*", 0); err != nil {
		for range err.All(ctx) {
		}
		if !errors.Is(err.Err(), ErrInvalidBatch) {
			t.Errorf("batch 0: %v; want ErrInvalidBatch", err.Err())
		}
	}
	return nodes
}

// On a cluster the waiters' subscriptions are counted with SHARDNUMSUB in
// sharded mode and summed over the nodes in plain mode.
func TestInspectLockSubscribersCluster(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	rdb := redistest.SharedCluster(t).Client(t)
	for _, mode := range []PubSubMode{PubSubSharded, PubSubPlain} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) { inspectSubscribersCluster(t, ctx, rdb, mode) })
	}
}

// inspectSubscribersCluster is TestInspectLockSubscribersCluster in one mode.
func inspectSubscribersCluster(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, mode PubSubMode) {
	if mode == PubSubSharded {
		redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SHARDNUMSUB)")
	}
	{
		opts := &Options{PubSubMode: mode}
		c := newClient(t, rdb, opts)
		name := fmt.Sprintf("test:inspect-cluster-subs:%d", nameSeq.Add(1))
		t.Cleanup(func() { deleteLockKeys(rdb, name) })
		holder := c.GetLock(name)
		mustTryLock(t, ctx, holder, 0, time.Minute)
		waiter := newClient(t, rdb, opts).GetLock(name)
		wctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- waiter.Lock(wctx) }()
		eventually(t, 10*time.Second, fmt.Sprintf("mode %v: the waiter counted", mode), func() bool {
			info, err := c.InspectLock(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return info.Subscribers >= 1
		})
		stop()
		<-done
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, fmt.Sprintf("mode %v: no subscriber once the waiter left", mode), func() bool {
			info, err := c.InspectLock(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			return info.Subscribers == 0
		})
	}
}

// A cancelled context ends every inspection call with its error.
func TestInspectCancelledContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.InspectLock(ctx, name); !errors.Is(err, context.Canceled) {
		t.Errorf("InspectLock: %v; want context.Canceled", err)
	}
	if _, err := c.InspectBucket(ctx, name, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("InspectBucket: %v; want context.Canceled", err)
	}
	it := c.ListObjects("*", 10)
	for range it.All(ctx) {
		t.Error("ListObjects yielded on a cancelled context")
	}
	if !errors.Is(it.Err(), context.Canceled) {
		t.Errorf("ListObjects: %v; want context.Canceled", it.Err())
	}
}

// BenchmarkInspectLock measures one InspectLock of a held lock (script and
// subscriber count) on a real server.
func BenchmarkInspectLock(b *testing.B) {
	ctx := context.Background()
	rdb := sharedRedis(b)
	c := newClient(b, rdb, nil)
	name := uniqueName(b, rdb)
	mustTryLock(b, ctx, c.GetLock(name), 0, time.Minute)
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.InspectLock(ctx, name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListObjects measures listing 1000 keys in batches of 100; the
// reported figure is per key.
func BenchmarkListObjects(b *testing.B) {
	ctx := context.Background()
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	c := newClient(b, rdb, nil)
	for i := range 1000 {
		rdb.HSet(ctx, "bench:map:"+strconv.Itoa(i), "k", "v")
	}
	b.ResetTimer()
	for b.Loop() {
		n := 0
		it := c.ListObjects("bench:*", 100)
		for range it.All(ctx) {
			n++
		}
		if it.Err() != nil || n != 1000 {
			b.Fatalf("listed %d, %v", n, it.Err())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/key")
}

// InspectQueue reads a bounded queue's length, head, capacity and the
// elements a client left in flight, and tells a missing queue and a key
// of another type.
func TestInspectQueue(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	q := GetBoundedBlockingQueue[string](c, name)
	dead := uuid.NewString()
	keys := []string{name, boundedCapKey(name), inflightKey(dead, name, true), drainKey(dead, name, "3"), name + ":h"}
	t.Cleanup(func() { rdb.Del(context.Background(), keys...) })
	if _, err := c.InspectQueue(ctx, name, nil); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectQueue of no queue = %v; want ErrNotFound", err)
	}
	if _, err := q.TrySetCapacity(ctx, 10); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"first", "second", "third"} {
		if ok, err := q.Offer(ctx, v); err != nil || !ok {
			t.Fatalf("Offer(%s) = %v, %v", v, ok, err)
		}
	}
	// A client that died between a move and its settle left two elements
	// in flight and one in a drain list, having taken their capacity.
	rdb.RPush(ctx, keys[2], "x", "y")
	rdb.RPush(ctx, keys[3], "z")
	rdb.DecrBy(ctx, keys[1], 3)
	info, err := c.InspectQueue(ctx, name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if info.Length != 3 || info.Head != "first" || !info.Bounded || info.Free != 4 || info.Capacity != 10 ||
		len(info.InFlight) != 1 || info.InFlight[dead] != 3 {
		t.Errorf("InspectQueue = %+v; want 3 waiting, head first, 4 free of 10, 3 in flight on %s", info, dead)
	}
	raw, err := c.InspectQueue(ctx, name, BytesCodec{})
	if err != nil || string(raw.Head.([]byte)) != rdb.LIndex(ctx, name, 0).Val() {
		t.Errorf("InspectQueue(BytesCodec) head = %v, %v; want the stored bytes", raw.Head, err)
	}
	rdb.HSet(ctx, keys[4], "f", "v")
	if _, err := c.InspectQueue(ctx, keys[4], nil); !errors.Is(err, ErrWrongType) {
		t.Errorf("InspectQueue of a hash = %v; want ErrWrongType", err)
	}
	if _, err := c.InspectQueue(ctx, "", nil); !errors.Is(err, ErrEmptyName) {
		t.Errorf("InspectQueue(\"\") = %v; want ErrEmptyName", err)
	}
}

// On a cluster InspectQueue finds the in-flight lists on the queue's own
// master.
func TestInspectQueueCluster(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	for i := range 3 {
		name := fmt.Sprintf("test:inspect-queue-cluster:%d:%d", nameSeq.Add(1), i)
		dead := uuid.NewString()
		keys := []string{name, inflightKey(dead, name, false)}
		t.Cleanup(func() { rdb.Del(context.Background(), keys...) })
		if err := GetQueue[string](c, name).Offer(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		rdb.RPush(ctx, keys[1], "x", "y")
		info, err := c.InspectQueue(ctx, name, StringCodec{})
		if err != nil {
			t.Fatal(err)
		}
		if info.Length != 1 || info.Bounded || info.InFlight[dead] != 2 || len(info.InFlight) != 1 {
			t.Errorf("InspectQueue(%s) = %+v; want 1 waiting, unbounded, 2 in flight on %s", name, info, dead)
		}
	}
}

// InspectMapCache lists entries with their remaining TTL and idle time, a
// page at a time, and marks an entry past its deadline still stored.
func TestInspectMapCache(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(name)[:mcCreated]...) })
	if _, err := c.InspectMapCache(ctx, name, nil, 0, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectMapCache of no map = %v; want ErrNotFound", err)
	}
	// The entries are written by a client closed before the inspection, so
	// that no eviction pass removes the expired one meanwhile.
	writer := newClient(t, rdb, nil)
	mc := GetMapCache[string, string](writer, name)
	if _, _, err := mc.PutWithTTL(ctx, "ttl", "a", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mc.PutWithTTL(ctx, "idle", "b", 0, 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mc.Put(ctx, "forever", "c"); err != nil {
		t.Fatal(err)
	}
	// An entry whose deadline passed, not yet met by a call or eviction.
	if _, _, err := mc.PutWithTTL(ctx, "gone", "d", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if err := writer.Close(); err != nil {
		t.Fatal(err)
	}
	enc := func(s string) string { b, _ := c.opts.Codec.Marshal(s); return string(b) }
	rdb.ZAdd(ctx, mapCacheKeys(name)[mcTimeout], redis.Z{Score: 1, Member: enc("gone")})

	got := map[any]MapCacheEntry{}
	var cursor uint64
	for {
		page, err := c.InspectMapCache(ctx, name, nil, cursor, 1)
		if err != nil {
			t.Fatal(err)
		}
		if page.Size != 4 || page.ServerTime.IsZero() {
			t.Fatalf("page = %+v; want size 4 and the server's time", page)
		}
		for _, e := range page.Entries {
			got[e.Key] = e
		}
		if cursor = page.Cursor; cursor == 0 {
			break
		}
	}
	ttl, idle, forever, gone := got["ttl"], got["idle"], got["forever"], got["gone"]
	switch {
	case len(got) != 4:
		t.Errorf("entries = %+v; want 4", got)
	case ttl.Value != "a" || ttl.TTL <= 50*time.Minute || ttl.TTL > time.Hour || ttl.MaxIdle != 0 || ttl.Expired:
		t.Errorf("ttl entry = %+v; want up to 1h left", ttl)
	case idle.Value != "b" || idle.TTL != 0 || idle.MaxIdle != 10*time.Minute || idle.IdleLeft <= 5*time.Minute || idle.IdleLeft > 10*time.Minute:
		t.Errorf("idle entry = %+v; want max idle 10m, up to 10m left", idle)
	case forever.Value != "c" || forever.TTL != 0 || forever.IdleLeft != 0 || forever.Expired:
		t.Errorf("forever entry = %+v; want no deadline", forever)
	case gone.Value != "d" || !gone.Expired || gone.TTL != 0:
		t.Errorf("expired entry = %+v; want Expired", gone)
	}
	if _, err := c.InspectMapCache(ctx, name, nil, 0, 0); !errors.Is(err, ErrInvalidBatch) {
		t.Errorf("count 0 = %v; want ErrInvalidBatch", err)
	}
	rdb.Set(ctx, name+":s", "x", time.Minute)
	t.Cleanup(func() { rdb.Del(context.Background(), name+":s") })
	if _, err := c.InspectMapCache(ctx, name+":s", nil, 0, 10); !errors.Is(err, ErrWrongType) {
		t.Errorf("InspectMapCache of a string = %v; want ErrWrongType", err)
	}
}

// InspectKeyedLimiter reads one identity of either keyed limiter without
// its configuration: a fixed window's count, a GCRA TAT, the time to a
// full allowance; no state is Present false; bad input its sentinels.
func TestInspectKeyedLimiter(t *testing.T) {
	forTopologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		ctx := testCtx(t, 30*time.Second)
		c := newClient(t, rdb, nil)
		fwName, gcraName := limiterName(t, rdb), limiterName(t, rdb)
		fw := c.GetFixedWindowLimiter(fwName, 10, time.Hour)
		gcra := c.GetGCRALimiter(gcraName, 1, time.Minute, 5)
		if _, err := fw.Allow(ctx, "ip", 3); err != nil {
			t.Fatal(err)
		}
		if _, err := gcra.Allow(ctx, "ip", 2); err != nil {
			t.Fatal(err)
		}
		info, err := c.InspectKeyedLimiter(ctx, fwName, "ip")
		if err != nil {
			t.Fatal(err)
		}
		if !info.Present || info.Kind != KindFixedWindowLimiter || info.Used != 3 || info.ResetAfter <= 0 ||
			info.ResetAfter > time.Hour || info.RedisKey != identityKey(fwName, "ip") || !info.TAT.IsZero() {
			t.Errorf("fixed window = %+v; want 3 used, up to 1h left", info)
		}
		info, err = c.InspectKeyedLimiter(ctx, gcraName, "ip")
		if err != nil {
			t.Fatal(err)
		}
		// Two permits at one per minute: a full burst again in about 2m.
		if !info.Present || info.Kind != KindGCRALimiter || info.Used != 0 || info.ResetAfter < time.Minute ||
			info.ResetAfter > 2*time.Minute || info.TAT.Sub(info.ServerTime) < time.Minute {
			t.Errorf("gcra = %+v; want a TAT and reset about 2m ahead", info)
		}
		if info, err := c.InspectKeyedLimiter(ctx, fwName, "other"); err != nil || info.Present || info.Kind != "" {
			t.Errorf("no state = %+v, %v; want Present false", info, err)
		}
		rdb.HSet(ctx, identityKey(fwName, "h"), "f", "v")
		rdb.Set(ctx, identityKey(fwName, "s"), "text", 0)
		for _, tc := range []struct {
			name, key string
			want      error
		}{
			{"", "ip", ErrEmptyName},
			{fwName, "", ErrEmptyKey},
			{fwName, "h", ErrWrongType},
			{fwName, "s", ErrWrongType},
		} {
			if _, err := c.InspectKeyedLimiter(ctx, tc.name, tc.key); !errors.Is(err, tc.want) {
				t.Errorf("InspectKeyedLimiter(%q, %q) = %v; want %v", tc.name, tc.key, err, tc.want)
			}
		}
		if got := rdb.Get(ctx, identityKey(fwName, "s")).Val(); got != "text" {
			t.Errorf("the string became %q", got)
		}
	})
}
