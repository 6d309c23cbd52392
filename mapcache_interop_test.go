package redisson

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The entries of the recording (transcripts/RMapCache.md), as Redisson
// stored them with MsgPackJacksonCodec.
const (
	recEntryV1   = "\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\xa2v1"               // "v1", no max idle
	recEntryV1b  = "\x00\x00\x00\x00\x00\x00\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\xa3v1b"              // "v1b"
	recEntryV2   = "\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\xa2v2"               // "v2"
	recEntryV3   = "\x00\x00\x00\x00\x00p\x97@\x03\x00\x00\x00\x00\x00\x00\x00\xa2v3"                     // "v3", max idle 1500ms
	recEntryL42  = "\x00\x00\x00\x00\x00\x88\xb3@\x11\x00\x00\x00\x00\x00\x00\x00\x92\xaejava.lang.Long*" // 42L, max idle 5000ms
	recEntryV5   = "\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x00\x00\x00\x00\xa2v5"               // "v5"
	recEntryFoot = "\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x01"                 // 1 (an Integer)
)

// serverMillis returns the server's clock in ms.
func serverMillis(t *testing.T, ctx context.Context, rdb redis.UniversalClient) float64 {
	t.Helper()
	now, err := rdb.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	return float64(now.UnixMilli())
}

// TestMapCacheWritesRedissonLayout checks that this library's writes leave
// the recorded bytes and scores of the same Java calls: entries (header and
// value), the timeout and idle zsets, and the options hash.
func TestMapCacheWritesRedissonLayout(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	keys := mapCacheKeys(name)
	m := GetMapCache[string, any](c, name)
	before := serverMillis(t, ctx, rdb)
	for _, put := range []struct {
		k            string
		v            any
		ttl, maxIdle time.Duration
	}{
		{"k1", "v1", 0, 0},                                   // m.put("k1", "v1")
		{"k2", "v2", 2 * time.Second, 0},                     // m.put("k2", "v2", 2, SECONDS)
		{"k3", "v3", 0, 1500 * time.Millisecond},             // m.put("k3", "v3", 0, SECONDS, 1500, MILLISECONDS)
		{"k4", int64(42), 10 * time.Second, 5 * time.Second}, // m.put("k4", 42L, 10, SECONDS, 5, SECONDS)
	} {
		if _, _, err := m.PutWithTTL(ctx, put.k, put.v, put.ttl, put.maxIdle); err != nil {
			t.Fatalf("PutWithTTL(%s): %v", put.k, err)
		}
	}
	after := serverMillis(t, ctx, rdb)
	want := map[string]string{"\xa2k1": recEntryV1, "\xa2k2": recEntryV2, "\xa2k3": recEntryV3, "\xa2k4": recEntryL42}
	if got := rdb.HGetAll(ctx, name).Val(); !maps.Equal(got, want) {
		t.Errorf("hash = %q,\nwant the recorded %q", got, want)
	}
	scores := func(key string) map[string]float64 {
		out := map[string]float64{}
		for _, z := range rdb.ZRangeWithScores(ctx, key, 0, -1).Val() {
			out[fmt.Sprint(z.Member)] = z.Score
		}
		return out
	}
	within := func(what string, got, offset float64) {
		t.Helper()
		if got < before+offset || got > after+offset {
			t.Errorf("%s = %v, want now + %v (between %v and %v)", what, got, offset, before+offset, after+offset)
		}
	}
	timeouts, idles := scores(keys[mcTimeout]), scores(keys[mcIdle])
	if len(timeouts) != 2 || len(idles) != 2 {
		t.Fatalf("timeout zset %v, idle zset %v: want k2, k4 and k3, k4", timeouts, idles)
	}
	within("k2's expiry", timeouts["\xa2k2"], 2000)
	within("k4's expiry", timeouts["\xa2k4"], 10000)
	within("k3's idle deadline", idles["\xa2k3"], 1500)
	within("k4's idle deadline", idles["\xa2k4"], 5000)

	// put without TTL clears k2's expiry, as Redisson's put does.
	if old, ok, err := m.Put(ctx, "k2", "v2"); err != nil || !ok || old != "v2" {
		t.Fatalf("Put(k2) = %v, %v, %v", old, ok, err)
	}
	if _, ok := scores(keys[mcTimeout])["\xa2k2"]; ok {
		t.Errorf("k2 still has an expiry after Put without TTL")
	}

	if err := m.SetMaxSize(ctx, 2); err != nil {
		t.Fatal(err)
	}
	stop, err := m.OnRemoved(ctx, func(MapCacheEvent[string, any]) {})
	if err != nil {
		t.Fatal(err)
	}
	stop()
	wantOpts := map[string]string{"max-size": "2", "mode": "LRU", "has-listeners": "1"}
	if got := rdb.HGetAll(ctx, keys[mcOptions]).Val(); !maps.Equal(got, wantOpts) {
		t.Errorf("options = %v, want %v", got, wantOpts)
	}
	for _, k := range keys[:mcCreated] {
		if d := rdb.PTTL(ctx, k).Val(); d != -1*time.Nanosecond && k != keys[mcLastAccess] { // no last access yet
			t.Errorf("%s has PTTL %v; Redisson's keys have none", k, d)
		}
	}
}

