package redisson

// Interop of ListMultimap and SetMultimap with Java's Redisson, from the
// recording of a real Redisson client
// (testdata/redisson-real/transcripts/RListMultimap_RSetMultimap.md,
// MsgPackJacksonCodec, and StringCodec in step 24). Both ways, on fresh
// names: the stand-in replays what Redis executed for each Java call (the
// plain commands and the scripts' "(lua)" commands, byte for byte) and Go
// reads the result; then Go makes the same calls and must leave the
// recorded keyspace after every step (index hash, ids, values keys), and
// send the recorded command where it uses the same one.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// multimapStep is the Go side of one recorded step: do makes the Java
// call(s) and prints the result as the transcript does (sorted says to
// compare the printed values in any order: a set's); read, when not nil,
// reads what the step left and must print want (sorted too, with
// sorted); a step without read only reads, and the replay side makes it.
type multimapStep struct {
	n      int
	do     func(ctx context.Context) (string, error)
	same   bool // do sends exactly the recorded commands
	sorted bool
	read   func(ctx context.Context) (string, error)
	want   string
}

// javaEntries prints entries as Java's List<Map.Entry> does, keys in the
// order given.
func javaEntries[K comparable, V any](order []K, all map[K][]V, err error) (string, error) {
	var parts []string
	for _, k := range order {
		for _, v := range all[k] {
			parts = append(parts, fmt.Sprintf("%v=%v", k, v))
		}
	}
	return "[" + strings.Join(parts, ", ") + "]", err
}

// sortedJava sorts the elements of each printed Java list in s, for
// results whose order is a set's.
func sortedJava(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '[')
		j := strings.IndexByte(s, ']')
		if i < 0 || j < i {
			b.WriteString(s)
			return b.String()
		}
		parts := strings.Split(s[i+1:j], ", ")
		sort.Strings(parts)
		b.WriteString(s[:i+1] + strings.Join(parts, ", ") + "]")
		s = s[j+1:]
	}
}

// multimapContent is recordedContent, with a hash printed as the
// recording prints it ("field => value" in HGETALL order) and the escapes
// Redis's MONITOR quoting uses for control bytes (\a, \b, ...).
func multimapContent(ctx context.Context, rdb redis.UniversalClient, key string) []string {
	out := recordedContent(ctx, rdb, key)
	if out[0] == "hash" {
		quote := func(s string) string { q := monitorQuote([]string{s}); return q[1 : len(q)-1] }
		var items []string
		for _, f := range rdb.HKeys(ctx, key).Val() { // in the hash's order, as HGETALL's
			items = append(items, quote(f)+" => "+quote(rdb.HGet(ctx, key, f).Val()))
		}
		out[2] = strings.Join(items, "<br>")
	}
	out[2] = strings.NewReplacer(`\x07`, `\a`, `\x08`, `\b`, `\x0a`, `\n`, `\x0d`, `\r`, `\x09`, `\t`).Replace(out[2])
	return out
}

