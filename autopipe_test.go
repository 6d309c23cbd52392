package redisson

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/goredisson/redisson/internal/scripting"
	"github.com/redis/go-redis/v9"
)

// caller can tell its own reply from another's.
var apIncr = scripting.New("test_incr", "local n = redis.call('incr', KEYS[1]) return {n, ARGV[1]}\n")

// apClient returns a client on a fresh server whose go-redis client has an
// EvalHook; its auto-pipeline allows autoPipeLanes sends in flight (the
// engine's own tests, internal/scripting, vary the lanes).
func apClient(t *testing.T, opts *Options) (*Client, *redis.Client, *redistest.EvalHook) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	h := redistest.NewEvalHook()
	rdb.AddHook(h)
	c := newClient(t, rdb, opts)
	return c, rdb, h
}

// recvErr receives from ch, failing the test after 10s.
func recvErr(t *testing.T, ch <-chan error) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("no result after 10s")
		return nil
	}
}

// apCall runs apIncr on key with arg and checks the reply is its own.
func apCall(ctx context.Context, c *Client, key, arg string) (int64, error) {
	vals, err := c.scripts.run(ctx, apIncr, []string{key}, arg).Slice()
	if err != nil {
		return 0, err
	}
	if len(vals) != 2 || vals[1] != arg {
		return 0, fmt.Errorf("call with %q on %s got reply %v: not its own", arg, key, vals)
	}
	n, _ := vals[0].(int64)
	return n, nil
}

// queueCalls starts n apCalls on keys prefix:0..n-1 while the lanes are held,
// waits until they all queue, and returns their results' channel (one per
// call, in no order) and the release of the lanes.
func queueCalls(t *testing.T, ctx context.Context, c *Client, h *redistest.EvalHook, prefix string, n int) (chan error, func()) {
	t.Helper()
	lanes := autoPipeLanes
	release := h.Hold()
	t.Cleanup(release)
	for i := range lanes {
		go func() { _, _ = apCall(ctx, c, fmt.Sprintf("%s:lane%d", prefix, i), "lane") }()
	}
	eventually(t, 10*time.Second, "the lanes' calls held", func() bool { return h.Held.Load() == int64(lanes) })
	errs := make(chan error, n)
	for i := range n {
		go func() {
			k := fmt.Sprintf("%s:%d", prefix, i)
			v, err := apCall(ctx, c, k, k)
			if err == nil && v != 1 {
				err = fmt.Errorf("%s incremented to %d, want 1", k, v)
			}
			errs <- err
		}()
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return queuedScriptCalls() == n })
	return errs, release
}