// TestMapCacheReadsRedissonLayout writes what a Java Redisson client leaves
// (the recording's entries, scores moved to the server's present) and
// checks what this library reads: live entries, no expired ones, and the
// idle deadline moved by the entry's own max idle.
func TestMapCacheReadsRedissonLayout(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	keys := mapCacheKeys(name)
	now := serverMillis(t, ctx, rdb)
	rdb.HSet(ctx, name, "\xa2k1", recEntryV1b, "\xa2k2", recEntryV2, "\xa2k3", recEntryV3, "\xa2k4", recEntryL42,
		"\xa2k5", recEntryV5, "\xa1a", recEntryFoot)
	rdb.ZAdd(ctx, keys[mcTimeout], redis.Z{Score: now + 60000, Member: "\xa2k2"}, redis.Z{Score: now + 60000, Member: "\xa2k4"},
		redis.Z{Score: now - 1, Member: "\xa2k5"}) // k5's TTL ran out
	rdb.ZAdd(ctx, keys[mcIdle], redis.Z{Score: now + 1000, Member: "\xa2k3"}, redis.Z{Score: now - 1, Member: "\xa2k4"}) // k4 idled out
	m := GetMapCache[string, any](c, name)

	want := map[string]any{"k1": "v1b", "k2": "v2", "k3": "v3", "a": int64(1)}
	all, err := m.ReadAll(ctx)
	if err != nil || len(all) != len(want) {
		t.Fatalf("ReadAll = %v, %v; want %v", all, err, want)
	}
	for k, v := range want {
		if fmt.Sprint(all[k]) != fmt.Sprint(v) {
			t.Errorf("ReadAll[%s] = %v, want %v", k, all[k], v)
		}
	}
	before := serverMillis(t, ctx, rdb)
	if v, ok, err := m.Get(ctx, "k3"); err != nil || !ok || v != "v3" {
		t.Fatalf("Get(k3) = %v, %v, %v", v, ok, err)
	}
	after := serverMillis(t, ctx, rdb)
	if s := rdb.ZScore(ctx, keys[mcIdle], "\xa2k3").Val(); s < before+1500 || s > after+1500 {
		t.Errorf("k3's idle deadline after Get = %v, want now + its max idle 1500 ms (%v..%v)", s, before+1500, after+1500)
	}
	for _, k := range []string{"k4", "k5"} {
		if v, ok, err := m.Get(ctx, k); err != nil || ok {
			t.Errorf("Get(%s), expired = %v, %v, %v; want absent", k, v, ok, err)
		}
	}
	// A Long from Java reads as an int64 into an int64 map, too.
	rdb.HSet(ctx, name, "\xa2k6", recEntryL42)
	if v, ok, err := GetMapCache[string, int64](c, name).Get(ctx, "k6"); err != nil || !ok || v != 42 {
		t.Errorf("Get(k6) as int64 = %v, %v, %v; want 42", v, ok, err)
	}
}

// TestMapCacheMalformedEntry checks that an entry too short for its header
// is an ErrCodec error, never a value.
func TestMapCacheMalformedEntry(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	rdb.HSet(ctx, name, "\xa1a", "\xa1x", "\xa1b", "\x00\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x00\x00\x00\x00\xa1x")
	m := GetMapCache[string, string](c, name)
	for _, k := range []string{"a", "b"} {
		if v, ok, err := m.Get(ctx, k); !isCodecErr(err) || ok {
			t.Errorf("Get(%s) of a malformed entry = %q, %v, %v; want ErrCodec", k, v, ok, err)
		}
	}
	if all, err := m.ReadAll(ctx); !isCodecErr(err) {
		t.Errorf("ReadAll of malformed entries = %v, %v; want ErrCodec", all, err)
	}
}

func isCodecErr(err error) bool { return errors.Is(err, ErrCodec) }
