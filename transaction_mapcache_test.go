package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// mapCacheState snapshots every key of the MapCache called name (hash,
// zsets with scores, options), to check what a call changed.
func mapCacheState(t testing.TB, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, k := range mapCacheKeys(name)[:mcCreated] {
		typ := rdb.Type(ctx, k).Val()
		fmt.Fprintf(&b, "%s:%s=", k, typ)
		switch typ {
		case "hash":
			fmt.Fprint(&b, rdb.HGetAll(ctx, k).Val())
		case "zset":
			fmt.Fprint(&b, rdb.ZRangeWithScores(ctx, k, 0, -1).Val())
		case "string":
			fmt.Fprint(&b, rdb.Get(ctx, k).Val())
		}
		b.WriteString(";")
	}
	return b.String()
}

// assertNoMapCacheTxLocks fails when a key lock of map cache mn is left.
func assertNoMapCacheTxLocks(t *testing.T, rdb redis.UniversalClient, mn string) {
	t.Helper()
	eventually(t, 10*time.Second, "no transaction lock left", func() bool {
		keys, _ := rdb.Keys(context.Background(), "{"+mn+"}:*:lock").Result()
		return len(keys) == 0
	})
}

// TestTxMapCacheReadYourWritesAndCommit walks TxMapCache's calls: reads see
// the live entries in Redis until the transaction writes, then its own
// writes; nothing reaches Redis before Commit; after it a plain MapCache
// handle sees the values, and the zsets hold the TTL and max idle counted
// from the commit (an earlier TTL cleared by a plain Put), the entries
// carry their max idle, removed keys are gone from hash and zsets.
func TestTxMapCacheReadYourWritesAndCommit(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	mn := uniqueName(t, rdb)
	keys := mapCacheKeys(mn)
	t.Cleanup(func() { rdb.Del(context.Background(), keys...) })
	plain := GetMapCache[string, string](c, mn)
	if _, _, err := plain.PutWithTTL(ctx, "k0", "v0", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := plain.PutWithTTL(ctx, "gone", "g", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	before := mapCacheState(t, rdb, mn)
	tx := mustTx(t, c, 0)
	m := GetTxMapCache[string, string](tx, mn)
	if m.Name() != mn {
		t.Fatalf("Name = %q", m.Name())
	}
	if v, ok, err := m.Get(ctx, "k0"); err != nil || !ok || v != "v0" {
		t.Fatalf("Get(k0) = %q, %v, %v; want v0", v, ok, err)
	}
	if v, ok, err := m.Put(ctx, "k0", "v0b"); err != nil || !ok || v != "v0" {
		t.Fatalf("Put(k0) = %q, %v, %v; want v0", v, ok, err)
	}
	if v, ok, err := m.PutWithTTL(ctx, "ttl", "t1", time.Hour, 0); err != nil || ok || v != "" {
		t.Fatalf("PutWithTTL(ttl) = %q, %v, %v; want absent", v, ok, err)
	}
	if v, ok, err := m.PutWithTTL(ctx, "idle", "i1", 0, 30*time.Minute); err != nil || ok || v != "" {
		t.Fatalf("PutWithTTL(idle) = %q, %v, %v; want absent", v, ok, err)
	}
	if isNew, err := m.FastPut(ctx, "fast", "f1"); err != nil || !isNew {
		t.Fatalf("FastPut(fast) = %v, %v; want true", isNew, err)
	}
	if isNew, err := m.FastPut(ctx, "fast", "f2"); err != nil || isNew {
		t.Fatalf("FastPut(fast) again = %v, %v; want false", isNew, err)
	}
	if v, ok, err := m.Remove(ctx, "gone"); err != nil || !ok || v != "g" {
		t.Fatalf("Remove(gone) = %q, %v, %v; want g", v, ok, err)
	}
	if ok, err := m.FastRemove(ctx, "never"); err != nil || ok {
		t.Fatalf("FastRemove(never) = %v, %v; want false", ok, err)
	}
	for k, want := range map[string]bool{"k0": true, "ttl": true, "fast": true, "gone": false, "never": false} {
		if ok, err := m.ContainsKey(ctx, k); err != nil || ok != want {
			t.Fatalf("ContainsKey(%s) = %v, %v; want %v", k, ok, err, want)
		}
	}
	if v, ok, err := m.GetForUpdate(ctx, "fast"); err != nil || !ok || v != "f2" {
		t.Fatalf("GetForUpdate(fast) = %q, %v, %v; want f2", v, ok, err)
	}
	if after := mapCacheState(t, rdb, mn); after != before {
		t.Fatalf("Redis changed before Commit:\n got %s\nwant %s", after, before)
	}
	start := int64(serverMillis(t, ctx, rdb))
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	got, err := plain.ReadAll(ctx) // an access: moves idle's deadline
	if err != nil {
		t.Fatal(err)
	}
	end := int64(serverMillis(t, ctx, rdb))
	want := map[string]string{"k0": "v0b", "ttl": "t1", "idle": "i1", "fast": "f2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after Commit the map cache holds %v, want %v", got, want)
	}
	timeouts := rdb.ZRangeWithScores(ctx, keys[mcTimeout], 0, -1).Val()
	if len(timeouts) != 1 || timeouts[0].Member != "\xa3ttl" {
		t.Fatalf("timeout zset = %v, want only ttl (k0's cleared by Put, gone's removed)", timeouts)
	}
	if s := int64(timeouts[0].Score); s < start+time.Hour.Milliseconds() || s > end+time.Hour.Milliseconds() {
		t.Fatalf("ttl expires at %d, want within [%d, %d] + 1h", s, start, end)
	}
	idles := rdb.ZRangeWithScores(ctx, keys[mcIdle], 0, -1).Val()
	if len(idles) != 1 || idles[0].Member != "\xa4idle" {
		t.Fatalf("idle zset = %v, want only idle", idles)
	}
	if s := int64(idles[0].Score); s < start+30*time.Minute.Milliseconds() || s > end+30*time.Minute.Milliseconds() {
		t.Fatalf("idle deadline %d, want within [%d, %d] + 30m", s, start, end)
	}
	entry := rdb.HGet(ctx, mn, "\xa4idle").Val()
	if entry != string(mapCacheEntry(30*time.Minute.Milliseconds(), []byte("\xa2i1"))) {
		t.Fatalf("idle's entry = %q, not MapCache's encoding with its max idle", entry)
	}
	if v, ok, err := plain.Get(ctx, "fast"); err != nil || !ok || v != "f2" {
		t.Fatalf("MapCache.Get(fast) = %q, %v, %v", v, ok, err)
	}
	assertNoMapCacheTxLocks(t, rdb, mn)
	if _, _, err := m.Get(ctx, "k0"); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Get after Commit = %v, want ErrTransactionDone", err)
	}
}

