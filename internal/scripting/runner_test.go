package scripting

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// tripKey is the context key of a test call's round-trip counter.
type tripKey struct{}

// tripsCtx returns ctx carrying a counter countTrips adds to.
func tripsCtx(ctx context.Context) (context.Context, *atomic.Int32) {
	n := new(atomic.Int32)
	return context.WithValue(ctx, tripKey{}, n), n
}

// countTrips is a Config.CountTrips: it counts into the ctx's counter.
func countTrips(ctx context.Context, n int) {
	if c, ok := ctx.Value(tripKey{}).(*atomic.Int32); ok {
		c.Add(int32(n))
	}
}

// A script the server has not seen is loaded on NOSCRIPT and the call
// retried once; nothing but EVALSHA and SCRIPT LOAD reaches the server, and
// each load counts its round trips. Reloaded is told of the load after
// SCRIPT FLUSH only: the first load of a script is no reload.
func TestRunLoadsOnNoScript(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	var reloaded []string
	var mu sync.Mutex
	r := NewRunner(Config{Redis: rdb, Lanes: 4, CountTrips: countTrips, Reloaded: func(name string) {
		mu.Lock()
		reloaded = append(reloaded, name)
		mu.Unlock()
	}})
	ctx := testCtx(t, 30*time.Second)
	s := New("test_echo", "return ARGV[1]\n")
	for i, flush := range []bool{false, false, true} {
		if flush {
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		cctx, trips := tripsCtx(ctx)
		v, err := r.Run(cctx, s, nil, "hi").Text()
		if err != nil || v != "hi" {
			t.Fatalf("call %d: %q, %v; want hi", i, v, err)
		}
		want := int32(1)
		if i != 1 {
			want = 3 // EVALSHA, SCRIPT LOAD, EVALSHA
		}
		if trips.Load() != want {
			t.Errorf("call %d: %d round trips, want %d", i, trips.Load(), want)
		}
	}
	if len(reloaded) != 1 || reloaded[0] != "test_echo" || r.stats().loads != 2 {
		t.Errorf("reloads %v, loads %d; want test_echo once (after the flush), 2 loads", reloaded, r.stats().loads)
	}
	if n := redistest.CommandCalls(t, rdb, "eval"); n != 0 {
		t.Errorf("EVAL called %d times; want 0", n)
	}
}

// A call whose context has already ended is not sent: its error matches the
// context's and says it cannot have run.
func TestRunNotSentOnEndedContext(t *testing.T) {
	r, _, h := apRunner(t, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.Run(ctx, apIncr, []string{"ns:k"}, "x").Err()
	var notSent NotSentError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &notSent) || MayHaveRun(err) {
		t.Errorf("call on an ended context: %v; want context.Canceled, not sent", err)
	}
	if h.Plain.Load() != 0 || h.Pipelines.Load() != 0 {
		t.Error("a call on an ended context was sent")
	}
}

// Callers that meet NOSCRIPT for one script at once share one SCRIPT LOAD.
func TestRunConcurrentNoScriptLoadOnce(t *testing.T) {
	r, rdb, _ := apRunner(t, 4)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "once:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	before := r.stats().loads
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			<-start
			k := "once:" + strconv.Itoa(i)
			if _, err := apCall(ctx, r, k, k); err != nil {
				t.Error(err)
			}
		})
	}
	close(start)
	wg.Wait()
	if n := r.stats().loads - before; n != 1 {
		t.Errorf("%d SCRIPT LOADs for 30 concurrent calls after SCRIPT FLUSH; want 1", n)
	}
}

