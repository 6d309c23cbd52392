package redisson

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func mustTx(t *testing.T, c *Client, timeout time.Duration) *Transaction {
	t.Helper()
	tx, err := c.CreateTransaction(TransactionOptions{Timeout: timeout})
	if err != nil {
		t.Fatalf("CreateTransaction: %v", err)
	}
	return tx
}

// TestTransactionReadYourWritesAndCommit walks the calls of TxBucket and
// TxMap: reads see Redis until the transaction writes, then its own
// writes; nothing reaches Redis before Commit, everything after it.
func TestTransactionReadYourWritesAndCommit(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	bn, mn := name+":b", name+":m"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn) })
	if err := GetBucket[string](c, bn).Set(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := GetMap[string, string](c, mn).FastPut(ctx, "k0", "v0"); err != nil {
		t.Fatal(err)
	}
	tx := mustTx(t, c, 0)
	b := GetTxBucket[string](tx, bn)
	m := GetTxMap[string, string](tx, mn)
	if v, ok, err := b.Get(ctx); err != nil || !ok || v != "old" {
		t.Fatalf("Get = %q, %v, %v; want old", v, ok, err)
	}
	if err := b.Set(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if v, ok, err := b.Get(ctx); err != nil || !ok || v != "new" {
		t.Fatalf("Get after Set = %q, %v, %v; want new", v, ok, err)
	}
	if v, ok, err := m.Put(ctx, "k1", "v1"); err != nil || ok || v != "" {
		t.Fatalf("Put(k1) = %q, %v, %v; want absent", v, ok, err)
	}
	if v, ok, err := m.Put(ctx, "k1", "v1b"); err != nil || !ok || v != "v1" {
		t.Fatalf("Put(k1) again = %q, %v, %v; want v1", v, ok, err)
	}
	if isNew, err := m.FastPut(ctx, "k2", "v2"); err != nil || !isNew {
		t.Fatalf("FastPut(k2) = %v, %v; want true", isNew, err)
	}
	if v, ok, err := m.Remove(ctx, "k0"); err != nil || !ok || v != "v0" {
		t.Fatalf("Remove(k0) = %q, %v, %v; want v0", v, ok, err)
	}
	if ok, err := m.ContainsKey(ctx, "k0"); err != nil || ok {
		t.Fatalf("ContainsKey(k0) after Remove = %v, %v", ok, err)
	}
	if v, ok, err := m.GetForUpdate(ctx, "k1"); err != nil || !ok || v != "v1b" {
		t.Fatalf("GetForUpdate(k1) = %q, %v, %v", v, ok, err)
	}
	if ok, err := m.FastRemove(ctx, "k9"); err != nil || ok {
		t.Fatalf("FastRemove(k9) = %v, %v; want false", ok, err)
	}
	// Nothing applied yet.
	if v, _ := rdb.Get(ctx, bn).Result(); v != "\xa3old" {
		t.Fatalf("bucket before Commit = %q", v)
	}
	if n, _ := rdb.HLen(ctx, mn).Result(); n != 1 {
		t.Fatalf("map before Commit has %d fields, want 1", n)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if v, _ := rdb.Get(ctx, bn).Result(); v != "\xa3new" {
		t.Fatalf("bucket after Commit = %q, want \\xa3new", v)
	}
	got, _ := rdb.HGetAll(ctx, mn).Result()
	if len(got) != 2 || got["\xa2k1"] != "\xa3v1b" || got["\xa2k2"] != "\xa2v2" {
		t.Fatalf("map after Commit = %q", got)
	}
	assertNoTxLocks(t, rdb, bn, mn)
	if err := b.Set(ctx, "x"); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Set after Commit = %v, want ErrTransactionDone", err)
	}
	if _, _, err := m.Get(ctx, "k1"); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Get after Commit = %v, want ErrTransactionDone", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Commit again = %v, want ErrTransactionDone", err)
	}
	if err := tx.Rollback(ctx); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Rollback after Commit = %v, want ErrTransactionDone", err)
	}
}