// TestTxMapCacheExpiry checks that an entry expired on the server's clock
// reads as absent inside a transaction (Get, GetForUpdate, ContainsKey,
// Put's previous value) whether or not it was deleted yet, and that a TTL
// written by a transaction expires as MapCache's own.
func TestTxMapCacheExpiry(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	mn := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(mn)...) })
	plain := GetMapCache[string, string](c, mn)
	for _, k := range []string{"a", "b", "c", "d"} {
		if _, err := plain.FastPutWithTTL(ctx, k, "old", 20*time.Millisecond, 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := plain.FastPutWithTTL(ctx, "idle", "old", 0, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	tx := mustTx(t, c, 0)
	m := GetTxMapCache[string, string](tx, mn)
	if v, ok, err := m.Get(ctx, "a"); err != nil || ok {
		t.Fatalf("Get(expired) = %q, %v, %v; want absent", v, ok, err)
	}
	if v, ok, err := m.GetForUpdate(ctx, "b"); err != nil || ok {
		t.Fatalf("GetForUpdate(expired) = %q, %v, %v; want absent", v, ok, err)
	}
	if ok, err := m.ContainsKey(ctx, "idle"); err != nil || ok {
		t.Fatalf("ContainsKey(idle expired) = %v, %v; want false", ok, err)
	}
	if v, ok, err := m.Put(ctx, "c", "new"); err != nil || ok {
		t.Fatalf("Put over an expired entry = %q, %v, %v; want absent", v, ok, err)
	}
	if isNew, err := m.FastPut(ctx, "d", "new"); err != nil || !isNew {
		t.Fatalf("FastPut over an expired entry = %v, %v; want new", isNew, err)
	}
	if _, err := m.FastPut(ctx, "short", "s"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.PutWithTTL(ctx, "short", "s", 50*time.Millisecond, 0); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := m.Get(ctx, "short"); err != nil || !ok || v != "s" {
		t.Fatalf("Get of a TTL written in this transaction = %q, %v, %v; want s (the TTL counts from the commit)", v, ok, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := plain.Get(ctx, "c"); err != nil || !ok || v != "new" {
		t.Fatalf("MapCache.Get(c) = %q, %v, %v; want new", v, ok, err)
	}
	eventually(t, 10*time.Second, "the committed TTL expires", func() bool {
		_, ok, err := plain.Get(ctx, "short")
		return err == nil && !ok
	})
	tx = mustTx(t, c, 0)
	if ok, err := GetTxMapCache[string, string](tx, mn).ContainsKey(ctx, "short"); err != nil || ok {
		t.Fatalf("ContainsKey(short) after its TTL = %v, %v", ok, err)
	}
	_ = tx.Rollback(ctx)
}

// TestTxMapCacheRollback checks that Rollback applies nothing and leaves
// no lock.
func TestTxMapCacheRollback(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	mn := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(mn)...) })
	if _, err := GetMapCache[string, string](c, mn).FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	before := mapCacheState(t, rdb, mn)
	tx := mustTx(t, c, 0)
	m := GetTxMapCache[string, string](tx, mn)
	if _, _, err := m.PutWithTTL(ctx, "a", "x", time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastRemove(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.Keys(ctx, "{"+mn+"}:*:lock").Result(); len(n) != 2 {
		t.Fatalf("locks held = %v, want 2", n)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if after := mapCacheState(t, rdb, mn); after != before {
		t.Fatalf("Rollback changed Redis:\n got %s\nwant %s", after, before)
	}
	assertNoMapCacheTxLocks(t, rdb, mn)
	if _, err := m.FastPut(ctx, "b", "y"); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("FastPut after Rollback = %v, want ErrTransactionDone", err)
	}
}

// TestTxMapCacheLockLostRefusesCommit checks that a commit whose key lock
// was lost (forced open) applies none of the map cache's writes.
func TestTxMapCacheLockLostRefusesCommit(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	mn := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(mn)...) })
	tx := mustTx(t, c, 0)
	m := GetTxMapCache[string, string](tx, mn)
	if _, _, err := m.PutWithTTL(ctx, "a", "x", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastPut(ctx, "b", "y"); err != nil {
		t.Fatal(err)
	}
	k, _ := m.mc.m.encodeKey("b")
	rdb.Del(ctx, txKeyLock(mn, k)) // forced open, as ForceUnlock would
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionTimeout) {
		t.Fatalf("Commit with a lost lock = %v, want ErrTransactionTimeout", err)
	}
	if n, _ := rdb.Exists(ctx, mapCacheKeys(mn)[:mcCreated]...).Result(); n != 0 {
		t.Fatalf("%d map cache keys after a refused commit, want 0", n)
	}
	assertNoMapCacheTxLocks(t, rdb, mn)
}

// TestTxMapCacheBadInput checks each refusal: a sentinel error, and Redis
// as it was, no lock left.
func TestTxMapCacheBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	mn, strKey := name+":mc", name+":str"
	t.Cleanup(func() { rdb.Del(context.Background(), append(mapCacheKeys(mn), strKey)...) })
	if _, err := GetMapCache[string, string](c, mn).FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, strKey, "s", 0)
	state := func() string { return mapCacheState(t, rdb, mn) + keyState(t, rdb, strKey) }
	before := state()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	var nilp *int
	loader := WithReadThrough(ReadThrough[string, string]{Load: func(context.Context, string) (string, error) { return "", nil }})
	cases := []struct {
		what string
		call func(tx *Transaction) error
		want error
	}{
		{"empty name", func(tx *Transaction) error {
			_, _, err := GetTxMapCache[string, string](tx, "").Get(ctx, "k")
			return err
		}, ErrEmptyName},
		{"negative ttl", func(tx *Transaction) error {
			_, _, err := GetTxMapCache[string, string](tx, mn).PutWithTTL(ctx, "k", "v", -time.Second, 0)
			return err
		}, ErrNegativeDuration},
		{"negative max idle", func(tx *Transaction) error {
			_, _, err := GetTxMapCache[string, string](tx, mn).PutWithTTL(ctx, "k", "v", 0, -time.Second)
			return err
		}, ErrNegativeDuration},
		{"nil key", func(tx *Transaction) error {
			_, err := GetTxMapCache[*int, string](tx, mn).FastPut(ctx, nilp, "v")
			return err
		}, ErrNilValue},
		{"nil value", func(tx *Transaction) error {
			_, err := GetTxMapCache[string, *int](tx, mn).FastPut(ctx, "k", nilp)
			return err
		}, ErrNilValue},
		{"a loader", func(tx *Transaction) error {
			_, _, err := GetTxMapCache[string, string](tx, mn, loader).Get(ctx, "k")
			return err
		}, ErrInvalidOption},
		{"write on a string", func(tx *Transaction) error {
			_, err := GetTxMapCache[string, string](tx, strKey).FastPut(ctx, "k", "v")
			return err
		}, ErrWrongType},
		{"a bucket, then a map cache, on one key", func(tx *Transaction) error {
			if err := GetTxBucket[string](tx, name+":both").Set(ctx, "x"); err != nil {
				return err
			}
			_, err := GetTxMapCache[string, string](tx, name+":both").FastPut(ctx, "k", "v")
			return err
		}, ErrWrongType},
		{"a map, then a map cache, on one name", func(tx *Transaction) error {
			if _, err := GetTxMap[string, string](tx, mn).FastPut(ctx, "k", "v"); err != nil {
				return err
			}
			_, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k2", "v")
			return err
		}, ErrWrongType},
		{"a map cache, then a map, on one name", func(tx *Transaction) error {
			if _, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k", "v"); err != nil {
				return err
			}
			_, err := GetTxMap[string, string](tx, mn).FastPut(ctx, "k2", "v")
			return err
		}, ErrWrongType},
		{"a companion key written as a bucket", func(tx *Transaction) error {
			if err := GetTxBucket[string](tx, mapCacheKeys(mn)[mcTimeout]).Set(ctx, "x"); err != nil {
				return err
			}
			_, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k", "v")
			return err
		}, ErrWrongType},
		{"cancelled write", func(tx *Transaction) error {
			_, err := GetTxMapCache[string, string](tx, mn).FastPut(cancelled, "k", "v")
			return err
		}, context.Canceled},
		{"cancelled commit", func(tx *Transaction) error {
			if _, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k", "v"); err != nil {
				return err
			}
			return tx.Commit(cancelled)
		}, context.Canceled},
	}
	for _, tc := range cases {
		tx := mustTx(t, c, 0)
		if err := tc.call(tx); !errors.Is(err, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.what, err, tc.want)
		}
		_ = tx.Rollback(cancelled)
		if after := state(); after != before {
			t.Errorf("%s: Redis changed:\n got %s\nwant %s", tc.what, after, before)
		}
		keys, _ := rdb.Keys(ctx, "*"+strings.TrimPrefix(name, "test:")+"*lock").Result()
		keys = slices.DeleteFunc(keys, func(k string) bool { return strings.HasPrefix(k, "redisson_unlock_latch:") })
		if len(keys) != 0 {
			t.Errorf("%s: locks left: %v", tc.what, keys)
		}
	}
	// A companion zset of another type fails the read, and, when it turns
	// so between the write and Commit, the whole commit before any write:
	// the bucket and the map cache's hash are untouched.
	idleKey := mapCacheKeys(mn)[mcIdle]
	t.Cleanup(func() { rdb.Del(context.Background(), idleKey) })
	rdb.Set(ctx, idleKey, "s", 0)
	tx := mustTx(t, c, 0)
	if _, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k2", "v"); !errors.Is(err, ErrWrongType) {
		t.Fatalf("FastPut over a companion of another type = %v, want ErrWrongType", err)
	}
	_ = tx.Rollback(ctx)
	rdb.Del(ctx, idleKey)
	tx = mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, strKey).Set(ctx, "changed"); err != nil {
		t.Fatal(err)
	}
	if _, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "k2", "v"); err != nil {
		t.Fatal(err)
	}
	rdb.Set(ctx, idleKey, "s", 0)
	before = state()
	if err := tx.Commit(ctx); !errors.Is(err, ErrWrongType) {
		t.Fatalf("Commit over a companion of another type = %v, want ErrWrongType", err)
	}
	if after := state(); after != before {
		t.Fatalf("a refused commit changed Redis:\n got %s\nwant %s", after, before)
	}
}

