package redisson

// Interop of SetCache with Java's Redisson, from the recording of a real
// Redisson client (testdata/redisson-real/transcripts/RSetCache.md,
// MsgPackJacksonCodec). Redisson scores members by its own clock, so the
// stand-in replays the recorded commands with the recorded expiries moved
// to the server's clock: the same member bytes, the same no-TTL score, the
// same TTL.

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The score Redisson stores for a member without TTL (it sends
// 92231924252552169; a double cannot hold it).
const setCacheNoTTLScore = 92231924252552176.0

// TestMultimapAndSetCacheTranscriptsCurrent: the copies in testdata are the
// shared recordings.
func TestMultimapAndSetCacheTranscriptsCurrent(t *testing.T) {
	for _, f := range []string{"RSetCache.md", "RListMultimap_RSetMultimap.md"} {
		shared, err := os.ReadFile(filepath.Join(sharedTranscripts, f))
		if os.IsNotExist(err) {
			t.Logf("%s is not beside this checkout: nothing to compare the copy with", sharedTranscripts)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		copied, err := os.ReadFile(filepath.Join(recordedTranscripts, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(shared, copied) {
			t.Errorf("%s differs from the shared recording: copy it again", f)
		}
	}
}

// TestSetCacheReadsRedissonWrites replays what Redisson's scripts ran for
// add("a") and add("b", 1s) (steps 1 and 2), expiries moved to now, and
// reads them back as the Java calls of steps 3 to 6 did.
func TestSetCacheReadsRedissonWrites(t *testing.T) {
	rec := loadTranscript(t, "RSetCache.md")
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	now := serverMillis(t, ctx, rdb)
	for _, n := range []int{1, 2} {
		sent := rec[n].sent[len(rec[n].sent)-1] // EVALSHA sha 1 sc now expiry member
		clientNow, _ := strconv.ParseInt(sent[4], 10, 64)
		for _, cmd := range rec[n].ran {
			if cmd[0] != "zadd" {
				continue
			}
			score := cmd[2]
			if expiry, _ := strconv.ParseInt(score, 10, 64); expiry < 1e16 { // a TTL: as far from now as from the client's now
				score = strconv.FormatInt(int64(now)+expiry-clientNow, 10)
			}
			if err := rdb.Do(ctx, "zadd", name, score, cmd[3]).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := rdb.ZScore(ctx, name, "\xa1a").Val(); got != setCacheNoTTLScore {
		t.Errorf("replayed no-TTL score %v; the recording has %v", got, setCacheNoTTLScore)
	}
	s := GetSetCache[string](c, name)
	if ok, err := s.Contains(ctx, "b"); err != nil || !ok { // step 3
		t.Errorf("Contains(b) = %v, %v; Java returned true", ok, err)
	}
	n, err := s.Size(ctx) // step 4: "2 [b, a]"
	all, err2 := s.ReadAll(ctx)
	if err != nil || err2 != nil || n != 2 || !slices.Equal(all, []string{"b", "a"}) {
		t.Errorf("Size, ReadAll = %d %q (%v, %v); Java returned 2 [b, a]", n, all, err, err2)
	}
	time.Sleep(1200 * time.Millisecond) // step 5
	if ok, err := s.Contains(ctx, "b"); err != nil || ok {
		t.Errorf("Contains(b) after 1.2s = %v, %v; Java returned false", ok, err)
	}
	log := newCmdLog(rdb)
	if ok, err := s.Remove(ctx, "a"); err != nil || !ok { // step 6
		t.Errorf("Remove(a) = %v, %v; Java returned true", ok, err)
	}
	want := renameStrings(map[string]string{"sc": name}, rec[6].sent[0])
	if sent := log.take(); !sameCommands(sent, [][]string{want}) {
		t.Errorf("Remove sent %q; Redisson sent %q", sent, want)
	}
	if z := rdb.ZRangeWithScores(ctx, name, 0, -1).Val(); len(z) != 1 || z[0].Member != "\xa1b" {
		t.Errorf("after Remove the zset is %v; the recording has only b (expired, not evicted)", z)
	}
}

// TestSetCacheWritesWhatRedissonReads makes the Java calls of steps 1 and
// 2 from Go and checks the zset the recording shows, then reads it as
// Redisson's contains and readAll do (ZSCORE above the client's now;
// ZRANGEBYSCORE now 92233720368547758).
func TestSetCacheWritesWhatRedissonReads(t *testing.T) {
	rec := loadTranscript(t, "RSetCache.md")
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, time.Hour)
	ctx := testCtx(t, time.Minute)
	name := setCacheName(t, rdb)
	s := GetSetCache[any](c, name)
	before := serverMillis(t, ctx, rdb)
	if ok, err := s.Add(ctx, "a"); err != nil || !ok {
		t.Fatalf("Add(a) = %v, %v", ok, err)
	}
	if ok, err := s.AddWithTTL(ctx, "b", time.Second); err != nil || !ok {
		t.Fatalf("AddWithTTL(b) = %v, %v", ok, err)
	}
	after := serverMillis(t, ctx, rdb)
	want := rec[2].state["sc"] // zset -1 "\xa1b @ <expiry><br>\xa1a @ 92231924252552176"
	got := recordedContent(ctx, rdb, name)
	if got[0] != want[0] || got[1] != want[1] {
		t.Errorf("type, pttl %q; the recording has %q", got[:2], want[:2])
	}
	z := rdb.ZRangeWithScores(ctx, name, 0, -1).Val()
	if len(z) != 2 || z[0].Member != "\xa1b" || z[1].Member != "\xa1a" || z[1].Score != setCacheNoTTLScore {
		t.Fatalf("zset %v; want \\xa1b with an expiry, \\xa1a at %v", z, setCacheNoTTLScore)
	}
	if e := z[0].Score; e < before+1000 || e > after+1000 {
		t.Errorf("b expires at %v; want now + 1000ms, in [%v, %v]", e, before+1000, after+1000)
	}
	now := strconv.FormatInt(int64(serverMillis(t, ctx, rdb)), 10)
	// Redisson's readAll (step 4): ZRANGEBYSCORE sc <now> 92233720368547758.
	readAll := renameStrings(map[string]string{"sc": name}, rec[4].sent[len(rec[4].sent)-1])
	readAll[2] = now
	args := make([]any, len(readAll))
	for i, a := range readAll {
		args[i] = a
	}
	members, err := rdb.Do(ctx, args...).StringSlice()
	if err != nil || !slices.Equal(members, []string{"\xa1b", "\xa1a"}) {
		t.Errorf("Redisson's readAll %q reads %q, %v; want [b a]", readAll, members, err)
	}
	if sc, err := rdb.ZScore(ctx, name, "\xa1b").Result(); err != nil || sc <= float64(mustAtoi(t, now)) {
		t.Errorf("Redisson's contains(b) sees score %v (now %s): not live", sc, now)
	}
	if _, err := rdb.ZScore(ctx, name, "\xa1zz").Result(); err != redis.Nil {
		t.Errorf("an absent member: %v", err)
	}
}

func mustAtoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