// assertNoTxLocks fails when a transaction lock of bucket bn or map mn is
// left in Redis (the commit's latch goes with the janitor, shortly after).
func assertNoTxLocks(t *testing.T, rdb redis.UniversalClient, bn, mn string) {
	t.Helper()
	ctx := context.Background()
	eventually(t, 10*time.Second, "no transaction lock or latch left", func() bool {
		var left []string
		for _, pattern := range []string{bn + ":transaction_lock*", "{" + mn + "}:*", "redisson_unlock_latch:{" + bn + "*", "redisson_unlock_latch:{{" + mn + "}*"} {
			keys, _ := rdb.Keys(ctx, pattern).Result()
			left = append(left, keys...)
		}
		return len(left) == 0
	})
}

// TestTransactionRollback checks that Rollback applies nothing, releases
// every lock with Redisson's unlock message, and ends the transaction.
func TestTransactionRollback(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	bn, mn := name+":b", name+":m"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn) })
	tx := mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "never"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := GetTxMap[string, string](tx, mn).Put(ctx, "k9", "v9"); err != nil {
		t.Fatal(err)
	}
	sub := rdb.Subscribe(ctx, "redisson_lock__channel:{"+bn+":transaction_lock}")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatalf("Rollback: %v", err)
	}
	select {
	case msg := <-sub.Channel():
		if msg.Payload != "0" {
			t.Fatalf("unlock message %q, want 0", msg.Payload)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no unlock message after Rollback")
	}
	if n, _ := rdb.Exists(ctx, bn, mn).Result(); n != 0 {
		t.Fatalf("%d data keys after Rollback, want 0", n)
	}
	assertNoTxLocks(t, rdb, bn, mn)
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Commit after Rollback = %v, want ErrTransactionDone", err)
	}
}