func multimapSteps(c *Client, name map[string]string) []multimapStep {
	lm := GetListMultimap[any, any](c, name["lmm"])
	sm := GetSetMultimap[any, any](c, name["smm"])
	slm := GetListMultimap[string, string](c, name["slmm"], WithCodec(StringCodec{}))
	ok := func(n int64, err error) (string, error) { return fmt.Sprint(n > 0), err }
	lget := func(k any) func(ctx context.Context) (string, error) {
		return func(ctx context.Context) (string, error) { return javaList(lm.Get(ctx, k)) }
	}
	sget := func(ctx context.Context) (string, error) {
		a, err := javaList(sm.Get(ctx, "k1"))
		b, err2 := javaList(sm.Get(ctx, "k2"))
		return a + " " + b, errors.Join(err, err2)
	}
	lentries := func(ctx context.Context) (string, error) {
		keys, err := lm.KeySet(ctx)
		if err != nil {
			return "", err
		}
		all, err := lm.Entries(ctx)
		return javaEntries(keys, all, err)
	}
	return []multimapStep{
		{n: 1, do: func(ctx context.Context) (string, error) { return str(lm.Put(ctx, "k1", "v1")) }, read: lget("k1"), want: "[v1]"},
		{n: 2, do: func(ctx context.Context) (string, error) {
			a, err := lm.Put(ctx, "k1", "v2")
			b, err2 := lm.Put(ctx, "k1", "v1")
			return fmt.Sprint(a, " ", b), errors.Join(err, err2)
		}, read: lget("k1"), want: "[v1, v2, v1]"},
		{n: 3, do: func(ctx context.Context) (string, error) { return ok(lm.PutAll(ctx, "k2", "a", "b")) }, read: lget("k2"), want: "[a, b]"},
		{n: 4, do: func(ctx context.Context) (string, error) { return str(lm.Put(ctx, int64(7), int64(8))) }, read: lget(int64(7)), want: "[8]"},
		{n: 5, do: lget("k1"), same: true},
		{n: 6, do: lget("k1"), same: true},
		{n: 7, do: func(ctx context.Context) (string, error) {
			n, err := lm.Size(ctx)
			k, err2 := lm.ContainsKey(ctx, "k1")
			e, err3 := lm.ContainsEntry(ctx, "k1", "v2")
			// containsValue ("b" under any key) has no Go call: Entries answers it.
			all, err4 := lm.Entries(ctx)
			v := slices.ContainsFunc(slices.Collect(mapValues(all)), func(vs []any) bool { return slices.Contains(vs, any("b")) })
			return fmt.Sprint(n, " ", k, " ", e, " ", v), errors.Join(err, err2, err3, err4)
		}},
		{n: 8, do: func(ctx context.Context) (string, error) { return javaList(lm.KeySet(ctx)) }, same: true},
		{n: 9, do: func(ctx context.Context) (string, error) { return str(lm.KeySize(ctx)) }, same: true},
		{n: 10, do: lentries},
		{n: 11, do: func(ctx context.Context) (string, error) { return str(lm.Remove(ctx, "k1", "v1")) }, read: lget("k1"), want: "[v2, v1]"},
		{n: 12, do: func(ctx context.Context) (string, error) { return javaList(lm.ReplaceValues(ctx, "k2", "c")) }, read: lget("k2"), want: "[c]"},
		{n: 13, do: func(ctx context.Context) (string, error) { return javaList(lm.RemoveAll(ctx, "k2")) }, read: lget("k2"), want: "[]"},
		{n: 14, do: func(ctx context.Context) (string, error) { return str(lm.FastRemove(ctx, int64(7))) }, read: lentries, want: "[k1=v2, k1=v1]"},
		{n: 15, do: func(ctx context.Context) (string, error) {
			a, err := sm.Put(ctx, "k1", "v1")
			b, err2 := sm.Put(ctx, "k1", "v2")
			c, err3 := sm.Put(ctx, "k1", "v1")
			return fmt.Sprint(a, " ", b, " ", c), errors.Join(err, err2, err3)
		}, read: sget, want: "[v1, v2] []", sorted: true},
		{n: 16, do: func(ctx context.Context) (string, error) { return ok(sm.PutAll(ctx, "k2", "a", "b")) }, read: sget, want: "[v1, v2] [a, b]", sorted: true},
		{n: 17, do: sget, same: true, sorted: true},
		{n: 18, do: func(ctx context.Context) (string, error) {
			n, err := sm.Size(ctx)
			e, err2 := sm.ContainsEntry(ctx, "k2", "a")
			return fmt.Sprint(n, " ", e), errors.Join(err, err2)
		}},
		{n: 19, do: func(ctx context.Context) (string, error) { return javaList(sm.KeySet(ctx)) }, same: true},
		{n: 20, do: func(ctx context.Context) (string, error) {
			keys, err := sm.KeySet(ctx)
			if err != nil {
				return "", err
			}
			all, err := sm.Entries(ctx)
			return javaEntries(keys, all, err)
		}, sorted: true},
		{n: 21, do: func(ctx context.Context) (string, error) { return str(sm.Remove(ctx, "k1", "v2")) }, read: sget, want: "[v1] [a, b]", sorted: true},
		{n: 22, do: func(ctx context.Context) (string, error) { return javaList(sm.RemoveAll(ctx, "k2")) }, sorted: true, read: sget, want: "[v1] []"},
		{n: 23, do: func(ctx context.Context) (string, error) {
			a, err := lm.Delete(ctx)
			b, err2 := sm.Delete(ctx)
			return fmt.Sprint(a, " ", b), errors.Join(err, err2)
		}, read: func(ctx context.Context) (string, error) {
			a, err := lm.Size(ctx)
			b, err2 := sm.KeySize(ctx)
			return fmt.Sprint(a, " ", b), errors.Join(err, err2)
		}, want: "0 0"},
		{n: 24, do: func(ctx context.Context) (string, error) { return str(slm.Put(ctx, "k", "v")) },
			read: func(ctx context.Context) (string, error) { return javaList(slm.Get(ctx, "k")) }, want: "[v]"},
	}
}