// TestTxMapCacheCluster checks, on Redis Cluster, that a map cache's keys
// (hash, zsets, options, channels, key locks) all fit the slot of its name,
// with or without a hash tag, so it commits with a bucket of its tag, and
// that a map cache of another slot is ErrCrossSlot.
func TestTxMapCacheCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	tag := "{" + uniqueName(t, rdb) + "}"
	bn, mn, other := tag+":b", tag+":mc", uniqueName(t, rdb)+":other"
	t.Cleanup(func() {
		rdb.Del(context.Background(), bn)
		for _, k := range append(mapCacheKeys(mn), mapCacheKeys(other)...) {
			rdb.Del(context.Background(), k)
		}
	})
	tx := mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	m := GetTxMapCache[string, string](tx, mn)
	if _, _, err := m.PutWithTTL(ctx, "k", "v", time.Hour, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := GetTxMapCache[string, string](tx, other).FastPut(ctx, "k", "v"); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a map cache in another slot: %v, want ErrCrossSlot", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if v, ok, err := GetMapCache[string, string](c, mn).Get(ctx, "k"); err != nil || !ok || v != "v" {
		t.Fatalf("MapCache.Get = %q, %v, %v", v, ok, err)
	}
	if n := rdb.ZCard(ctx, mapCacheKeys(mn)[mcTimeout]).Val(); n != 1 {
		t.Fatalf("timeout zset has %d members, want 1", n)
	}
	// Without a hash tag a map cache alone commits too: its companions and
	// locks are named in its slot.
	tx = mustTx(t, c, 0)
	mo := GetTxMapCache[string, string](tx, other)
	if _, _, err := mo.PutWithTTL(ctx, "k", "v", time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := mo.FastRemove(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit without a hash tag: %v", err)
	}
	if v, ok, err := GetMapCache[string, string](c, other).Get(ctx, "k"); err != nil || !ok || v != "v" {
		t.Fatalf("MapCache.Get(other) = %q, %v, %v", v, ok, err)
	}
}