// TestTransactionLockKeysAsRecorded checks the lock keys and fields against
// the recording of Redisson's RTransaction: a bucket's
// "<name>:transaction_lock", a map key's "{<map>}:<key id>:lock" with the
// ids recorded for the keys "k0", "k1", "k2" (MsgpackCodec), the field
// "<client uuid>:<number>:<32 hex digits>" holding 1, the lease the timeout.
func TestTransactionLockKeysAsRecorded(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	bn, mn := name+":b", name+":m"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn) })
	tx := mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	m := GetTxMap[string, string](tx, mn)
	for _, k := range []string{"k1", "k2", "k0"} {
		if _, err := m.FastPut(ctx, k, "v"); err != nil {
			t.Fatal(err)
		}
	}
	field := regexp.MustCompile(`^[0-9a-f-]{36}:[0-9]+:` + tx.ID() + `$`)
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(tx.ID()) {
		t.Fatalf("ID %q, want 32 hex digits", tx.ID())
	}
	for _, lock := range []string{
		bn + ":transaction_lock",
		"{" + mn + "}:Rs/5P4hf6WXvQsSyBB5SCA:lock", // k1
		"{" + mn + "}:R7YlLVUVEoc9ikZRcrXZ7A:lock", // k2
		"{" + mn + "}:wA144YVtu4seDceKm6yNRA:lock", // k0
	} {
		h, err := rdb.HGetAll(ctx, lock).Result()
		if err != nil || len(h) != 1 {
			t.Fatalf("lock %q = %v, %v; want one field", lock, h, err)
		}
		for f, v := range h {
			if !field.MatchString(f) || v != "1" {
				t.Fatalf("lock %q: field %q = %q; want <uuid>:<n>:%s = 1", lock, f, v, tx.ID())
			}
		}
		if pttl, _ := rdb.PTTL(ctx, lock).Result(); pttl <= 0 || pttl > DefaultTransactionTimeout {
			t.Fatalf("lock %q PTTL %v, want within the 5s timeout", lock, pttl)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	assertNoTxLocks(t, rdb, bn, mn)
}

// redissonTryLock is Redisson's RLock acquire script (tryLockInnerAsync),
// the stand-in for a Java transaction taking one of its locks.
const redissonTryLock = `if ((redis.call('exists', KEYS[1]) == 0) or (redis.call('hexists', KEYS[1], ARGV[2]) == 1)) then ` +
	`redis.call('hincrby', KEYS[1], ARGV[2], 1); redis.call('pexpire', KEYS[1], ARGV[1]); return nil; end; ` +
	`return redis.call('pttl', KEYS[1]);`

// TestTransactionExcludesJava checks the exclusion both ways against a
// stand-in for a Java RTransaction built from the recording: its lock on
// the bucket makes a Go transaction's write wait (and time out); its
// release (DEL plus the unlock message 0) lets the write through; and a Go
// transaction's lock refuses Redisson's acquire script.
func TestTransactionExcludesJava(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	bn, mn := name+":b", name+":m"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn, bn+":transaction_lock") })
	lock := bn + ":transaction_lock"
	javaField := "699d62ec-eed5-4b8e-a6c1-678947b33ea5:1:b2796782eaf83bdf1847dc2f5f109520"
	if res, err := rdb.Eval(ctx, redissonTryLock, []string{lock}, 5000, javaField).Result(); err != redis.Nil {
		t.Fatalf("Java acquire = %v, %v; want nil (taken)", res, err)
	}

	// Held by Java for its whole lease: the Go write times out.
	tx := mustTx(t, c, 300*time.Millisecond)
	err := GetTxBucket[string](tx, bn).Set(ctx, "go")
	if !errors.Is(err, ErrTransactionTimeout) {
		t.Fatalf("Set under a Java lock = %v, want ErrTransactionTimeout", err)
	}
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionDone) {
		t.Fatalf("Commit after the timeout = %v, want ErrTransactionDone", err)
	}

	// Released by Java while the Go write waits: the write goes through.
	tx = mustTx(t, c, 30*time.Second)
	done := make(chan error, 1)
	go func() { done <- GetTxBucket[string](tx, bn).Set(ctx, "go") }()
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("Set returned %v while Java held the lock", err)
	default:
	}
	rdb.Del(ctx, lock)
	rdb.Publish(ctx, "redisson_lock__channel:{"+lock+"}", "0")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Set after the Java release: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Set still waiting after the Java release")
	}
	// Now Go holds it: Redisson's acquire gets the remaining lease.
	res, err := rdb.Eval(ctx, redissonTryLock, []string{lock}, 5000, javaField).Int64()
	if err != nil || res <= 0 {
		t.Fatalf("Java acquire under a Go transaction = %v, %v; want its pttl", res, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _ := rdb.Get(ctx, bn).Result(); v != "\xa2go" {
		t.Fatalf("bucket = %q, want \\xa2go", v)
	}
	if res, err := rdb.Eval(ctx, redissonTryLock, []string{lock}, 5000, javaField).Result(); err != redis.Nil {
		t.Fatalf("Java acquire after the commit = %v, %v; want nil (taken)", res, err)
	}
}

// TestTransactionLockLostRefusesCommit checks that a commit whose lock was
// lost (forced open) or whose timeout passed applies nothing.
func TestTransactionLockLostRefusesCommit(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	bn, mn := name+":b", name+":m"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn) })

	tx := mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := GetTxMap[string, string](tx, mn).FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	rdb.Del(ctx, bn+":transaction_lock") // forced open, as ForceUnlock would
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionTimeout) {
		t.Fatalf("Commit with a lost lock = %v, want ErrTransactionTimeout", err)
	}
	if n, _ := rdb.Exists(ctx, bn, mn).Result(); n != 0 {
		t.Fatalf("%d data keys after a refused commit, want 0", n)
	}
	assertNoTxLocks(t, rdb, bn, mn)

	tx = mustTx(t, c, 100*time.Millisecond)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if err := tx.Commit(ctx); !errors.Is(err, ErrTransactionTimeout) {
		t.Fatalf("Commit after the timeout = %v, want ErrTransactionTimeout", err)
	}
	if n, _ := rdb.Exists(ctx, bn).Result(); n != 0 {
		t.Fatal("the bucket was written by a commit after the timeout")
	}
	assertNoTxLocks(t, rdb, bn, mn)
}

