package redisson

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"testing"
	"time"
)

// TestTransactionLocalCachedMap checks that a committed transaction
// invalidates the near caches of every instance of a LocalCachedMap, this
// one's before Commit returns, with Redisson's invalidation message (type
// 1, an instance id, the count, the key hashes); that a rollback publishes
// nothing; and that StoreLocalCacheOnly is refused.
func TestTransactionLocalCachedMap(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	ca, cb := newClient(t, rdb, nil), newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	a := GetLocalCachedMap[string, string](ca, name, LocalCacheOptions{})
	b := GetLocalCachedMap[string, string](cb, name, LocalCacheOptions{})
	defer a.Close()
	defer b.Close()
	waitLive(t, a)
	waitLive(t, b)
	for _, k := range []string{"k1", "k2"} {
		if _, err := a.FastPut(ctx, k, "old"); err != nil {
			t.Fatal(err)
		}
	}
	for _, m := range []*LocalCachedMap[string, string]{a, b} { // cache both keys in both
		eventually(t, 5*time.Second, "cached", func() bool {
			all, err := m.GetAll(ctx, "k1", "k2")
			return err == nil && all["k1"] == "old" && all["k2"] == "old"
		})
	}
	msgs := topicMessages(t, rdb, name)

	tx := mustTx(t, ca, 0)
	m := GetTxLocalCachedMap(tx, a)
	if _, err := m.FastPut(ctx, "k1", "new"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastRemove(ctx, "k2"); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := a.Get(ctx, "k1"); v != "old" {
		t.Fatalf("a.Get(k1) before Commit = %q, want old", v)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v, _, err := a.Get(ctx, "k1"); err != nil || v != "new" {
		t.Fatalf("a.Get(k1) right after Commit = %q, %v; want new", v, err)
	}
	eventually(t, 5*time.Second, "b sees the commit", func() bool {
		v, _, err := b.Get(ctx, "k1")
		_, ok, err2 := b.Get(ctx, "k2")
		return err == nil && err2 == nil && v == "new" && !ok
	})
	msg := nextMessage(t, msgs)
	want := binary.BigEndian.AppendUint32(nil, 2)
	for _, k := range []string{"k1", "k2"} {
		h := keyHash([]byte("\xa2" + k))
		want = append(want, h[:]...)
	}
	if len(msg) != 17+len(want) || msg[0] != 1 || !bytes.Equal(msg[17:], want) {
		t.Fatalf("commit published %x, want 01 <id> %x", msg, want)
	}

	tx = mustTx(t, ca, 0)
	if _, err := GetTxLocalCachedMap(tx, a).FastPut(ctx, "k1", "never"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-msgs:
		t.Fatalf("rollback published %q", m.Payload)
	case <-time.After(200 * time.Millisecond):
	}

	only := GetLocalCachedMap[string, string](ca, name+":only", LocalCacheOptions{StoreMode: StoreLocalCacheOnly})
	defer only.Close()
	if _, err := GetTxLocalCachedMap(tx, only).FastPut(ctx, "k", "v"); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("StoreLocalCacheOnly: %v, want ErrInvalidOption", err)
	}
}