// Many goroutines sharing a client form pipelines without any help, and
// every lock+unlock succeeds.
func TestAutoPipeManyGoroutinesFormBatches(t *testing.T) {
	c, rdb, h := apClient(t, nil)
	ctx := testCtx(t, 60*time.Second)
	var wg sync.WaitGroup
	for g := range 32 {
		l := c.GetLock(uniqueName(t, rdb) + ":" + strconv.Itoa(g))
		wg.Go(func() {
			for range 50 {
				ok, err := l.TryLock(ctx, 0, 0)
				if err != nil || !ok {
					t.Errorf("TryLock = %v, %v", ok, err)
					return
				}
				if err := l.Unlock(ctx); err != nil {
					t.Errorf("Unlock: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if h.Pipelines.Load() == 0 {
		t.Fatalf("32 goroutines × 50 lock+unlock: no pipeline formed (%d plain EVALSHAs)", h.Plain.Load())
	}
	t.Logf("%d plain EVALSHAs, %d pipelines carrying %d", h.Plain.Load(), h.Pipelines.Load(), h.Piped.Load())
}

// A lone caller's calls go out as plain commands, never as pipelines.
func TestAutoPipeLoneCallIsPlainCommand(t *testing.T) {
	c, rdb, h := apClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock(uniqueName(t, rdb))
	for range 20 {
		mustTryLock(t, ctx, l, 0, 0)
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := h.Pipelines.Load(); got != 0 {
		t.Errorf("pipelines: %d, want 0", got)
	}
	if got := h.Plain.Load(); got < 40 {
		t.Errorf("plain EVALSHAs: %d, want at least 40", got)
	}
}

// Close leaves the calls already queued in flight: they go out once a lane
// frees, as a plain command being written does, so that a clean-up queued
// as the client closes (a compensation, a release) still reaches Redis;
// nothing is left waiting and no goroutine remains (the suite's goleak).
func TestAutoPipeCloseLetsQueuedCallsFinish(t *testing.T) {
	c, rdb, h := apClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, c, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	const n = 5
	errs, release := queueCalls(t, ctx, c, h, "ap:close", n)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if q := queuedScriptCalls(); q != n {
		t.Fatalf("queued after Close: %d, want %d", q, n)
	}
	release()
	for range n {
		if err := recvErr(t, errs); err != nil {
			t.Errorf("queued call after Close: %v", err)
		}
	}
	for i := range n {
		if k := "ap:close:" + strconv.Itoa(i); rdb.Get(ctx, k).Val() != "1" {
			t.Errorf("%s not incremented once", k)
		}
	}
	// A call after Close (only clean-ups make one) goes out as before.
	if _, err := apCall(ctx, c, "ap:close:after", "after"); err != nil {
		t.Errorf("script call after Close: %v", err)
	}
}

// With DisableAutoPipeline, calls that would queue are all plain commands.
func TestAutoPipeDisabled(t *testing.T) {
	c, rdb, h := apClient(t, &Options{DisableAutoPipeline: true})
	if runnerConfig(rdb, topologyOf(rdb), nil, c.Options()).Lanes != 0 {
		t.Fatal("auto-pipeline set up with DisableAutoPipeline")
	}
	ctx := testCtx(t, 60*time.Second)
	var wg sync.WaitGroup
	for g := range 16 {
		l := c.GetLock(uniqueName(t, rdb) + ":" + strconv.Itoa(g))
		wg.Go(func() {
			for range 20 {
				if ok, err := l.TryLock(ctx, 0, 0); err != nil || !ok {
					t.Errorf("TryLock = %v, %v", ok, err)
					return
				}
				if err := l.Unlock(ctx); err != nil {
					t.Errorf("Unlock: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := h.Pipelines.Load(); got != 0 {
		t.Errorf("pipelines: %d, want 0", got)
	}
}

// The Observer counts a call sent in a batch as one round trip of its
// operation, and a call cancelled while queued as none.
func TestAutoPipeObserverRoundTrips(t *testing.T) {
	rec := &recorder{}
	c, rdb, h := apClient(t, &Options{Observer: rec})
	ctx := testCtx(t, 30*time.Second)
	names := make([]string, 6)
	for i := range names {
		names[i] = uniqueName(t, rdb)
		mustTryLock(t, ctx, c.GetLock(names[i]), 0, 0) // warm: loads the script
		if _, err := c.GetLock(names[i]).ForceUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	release := h.Hold()
	for i := range autoPipeLanes {
		go func() { _, _ = apCall(ctx, c, "ap:obs:lane"+strconv.Itoa(i), "lane") }()
	}
	eventually(t, 10*time.Second, "the lanes held", func() bool { return h.Held.Load() == autoPipeLanes })
	var wg sync.WaitGroup
	for _, name := range names[1:] {
		wg.Go(func() {
			if ok, err := c.GetLock(name).TryLock(ctx, 0, time.Minute); err != nil || !ok {
				t.Errorf("TryLock %s = %v, %v", name, ok, err)
			}
		})
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return queuedScriptCalls() == len(names)-1 })
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.GetLock(names[0]).TryLock(cctx, 0, time.Minute)
		done <- err
	}()
	eventually(t, 10*time.Second, "the cancelled call queued", func() bool { return queuedScriptCalls() == len(names) })
	cancel()
	if err := recvErr(t, done); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled TryLock: %v, want context.Canceled", err)
	}
	release()
	wg.Wait()
	if h.Pipelines.Load() != 1 {
		t.Fatalf("pipelines: %d, want 1", h.Pipelines.Load())
	}
	for _, name := range names[1:] {
		ops := rec.opsOf(opLockAcquire, name)
		if op := ops[len(ops)-1]; op.RoundTrips != 1 || op.Outcome != OutcomeAcquired {
			t.Errorf("batched TryLock %s: %d round trips, outcome %v; want 1, acquired", name, op.RoundTrips, op.Outcome)
		}
	}
	ops := rec.opsOf(opLockAcquire, names[0])
	if op := ops[len(ops)-1]; op.RoundTrips != 0 || op.Outcome != OutcomeCancelled {
		t.Errorf("TryLock cancelled while queued: %d round trips, outcome %v; want 0, cancelled", op.RoundTrips, op.Outcome)
	}
	if rdb.Exists(ctx, names[0]).Val() != 0 {
		t.Errorf("the cancelled TryLock took %s", names[0])
	}
}

// On Cluster auto-pipelining is on by default, one pipe per master
// (internal/scripting's TestClusterAutoPipeline* run it on a cluster), and
// off with DisableAutoPipeline.
func TestAutoPipeCluster(t *testing.T) {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{"127.0.0.1:1"}})
	t.Cleanup(func() { cc.Close() })
	c := newClient(t, cc, nil)
	cfg := runnerConfig(cc, topologyOf(cc), nil, c.Options())
	if cfg.Lanes != clusterPipeLanes || cfg.Cluster == nil {
		t.Fatalf("Cluster runner config: lanes %d, cluster %v; want %d lanes on the cluster client", cfg.Lanes, cfg.Cluster != nil, clusterPipeLanes)
	}
	if runnerConfig(cc, topologyOf(cc), nil, Options{DisableAutoPipeline: true}).Lanes != 0 {
		t.Fatal("auto-pipelining on Cluster with DisableAutoPipeline")
	}
}

// queuedScriptCalls counts the script calls waiting in the auto-pipeline's
// queue: the goroutines blocked in the engine's process itself (a call on
// a lane is in go-redis below it). It reads goroutine stacks because the
// engine keeps its read-outs to its own tests.
func queuedScriptCalls() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	queued := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		for _, line := range strings.Split(g, "\n")[1:] {
			if strings.HasPrefix(line, "\t") || strings.HasPrefix(line, "runtime.") {
				continue // a file line, or the runtime's frame it is parked in
			}
			if strings.HasPrefix(line, "github.com/goredisson/redisson/internal/scripting.(*autoPipe).process(") {
				queued++
			}
			break
		}
	}
	return queued
}