// TestTransactionBadInput checks each refusal: a sentinel error, and Redis
// as it was.
func TestTransactionBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	hashKey, strKey := name+":hash", name+":str"
	t.Cleanup(func() { rdb.Del(context.Background(), hashKey, strKey) })
	rdb.HSet(ctx, hashKey, "f", "v")
	rdb.Set(ctx, strKey, "s", 0)
	before := keyState(t, rdb, hashKey) + keyState(t, rdb, strKey)
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.CreateTransaction(TransactionOptions{Timeout: -time.Second}); !errors.Is(err, ErrNegativeDuration) {
		t.Fatalf("negative timeout: %v, want ErrNegativeDuration", err)
	}
	var nilp *int
	cases := []struct {
		what string
		call func(tx *Transaction) error
		want error
	}{
		{"empty bucket name", func(tx *Transaction) error { return GetTxBucket[string](tx, "").Set(ctx, "x") }, ErrEmptyName},
		{"empty map name", func(tx *Transaction) error { _, _, err := GetTxMap[string, string](tx, "").Get(ctx, "k"); return err }, ErrEmptyName},
		{"nil value", func(tx *Transaction) error { return GetTxBucket[*int](tx, strKey).Set(ctx, nilp) }, ErrNilValue},
		{"nil map key", func(tx *Transaction) error {
			_, err := GetTxMap[*int, string](tx, hashKey).FastPut(ctx, nilp, "v")
			return err
		}, ErrNilValue},
		{"bucket read of a hash", func(tx *Transaction) error { _, _, err := GetTxBucket[string](tx, hashKey).Get(ctx); return err }, ErrWrongType},
		{"map write on a string", func(tx *Transaction) error {
			_, _, err := GetTxMap[string, string](tx, strKey).Put(ctx, "k", "v")
			return err
		}, ErrWrongType},
		{"bucket set on a hash, at commit", func(tx *Transaction) error {
			if err := GetTxBucket[string](tx, hashKey).Set(ctx, "x"); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}, ErrWrongType},
		{"one key as two types", func(tx *Transaction) error {
			if err := GetTxBucket[string](tx, name+":both").Set(ctx, "x"); err != nil {
				return err
			}
			_, err := GetTxMap[string, string](tx, name+":both").FastPut(ctx, "k", "v")
			return err
		}, ErrWrongType},
		{"cancelled write", func(tx *Transaction) error { return GetTxBucket[string](tx, strKey).Set(cancelled, "x") }, context.Canceled},
		{"cancelled commit", func(tx *Transaction) error {
			if err := GetTxBucket[string](tx, strKey).Set(ctx, "x"); err != nil {
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
		_ = tx.Rollback(cancelled) // runs within CleanupTimeout all the same
		if after := keyState(t, rdb, hashKey) + keyState(t, rdb, strKey); after != before {
			t.Errorf("%s: Redis changed:\n got %s\nwant %s", tc.what, after, before)
		}
		keys, _ := rdb.Keys(ctx, "*"+strings.TrimPrefix(name, "test:")+"*lock").Result()
		keys = slices.DeleteFunc(keys, func(k string) bool { return strings.HasPrefix(k, "redisson_unlock_latch:") })
		if len(keys) != 0 {
			t.Errorf("%s: locks left: %v", tc.what, keys)
		}
	}
	c2 := newClient(t, rdb, nil)
	tx := mustTx(t, c2, 0)
	c2.Close()
	if err := GetTxBucket[string](tx, strKey).Set(ctx, "x"); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("after Close: %v, want ErrClientClosed", err)
	}
	if _, err := c2.CreateTransaction(TransactionOptions{}); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("CreateTransaction after Close: %v, want ErrClientClosed", err)
	}
}