// RunPipelined sends its calls in one pipeline, loads a flushed script
// once and sends the calls that met NOSCRIPT again; each result lands in its
// own call.
func TestRunPipelinedReloads(t *testing.T) {
	r, rdb, h := apRunner(t, 4)
	ctx := testCtx(t, 30*time.Second)
	calls := func() []Call {
		cs := make([]Call, 5)
		for i := range cs {
			k := "pl:" + strconv.Itoa(i)
			cs[i] = Call{Script: apIncr, Keys: []string{k}, Args: []any{k}}
		}
		return cs
	}
	for round, want := range []int64{1, 2} {
		if round == 1 {
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		cs := calls()
		if err := r.RunPipelined(ctx, cs); err != nil {
			t.Fatal(err)
		}
		for i, cl := range cs {
			vals, err := cl.Cmd.Slice()
			if err != nil || len(vals) != 2 || vals[0] != want || vals[1] != "pl:"+strconv.Itoa(i) {
				t.Errorf("round %d call %d: %v, %v; want [%d pl:%d]", round, i, vals, err, want, i)
			}
		}
	}
	if r.stats().loads != 2 { // the first round's, and the one after the flush
		t.Errorf("SCRIPT LOADs: %d, want 2", r.stats().loads)
	}
	if h.Pipelines.Load() != 4 {
		t.Errorf("pipelines: %d, want 4 (each round, and its retry)", h.Pipelines.Load())
	}
}

// RunWait runs the script and WAIT in one pipeline: with no replica, the
// script's reply and 0 acknowledgements; after SCRIPT FLUSH it loads the
// script and runs both again.
func TestRunWaitNoReplicas(t *testing.T) {
	r, rdb, _ := apRunner(t, 4)
	ctx := testCtx(t, 30*time.Second)
	for round := range 2 {
		if round == 1 {
			if err := rdb.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		cmd, acks := r.RunWait(ctx, apIncr, []string{"wait:k"}, 1, 10*time.Millisecond, "w")
		vals, err := cmd.Slice()
		if err != nil || len(vals) != 2 || vals[0] != int64(round+1) || acks != 0 {
			t.Errorf("round %d: %v, %v, %d acks; want [%d w], 0", round, vals, err, acks, round+1)
		}
	}
	if r.stats().loads != 2 {
		t.Errorf("SCRIPT LOADs: %d, want 2", r.stats().loads)
	}
}

// A call sent in a batch is one round trip of its operation, and a call
// whose context ends while it queues none.
func TestAutoPipeRoundTrips(t *testing.T) {
	r, rdb, h := apRunner(t, 1)
	r.countTrips = countTrips // before any call: no race
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "rt:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	release := h.Hold()
	t.Cleanup(release)
	go func() { _, _ = apCall(ctx, r, "rt:lane", "lane") }()
	eventually(t, 10*time.Second, "the lane held", func() bool { return h.Held.Load() == 1 })
	const n = 4
	trips := make([]*atomic.Int32, n)
	var wg sync.WaitGroup
	for i := range n {
		var cctx context.Context
		cctx, trips[i] = tripsCtx(ctx)
		wg.Go(func() {
			k := "rt:" + strconv.Itoa(i)
			if _, err := apCall(cctx, r, k, k); err != nil {
				t.Error(err)
			}
		})
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return r.pipe.stats().queued == n })
	cctx, cancel := context.WithCancel(ctx)
	cctx, cancelledTrips := tripsCtx(cctx)
	done := make(chan error, 1)
	go func() {
		_, err := apCall(cctx, r, "rt:cancelled", "x")
		done <- err
	}()
	eventually(t, 10*time.Second, "the cancelled call queued", func() bool { return r.pipe.stats().queued == n+1 })
	cancel()
	if err := recvErr(t, done); !errors.Is(err, context.Canceled) || MayHaveRun(err) {
		t.Errorf("cancelled queued call: %v; want context.Canceled, not sent", err)
	}
	release()
	wg.Wait()
	if h.Pipelines.Load() != 1 {
		t.Fatalf("pipelines: %d, want 1", h.Pipelines.Load())
	}
	for i, tr := range trips {
		if tr.Load() != 1 {
			t.Errorf("batched call %d: %d round trips, want 1", i, tr.Load())
		}
	}
	if cancelledTrips.Load() != 0 || rdb.Exists(ctx, "rt:cancelled").Val() != 0 {
		t.Errorf("call cancelled while queued: %d round trips (want 0), or it ran", cancelledTrips.Load())
	}
}