func mapValues[K comparable, V any](m map[K]V) func(func(V) bool) {
	return func(yield func(V) bool) {
		for _, v := range m {
			if !yield(v) {
				return
			}
		}
	}
}

// TestMultimapRedissonTranscript: RListMultimap_RSetMultimap.md both ways.
func TestMultimapRedissonTranscript(t *testing.T) {
	rec := loadTranscript(t, "RListMultimap_RSetMultimap.md")
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	objects := []string{"lmm", "smm", "slmm"}
	names := func() map[string]string {
		base := uniqueName(t, rdb)
		m := map[string]string{}
		for _, o := range objects {
			m[o] = base + "." + o
		}
		t.Cleanup(func() {
			for _, k := range rdb.Keys(context.Background(), "*"+base+"*").Val() {
				rdb.Del(context.Background(), k)
			}
		})
		return m
	}
	// rename moves a recorded key or argument to the test's names: an
	// object's name, and its hash tag in values keys and prefixes.
	rename := func(name map[string]string, s string) string {
		if n, ok := name[s]; ok {
			return n
		}
		for _, o := range objects {
			s = strings.ReplaceAll(s, "{"+o+"}", "{"+name[o]+"}")
		}
		return s
	}
	checkState := func(what string, name map[string]string, st *transcriptStep) {
		t.Helper()
		if !st.stateOK {
			return
		}
		want := map[string][]string{}
		for k, v := range st.state {
			want[rename(name, k)] = v
		}
		got := map[string][]string{}
		for _, o := range objects {
			for _, k := range rdb.Keys(ctx, "*"+name[o]+"*").Val() {
				got[k] = multimapContent(ctx, rdb, k)
			}
		}
		for k, w := range want {
			if g := got[k]; !slices.Equal(g, w) {
				t.Errorf("%s: after step %d (%s): key %s is %q; the recording has %q", what, st.n, st.title, k, g, w)
			}
		}
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("%s: after step %d (%s): key %s is not in the recording", what, st.n, st.title, k)
			}
		}
	}
	javaValue := func(returns string) string {
		_, v, _ := strings.Cut(returns, ":")
		return v
	}

	t.Run("Java writes, Go reads", func(t *testing.T) {
		name := names()
		for _, gs := range multimapSteps(c, name) {
			st := rec[gs.n]
			for _, cmd := range st.ran {
				args := make([]any, len(cmd))
				for i, a := range cmd {
					args[i] = rename(name, a)
				}
				if err := rdb.Do(ctx, args...).Err(); err != nil && err != redis.Nil {
					t.Fatalf("step %d: replaying %q: %v", gs.n, cmd, err)
				}
			}
			checkState("the replay", name, st)
			if gs.read != nil {
				got, err := gs.read(ctx)
				if gs.sorted {
					got = sortedJava(got)
				}
				if err != nil || got != gs.want {
					t.Errorf("step %d (%s): Go reads %q, %v; want %q", gs.n, st.title, got, err, gs.want)
				}
			} else { // a step that only reads
				got, err := gs.do(ctx)
				want := javaValue(st.returns)
				if gs.sorted {
					got, want = sortedJava(got), sortedJava(want)
				}
				if err != nil || got != want {
					t.Errorf("step %d (%s): Go reads %q, %v; Java returned %q", gs.n, st.title, got, err, want)
				}
			}
		}
	})

	t.Run("Go writes what Java wrote", func(t *testing.T) {
		name := names()
		log := newCmdLog(rdb)
		for _, gs := range multimapSteps(c, name) {
			st := rec[gs.n]
			log.take()
			got, err := gs.do(ctx)
			sent := log.take()
			want := javaValue(st.returns)
			if gs.sorted {
				got, want = sortedJava(got), sortedJava(want)
			}
			if err != nil || got != want {
				t.Errorf("step %d (%s): Go returns %q, %v; Java returned %q", gs.n, st.title, got, err, want)
			}
			if gs.same {
				var w [][]string
				for _, cmd := range st.sent {
					r := make([]string, len(cmd))
					for i, a := range cmd {
						r[i] = rename(name, a)
					}
					w = append(w, r)
				}
				if !sameCommands(sent, w) {
					t.Errorf("step %d (%s): Go sent\n%s\nRedisson sent\n%s", gs.n, st.title, quoteAll(sent), quoteAll(w))
				}
			}
			checkState("Go", name, st)
		}
	})
}