// TestTxMapCacheCommitEventsAndMaxSize checks that the commit writes as
// MapCache.Put and Remove do beyond the entries: listeners hear created,
// updated and removed once the commit applied (nothing before), and a max
// size set by SetMaxSize evicts at the commit.
func TestTxMapCacheCommitEventsAndMaxSize(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	mn := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), mapCacheKeys(mn)...) })
	plain := GetMapCache[string, string](c, mn)
	if _, err := plain.FastPut(ctx, "old", "o"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.FastPut(ctx, "drop", "d"); err != nil {
		t.Fatal(err)
	}
	events := make(chan string, 16)
	for what, on := range map[string]func(context.Context, func(MapCacheEvent[string, string])) (func(), error){
		"created": plain.OnCreated, "updated": plain.OnUpdated, "removed": plain.OnRemoved,
	} {
		stop, err := on(ctx, func(e MapCacheEvent[string, string]) {
			events <- fmt.Sprintf("%s %s=%s (%s)", what, e.Key, e.Value, e.OldValue)
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	tx := mustTx(t, c, 0)
	m := GetTxMapCache[string, string](tx, mn)
	if _, err := m.FastPut(ctx, "new", "n"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastPut(ctx, "old", "o2"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastRemove(ctx, "drop"); err != nil {
		t.Fatal(err)
	}
	select {
	case e := <-events:
		t.Fatalf("event before Commit: %s", e)
	case <-time.After(200 * time.Millisecond):
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		select {
		case e := <-events:
			got = append(got, e)
		case <-time.After(10 * time.Second):
			t.Fatalf("events after Commit: %v, want 3", got)
		}
	}
	slices.Sort(got)
	want := []string{"created new=n ()", "removed drop=d ()", "updated old=o2 (o)"}
	if !slices.Equal(got, want) {
		t.Fatalf("events = %v, want %v", got, want)
	}

	if _, err := plain.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := plain.SetMaxSize(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if _, err := plain.FastPut(ctx, k, k); err != nil {
			t.Fatal(err)
		}
	}
	tx = mustTx(t, c, 0)
	if _, err := GetTxMapCache[string, string](tx, mn).FastPut(ctx, "third", "t"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := plain.Size(ctx); err != nil || n != 2 {
		t.Fatalf("Size after a commit beyond the max size = %d, %v; want 2", n, err)
	}
	if ok, err := plain.ContainsKey(ctx, "third"); err != nil || !ok {
		t.Fatalf("the committed key was evicted: %v, %v", ok, err)
	}
}
