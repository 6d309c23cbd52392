package redisson

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Messages a real Redisson client published on {lcm}:topic and {lcu}:topic
// (testdata/redisson-real, transcripts/RLocalCachedMap.md), with
// MsgPackJacksonCodec: "k1" is a2 6b 31, "v1" a2 76 31.
const (
	javaInvalidateK1 = "01688d807b7697a0a23d23619cdccf6b860000000146cff93f885fe965ef42c4b2041e5208"
	javaUpdateK1V2   = "024558c8d02eb622dd7a716272c23d8f0600000003a26b3100000003a27632"
	javaClearAck     = "0074816c5d1d00308ab10c3eb6ffa2dd0b8a656eb687d8e1abe8ab62afdafde55a01"
	javaClear        = "00688d807b7697a0a23d23619cdccf6b8690d7504942c8ba0fb0fc6ffcd702a0ed00"
	javaPutAllK3K4   = "01688d807b7697a0a23d23619cdccf6b8600000002" +
		"ebe6f13a2ebc26eabe17ddd4acb6fe55" + "4f06a0b5ce842a4ddce326dd3f51ec13"
	javaUpdateK1V1 = "024558c8d02eb622dd7a716272c23d8f0600000003a26b3100000003a27631"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLocalCachedMapKeyHashMatchesRedisson checks keyHash against the
// HighwayHash vectors recorded from Redisson's Hash.hash128toArray.
func TestLocalCachedMapKeyHashMatchesRedisson(t *testing.T) {
	raw, err := os.ReadFile("testdata/redisson-real/codecs.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hash struct {
			Cases []struct {
				Input string `json:"input"`
				In    string `json:"input_hex"`
				Out   string `json:"hash128toArray_hex"`
			} `json:"cases"`
		} `json:"localcache_key_hash"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Hash.Cases) < 8 {
		t.Fatalf("%d vectors, want at least 8", len(doc.Hash.Cases))
	}
	for _, c := range doc.Hash.Cases {
		h := keyHash(unhex(t, c.In))
		if got := hex.EncodeToString(h[:]); got != c.Out {
			t.Errorf("keyHash(%s) = %s, want %s", c.Input, got, c.Out)
		}
	}
}

// topicMessages subscribes a plain go-redis client to the map's channel and
// returns its messages.
func topicMessages(t *testing.T, rdb *redis.Client, name string) <-chan *redis.Message {
	t.Helper()
	ps := rdb.Subscribe(context.Background(), suffixName(name, "topic"))
	t.Cleanup(func() { ps.Close() })
	if _, err := ps.Receive(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ps.Channel()
}

func nextMessage(t *testing.T, ch <-chan *redis.Message) []byte {
	t.Helper()
	select {
	case m := <-ch:
		return []byte(m.Payload)
	case <-time.After(5 * time.Second):
		t.Fatal("no message on the map's channel")
	}
	return nil
}

// TestLocalCachedMapWritesPublishRedissonMessages checks the bytes Go
// writes publish against the recorded ones: the same layout and key
// hashes, with this instance's id in place of the Java instance's.
func TestLocalCachedMapWritesPublishRedissonMessages(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	check := func(what string, got, want []byte) {
		t.Helper()
		if len(got) != len(want) || got[0] != want[0] || !bytes.Equal(got[17:], want[17:]) {
			t.Fatalf("%s published %x, want %x (any instance id)", what, got, want)
		}
	}

	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	msgs := topicMessages(t, rdb, name)
	m := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{})
	defer m.Close()
	if _, _, err := m.Put(ctx, "k1", "v1"); err != nil {
		t.Fatal(err)
	}
	inv := nextMessage(t, msgs)
	check("Put(k1)", inv, unhex(t, javaInvalidateK1))
	if _, err := m.FastPut(ctx, "k1", "v2"); err != nil {
		t.Fatal(err)
	}
	check("FastPut(k1)", nextMessage(t, msgs), unhex(t, javaInvalidateK1))
	if _, _, err := m.Remove(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	check("Remove(k1)", nextMessage(t, msgs), unhex(t, javaInvalidateK1))
	if err := m.PutAll(ctx, map[string]string{"k3": "v3", "k4": "v4"}); err != nil {
		t.Fatal(err)
	}
	got, want := nextMessage(t, msgs), unhex(t, javaPutAllK3K4)
	if len(got) != len(want) || !bytes.Equal(got[17:21], want[17:21]) ||
		!(bytes.Equal(got[21:], want[21:]) || bytes.Equal(got[21:], append(append([]byte{}, want[37:]...), want[21:37]...))) {
		t.Fatalf("PutAll(k3, k4) published %x, want %x (any instance id, any key order)", got, want)
	}
	if _, err := m.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	clr := nextMessage(t, msgs)
	if len(clr) != 34 || clr[0] != 0 || clr[33] != 0 || !bytes.Equal(clr[1:17], inv[1:17]) {
		t.Fatalf("Delete published %x, want the layout of %s", clr, javaClear)
	}

	// SyncUpdate carries the key and the value.
	name = uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	msgs = topicMessages(t, rdb, name)
	u := GetLocalCachedMap[string, string](c, name, LocalCacheOptions{SyncStrategy: SyncUpdate})
	defer u.Close()
	if _, _, err := u.Put(ctx, "k1", "v1"); err != nil {
		t.Fatal(err)
	}
	check("SyncUpdate Put(k1, v1)", nextMessage(t, msgs), unhex(t, javaUpdateK1V1))
	if _, err := u.FastRemove(ctx, "k1"); err != nil {
		t.Fatal(err)
	}
	check("SyncUpdate FastRemove(k1)", nextMessage(t, msgs), unhex(t, javaInvalidateK1))
}

// cachedReady returns a map on its own client whose subscription is
// confirmed, with k1 = v1 in Redis (written with a raw HSET) and cached.
func cachedReady(t *testing.T, rdb *redis.Client, name string, o LocalCacheOptions) *LocalCachedMap[string, string] {
	t.Helper()
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	m := GetLocalCachedMap[string, string](c, name, o)
	t.Cleanup(func() { m.Close() })
	if err := rdb.HSet(ctx, name, "\xa2k1", "\xa2v1").Err(); err != nil {
		t.Fatal(err)
	}
	waitLive(t, m)
	if v, _, err := m.Get(ctx, "k1"); err != nil || v != "v1" {
		t.Fatalf("Get(k1) = %q, %v; want v1", v, err)
	}
	// Redis changes behind the cache's back (no message): the cache answers.
	if err := rdb.HSet(ctx, name, "\xa2k1", "\xa2v0").Err(); err != nil {
		t.Fatal(err)
	}
	if v, _, err := m.Get(ctx, "k1"); err != nil || v != "v1" {
		t.Fatalf("Get(k1) after a silent HSET = %q, %v; want the cached v1", v, err)
	}
	return m
}

// waitLive waits until the map's subscription is confirmed and its cache
// serves.
func waitLive[K comparable, V any](t testing.TB, m *LocalCachedMap[K, V]) {
	t.Helper()
	if _, err := m.ContainsKey(testCtx(t, time.Minute), *new(K)); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "local cache serving", func() bool { return m.n.Load().live.Load() })
}

// TestLocalCachedMapAppliesRedissonMessages publishes the recorded Java
// messages and checks their effect on a Go instance.
func TestLocalCachedMapAppliesRedissonMessages(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)

	t.Run("invalidate", func(t *testing.T) {
		name := uniqueName(t, rdb)
		m := cachedReady(t, rdb, name, LocalCacheOptions{})
		rdb.Publish(ctx, suffixName(name, "topic"), unhex(t, javaInvalidateK1))
		eventually(t, 5*time.Second, "k1 invalidated", func() bool {
			v, _, err := m.Get(ctx, "k1")
			return err == nil && v == "v0"
		})
	})
	t.Run("update", func(t *testing.T) {
		name := uniqueName(t, rdb)
		m := cachedReady(t, rdb, name, LocalCacheOptions{SyncStrategy: SyncUpdate})
		// v2 is in no Redis key: only the message's value can answer it. The
		// message is sent again at every look: a loss the map detects in
		// between (a health check late on a loaded machine) rightly clears
		// the cache, and only a later message can bring v2 back.
		msg := unhex(t, javaUpdateK1V2)
		eventually(t, 5*time.Second, "k1 updated to v2", func() bool {
			rdb.Publish(ctx, suffixName(name, "topic"), msg)
			v, _, err := m.Get(ctx, "k1")
			return err == nil && v == "v2"
		})
	})
	t.Run("clear", func(t *testing.T) {
		name := uniqueName(t, rdb)
		m := cachedReady(t, rdb, name, LocalCacheOptions{})
		rdb.Publish(ctx, suffixName(name, "topic"), unhex(t, javaClear))
		eventually(t, 5*time.Second, "cache cleared", func() bool {
			v, _, err := m.Get(ctx, "k1")
			return err == nil && v == "v0"
		})
	})
	t.Run("clearLocalCache acknowledged", func(t *testing.T) {
		name := uniqueName(t, rdb)
		m := cachedReady(t, rdb, name, LocalCacheOptions{})
		counter := name + ":clear:8a656eb687d8e1abe8ab62afdafde55a"
		t.Cleanup(func() { rdb.Del(context.Background(), counter) })
		rdb.Set(ctx, counter, 0, time.Minute)
		rdb.Publish(ctx, suffixName(name, "topic"), unhex(t, javaClearAck))
		eventually(t, 5*time.Second, "the clear acknowledged", func() bool {
			n, err := rdb.Get(ctx, counter).Int()
			return err == nil && n == 1
		})
		if v, _, err := m.Get(ctx, "k1"); err != nil || v != "v0" {
			t.Fatalf("Get(k1) after clearLocalCache = %q, %v; want v0 from Redis", v, err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		name := uniqueName(t, rdb)
		m := cachedReady(t, rdb, name, LocalCacheOptions{})
		bad := unhex(t, javaInvalidateK1)
		rdb.Publish(ctx, suffixName(name, "topic"), bad[:len(bad)-3]) // a cut message clears
		eventually(t, 5*time.Second, "cache cleared", func() bool {
			v, _, err := m.Get(ctx, "k1")
			return err == nil && v == "v0"
		})
	})
}
