package scripting

import (
	"context"
	"errors"
	"testing"
	"time"
)

// RunBatch mixes plain commands and script calls: the script it has not
// seen is loaded first, so the calls run in their order in one pipeline;
// atomic, one MULTI/EXEC with the script sent by EVAL, which works after
// SCRIPT FLUSH without a load; an ended context sends nothing.
func TestRunBatch(t *testing.T) {
	r, rdb, _ := apRunner(t, 0)
	ctx := testCtx(t, 30*time.Second)
	batch := func() []Call {
		return []Call{
			{Args: []any{"set", "rb:n", "10"}},
			{Script: apIncr, Keys: []string{"rb:n"}, Args: []any{"x"}},
			{Args: []any{"get", "rb:n"}},
		}
	}
	check := func(what string, cs []Call, want string) {
		t.Helper()
		vals, err := cs[1].Cmd.Slice()
		if err != nil || len(vals) != 2 || vals[0] != int64(11) {
			t.Fatalf("%s: the script's reply %v, %v; want [11 x]", what, vals, err)
		}
		if got, err := cs[2].Cmd.Text(); err != nil || got != want {
			t.Fatalf("%s: GET after the script = %q, %v; want %q", what, got, err, want)
		}
	}
	cs := batch()
	if err := r.RunBatch(ctx, cs, false); err != nil {
		t.Fatal(err)
	}
	check("pipelined", cs, "11")
	if r.stats().loads != 0 || !r.wasSeen(apIncr) {
		t.Fatalf("loads %d, seen %v: want the script preloaded (no NOSCRIPT load) and seen", r.stats().loads, r.wasSeen(apIncr))
	}

	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	cs = batch()
	if err := r.RunBatch(ctx, cs, true); err != nil {
		t.Fatal(err)
	}
	check("atomic", cs, "11")
	if n := rdb.ScriptExists(ctx, apIncr.SHA()).Val(); len(n) != 1 {
		t.Fatalf("SCRIPT EXISTS: %v", n)
	}

	ended, cancel := context.WithCancel(ctx)
	cancel()
	rdb.Del(ctx, "rb:n")
	cs = batch()
	var notSent NotSentError
	if err := r.RunBatch(ended, cs, false); !errors.As(err, &notSent) || !errors.Is(err, context.Canceled) {
		t.Fatalf("RunBatch on an ended context = %v; want NotSentError", err)
	}
	if cs[0].Cmd != nil || rdb.Exists(ctx, "rb:n").Val() != 0 {
		t.Fatal("a batch on an ended context was sent")
	}
}