// TestTransactionCluster checks what holds on Redis Cluster: a transaction
// whose keys share one hash tag commits as on a single node; a bucket
// without one (its lock "<name>:transaction_lock" hashes elsewhere), or a
// second slot, is ErrCrossSlot before anything is locked.
func TestTransactionCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	tag := "{" + uniqueName(t, rdb) + "}"
	bn, mn, other := tag+":b", tag+":m", uniqueName(t, rdb)+":other"
	t.Cleanup(func() { rdb.Del(context.Background(), bn, mn, other) })
	tx := mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, bn).Set(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := GetTxMap[string, string](tx, mn).FastPut(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	if err := GetTxBucket[string](tx, other).Set(ctx, "y"); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a bucket in another slot: %v, want ErrCrossSlot", err)
	}
	if _, err := GetTxMap[string, string](tx, other).FastPut(ctx, "k", "v"); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a map in another slot: %v, want ErrCrossSlot", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if v, _ := rdb.Get(ctx, bn).Result(); v != "\xa1x" {
		t.Fatalf("bucket = %q", v)
	}
	if n, _ := rdb.Exists(ctx, other, other+":transaction_lock").Result(); n != 0 {
		t.Fatal("the refused writes left keys")
	}
	tx = mustTx(t, c, 0)
	if err := GetTxBucket[string](tx, other).Set(ctx, "y"); !errors.Is(err, ErrCrossSlot) {
		t.Fatalf("a bucket without a hash tag: %v, want ErrCrossSlot", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestTransactionSet walks TxSet: Add and Remove are buffered under a lock
// per member ("{<set>}:<member id>:lock"), Contains sees them, Commit
// applies them and Rollback does not.
func TestTransactionSet(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	sn := uniqueName(t, rdb) + ":set"
	t.Cleanup(func() { rdb.Del(context.Background(), sn) })
	if _, err := GetSet[string](c, sn).Add(ctx, "k0"); err != nil {
		t.Fatal(err)
	}
	tx := mustTx(t, c, 0)
	s := GetTxSet[string](tx, sn)
	if ok, err := s.Contains(ctx, "k0"); err != nil || !ok {
		t.Fatalf("Contains(k0) = %v, %v", ok, err)
	}
	if added, err := s.Add(ctx, "k1"); err != nil || !added {
		t.Fatalf("Add(k1) = %v, %v; want true", added, err)
	}
	if added, err := s.Add(ctx, "k1"); err != nil || added {
		t.Fatalf("Add(k1) again = %v, %v; want false", added, err)
	}
	if removed, err := s.Remove(ctx, "k0"); err != nil || !removed {
		t.Fatalf("Remove(k0) = %v, %v; want true", removed, err)
	}
	if ok, err := s.Contains(ctx, "k0"); err != nil || ok {
		t.Fatalf("Contains(k0) after Remove = %v, %v", ok, err)
	}
	for _, lock := range []string{"{" + sn + "}:Rs/5P4hf6WXvQsSyBB5SCA:lock", "{" + sn + "}:wA144YVtu4seDceKm6yNRA:lock"} {
		if n, _ := rdb.Exists(ctx, lock).Result(); n != 1 {
			t.Fatalf("member lock %q missing", lock)
		}
	}
	if got, _ := rdb.SMembers(ctx, sn).Result(); len(got) != 1 || got[0] != "\xa2k0" {
		t.Fatalf("set before Commit = %q", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, _ := rdb.SMembers(ctx, sn).Result(); len(got) != 1 || got[0] != "\xa2k1" {
		t.Fatalf("set after Commit = %q, want [\\xa2k1]", got)
	}
	tx = mustTx(t, c, 0)
	if _, err := GetTxSet[string](tx, sn).Add(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.SCard(ctx, sn).Result(); n != 1 {
		t.Fatalf("set after Rollback has %d members, want 1", n)
	}
	assertNoTxLocks(t, rdb, sn, sn)
}
