package redisson

// Interop of Batch with Java's Redisson, from the recording of a real
// Redisson client (testdata/redisson-real/transcripts/RBatch.md,
// MsgPackJacksonCodec): a default batch, an IN_MEMORY_ATOMIC one and a
// skipResult one. Java writes, Go reads: the commands Redis executed for
// each Java batch are replayed byte for byte and a Go batch reads them.
// Go writes: Go batches make the same calls on fresh keys, and must leave
// the recorded keyspace after every step and send the recorded plain
// commands where they use the same ones (GET, HGET, RPUSH, MULTI/EXEC).

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestBatchTranscriptCurrent(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join(sharedTranscripts, "RBatch.md"))
	if os.IsNotExist(err) {
		t.Logf("%s is not beside this checkout: nothing to compare the copy with", sharedTranscripts)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	copied, err := os.ReadFile(filepath.Join(recordedTranscripts, "RBatch.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, copied) {
		t.Error("RBatch.md differs from the shared recording: copy it again")
	}
}

// batchContent prints a key as the recording's state tables do: type,
// PTTL in ms, and content (a string's bytes, a hash's "field => value", a
// list's elements) in MONITOR quoting.
func batchContent(ctx context.Context, rdb redis.UniversalClient, key string) []string {
	out := recordedContent(ctx, rdb, key)
	quote := func(s string) string { q := monitorQuote([]string{s}); return q[1 : len(q)-1] }
	switch out[0] {
	case "string":
		out[2] = quote(rdb.Get(ctx, key).Val())
	case "hash":
		var items []string
		for f, v := range rdb.HGetAll(ctx, key).Val() {
			items = append(items, quote(f)+" => "+quote(v))
		}
		slices.Sort(items)
		out[2] = strings.Join(items, "<br>")
	}
	return out
}

func TestBatchRedissonTranscript(t *testing.T) {
	rec := loadTranscript(t, "RBatch.md")
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	recorded := []string{"b1", "b2", "bal", "bl", "bm"}
	names := func() map[string]string {
		base := uniqueName(t, rdb)
		m := map[string]string{}
		for _, k := range recorded {
			m[k] = base + ":" + k
			t.Cleanup(func() { rdb.Del(context.Background(), m[k]) })
		}
		return m
	}
	checkState := func(what string, key map[string]string, n int) {
		t.Helper()
		st := rec[n]
		if st == nil || !st.stateOK {
			return
		}
		for _, k := range recorded {
			want, ok := st.state[k]
			if !ok {
				want = []string{"none", "-2", ""}
			}
			if got := batchContent(ctx, rdb, key[k]); !slices.Equal(got, want) {
				t.Errorf("%s: after step %d (%s): key %s is %q; the recording has %q", what, n, st.title, k, got, want)
			}
		}
	}
	returns := func(n int) string {
		_, v, _ := strings.Cut(rec[n].returns, ":")
		return v
	}
	javaValue := func(f interface{ Err() error }, v any, found bool) string {
		switch {
		case f.Err() != nil:
			return f.Err().Error()
		case !found:
			return "null"
		}
		return fmt.Sprint(v)
	}

	t.Run("Java writes, Go reads", func(t *testing.T) {
		key := names()
		for n := 1; n <= 3; n++ {
			for _, cmd := range rec[n].ran {
				if u := strings.ToUpper(cmd[0]); u == "MULTI" || u == "EXEC" {
					continue // the commands between run alone: the same writes
				}
				if err := rdb.Do(ctx, anys(renameStrings(key, cmd))...).Err(); err != nil && err != redis.Nil {
					t.Fatalf("step %d: replaying %q: %v", n, cmd, err)
				}
			}
			checkState("the replay", key, n)
		}
		b := c.CreateBatch()
		s := GetBatchBucket[string](b, key["b1"]).Get()
		l := GetBatchBucket[int64](b, key["b2"]).Get()
		al := b.GetAtomicLong(key["bal"]).Get()
		e := GetBatchList[int64](b, key["bl"]).Get(0)
		m := GetBatchMap[string, string](b, key["bm"]).Get("k")
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		eq(t, "bucket b1", s, "v", true)
		eq(t, "bucket b2", l, 1, true)
		eq(t, "atomic long bal", al, 12, true)
		eq(t, "list bl", e, 1, true)
		eq(t, "map bm", m, "v", true)
	})

	t.Run("Go writes what Java wrote", func(t *testing.T) {
		key := names()
		log := newCmdLog(rdb)
		sentPlain := func(n int, sent [][]string, which ...string) {
			t.Helper()
			for _, cmd := range rec[n].sent {
				if !slices.Contains(which, strings.ToUpper(cmd[0])) {
					continue
				}
				want := renameStrings(key, cmd)
				if !slices.ContainsFunc(sent, func(g []string) bool { return sameCommands([][]string{g}, [][]string{want}) }) {
					t.Errorf("step %d: Go did not send %s; it sent\n%s", n, monitorQuote(want), quoteAll(sent))
				}
			}
		}

		b := c.CreateBatch()
		set := GetBatchBucket[string](b, key["b1"]).Set("v")
		put := GetBatchMap[string, string](b, key["bm"]).Put("k", "v")
		inc := b.GetAtomicLong(key["bal"]).IncrementAndGet()
		add := GetBatchList[int64](b, key["bl"]).Add(1)
		log.take()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprintf("[%s, %s, %s, %s]", javaValue(set, nil, false), javaValue(put, put.Value(), put.Found()),
			javaValue(inc, inc.Value(), true), javaValue(add, add.Value() > 0, true))
		if want := returns(1); got != want {
			t.Errorf("step 1: Go returns %s; Java returned %s", got, want)
		}
		sentPlain(1, log.take(), "RPUSH")
		checkState("Go", key, 1)

		b = c.CreateBatch(BatchAtomic())
		get := GetBatchBucket[string](b, key["b1"]).Get()
		add10 := b.GetAtomicLong(key["bal"]).AddAndGet(10)
		hget := GetBatchMap[string, string](b, key["bm"]).Get("k")
		log.take()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		got = fmt.Sprintf("[%s, %s, %s]", javaValue(get, get.Value(), get.Found()), javaValue(add10, add10.Value(), true),
			javaValue(hget, hget.Value(), hget.Found()))
		if want := returns(2); got != want {
			t.Errorf("step 2: Go returns %s; Java returned %s", got, want)
		}
		sent := log.take()
		if len(sent) != 5 || sent[0][0] != "MULTI" || sent[4][0] != "EXEC" {
			t.Errorf("step 2: Go sent\n%s; want MULTI, three calls, EXEC", quoteAll(sent))
		}
		sentPlain(2, sent, "GET", "HGET")
		checkState("Go", key, 2)

		b = c.CreateBatch(BatchSkipResults())
		GetBatchBucket[int64](b, key["b2"]).Set(1)
		b.GetAtomicLong(key["bal"]).IncrementAndGet()
		if err := b.Execute(ctx); err != nil {
			t.Fatal(err)
		}
		checkState("Go", key, 3)
	})
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
