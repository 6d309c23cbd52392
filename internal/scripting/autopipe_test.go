package scripting

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// caller can tell its own reply from another's.
var apIncr = New("test_incr", "local n = redis.call('incr', KEYS[1]) return {n, ARGV[1]}\n")

// apRunner returns a Runner on a fresh server whose go-redis client has an
// EvalHook, its auto-pipeline allowing lanes sends in flight.
func apRunner(t *testing.T, lanes int) (*Runner, *redis.Client, *redistest.EvalHook) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	h := redistest.NewEvalHook()
	rdb.AddHook(h)
	return NewRunner(Config{Redis: rdb, Lanes: lanes}), rdb, h
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
func apCall(ctx context.Context, r *Runner, key, arg string) (int64, error) {
	vals, err := r.Run(ctx, apIncr, []string{key}, arg).Slice()
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
func queueCalls(t *testing.T, ctx context.Context, r *Runner, h *redistest.EvalHook, prefix string, n int) (chan error, func()) {
	t.Helper()
	lanes := r.pipe.lanes
	release := h.Hold()
	t.Cleanup(release)
	for i := range lanes {
		go func() { _, _ = apCall(ctx, r, fmt.Sprintf("%s:lane%d", prefix, i), "lane") }()
	}
	eventually(t, 10*time.Second, "the lanes' calls held", func() bool { return h.Held.Load() == int64(lanes) })
	errs := make(chan error, n)
	for i := range n {
		go func() {
			k := fmt.Sprintf("%s:%d", prefix, i)
			v, err := apCall(ctx, r, k, k)
			if err == nil && v != 1 {
				err = fmt.Errorf("%s incremented to %d, want 1", k, v)
			}
			errs <- err
		}()
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return r.pipe.stats().queued == n })
	return errs, release
}

// Calls that queue behind the busy lanes are sent together as one
// pipeline, and each gets its own reply.
func TestAutoPipeBatchesQueuedCalls(t *testing.T) {
	r, _, h := apRunner(t, 2)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil { // loads the script
		t.Fatal(err)
	}
	const n = 10
	errs, release := queueCalls(t, ctx, r, h, "ap:batch", n)
	release()
	for range n {
		if err := recvErr(t, errs); err != nil {
			t.Error(err)
		}
	}
	if got := h.Pipelines.Load(); got != 1 {
		t.Errorf("pipelines sent: %d, want 1", got)
	}
	if got := h.Piped.Load(); got != n {
		t.Errorf("EVALSHAs pipelined: %d, want %d", got, n)
	}
	if st := r.pipe.stats(); st.pipelines != 1 || st.batched != n || st.queued != 0 {
		t.Errorf("stats %+v; want 1 pipeline of %d, none queued", st, n)
	}
}

// A call whose context ends while it queues returns the context's error,
// says it was not sent, and never reaches Redis; the calls queued beside it
// go out as usual.
func TestAutoPipeCancelledWhileQueuedNeverSent(t *testing.T) {
	r, rdb, h := apRunner(t, 1)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	errs, release := queueCalls(t, ctx, r, h, "ap:kept", 3)
	cctx, cancel := context.WithCancel(ctx)
	cancelled := make(chan error, 1)
	go func() {
		_, err := apCall(cctx, r, "ap:cancelled", "x")
		cancelled <- err
	}()
	eventually(t, 10*time.Second, "the call queued", func() bool { return r.pipe.stats().queued == 4 })
	cancel()
	err := recvErr(t, cancelled)
	if !errors.Is(err, context.Canceled) || MayHaveRun(err) {
		t.Fatalf("cancelled queued call: %v (may have run: %v); want context.Canceled, not sent", err, MayHaveRun(err))
	}
	if q := r.pipe.stats().queued; q != 3 {
		t.Errorf("queued after the cancellation: %d, want 3", q)
	}
	release()
	for range 3 {
		if err := recvErr(t, errs); err != nil {
			t.Error(err)
		}
	}
	if n := h.Sent("ap:cancelled"); n != 0 {
		t.Errorf("the cancelled call was sent %d times", n)
	}
	if n, err := rdb.Exists(ctx, "ap:cancelled").Result(); err != nil || n != 0 {
		t.Errorf("EXISTS ap:cancelled = %d, %v; want 0", n, err)
	}
}

// A member whose context ends after it was taken into a batch, but before
// the batch is written, is not sent; the live ones are; when none is live,
// the lane is handed on.
func TestAutoPipeCancelledAfterTaken(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel []bool // per queued call, oldest first
	}{
		{"leader", []bool{true, false, false, false}},
		{"member", []bool{false, true, false, true}},
		{"all", []bool{true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, rdb, h := apRunner(t, 1)
			ctx := testCtx(t, 30*time.Second)
			if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
				t.Fatal(err)
			}
			release := h.Hold()
			t.Cleanup(release)
			go func() { _, _ = apCall(ctx, r, "ap:taken:lane", "lane") }()
			eventually(t, 10*time.Second, "the lane held", func() bool { return h.Held.Load() == 1 })
			a := r.pipe
			errs := make([]chan error, len(tc.cancel))
			cancels := make([]context.CancelFunc, len(tc.cancel))
			for i := range tc.cancel {
				var cctx context.Context
				cctx, cancels[i] = context.WithCancel(ctx)
				errs[i] = make(chan error, 1)
				go func() {
					k := "ap:taken:" + strconv.Itoa(i)
					_, err := apCall(cctx, r, k, k)
					errs[i] <- err
				}()
				// One by one, so that the queue's order is known.
				eventually(t, 10*time.Second, "the call queued", func() bool { return a.stats().queued == i+1 })
			}
			// Hand a lane of its own to the queue, as release does, with the
			// contexts ended in the same locked section: the calls cannot
			// leave the queue first, so the batch holds them.
			a.mu.Lock()
			for i, cancel := range tc.cancel {
				if cancel {
					cancels[i]()
				}
			}
			a.busy++ // the lane this batch carries
			b := a.takeBatch()
			a.mu.Unlock()
			go a.sendLoop(b)
			for i, cancelled := range tc.cancel {
				err := recvErr(t, errs[i])
				k := "ap:taken:" + strconv.Itoa(i)
				switch {
				case cancelled && (!errors.Is(err, context.Canceled) || MayHaveRun(err)):
					t.Errorf("cancelled call %d: %v; want context.Canceled, not sent", i, err)
				case cancelled && (h.Sent(k) != 0 || rdb.Exists(ctx, k).Val() != 0):
					t.Errorf("cancelled call %d was sent", i)
				case !cancelled && err != nil:
					t.Errorf("live call %d: %v", i, err)
				}
			}
			release()
			for _, cancel := range cancels {
				cancel()
			}
			eventually(t, 10*time.Second, "every lane free", func() bool {
				a.mu.Lock()
				defer a.mu.Unlock()
				return a.busy == 0
			})
		})
	}
}

// After SCRIPT FLUSH, every member of a batch meets NOSCRIPT; each is
// loaded (once between them) and run again, and all succeed.
func TestAutoPipeNoScriptInsideBatch(t *testing.T) {
	r, rdb, h := apRunner(t, 2)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	loads := r.stats().loads
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 16
	errs, release := queueCalls(t, ctx, r, h, "ap:noscript", n)
	release()
	for range n {
		if err := recvErr(t, errs); err != nil {
			t.Error(err)
		}
	}
	if h.Pipelines.Load() == 0 {
		t.Error("no pipeline formed")
	}
	// The two lane calls and the batch meet NOSCRIPT; they share loads.
	if got := r.stats().loads - loads; got < 1 || got > 3 {
		t.Errorf("SCRIPT LOADs after the flush: %d, want 1 to 3", got)
	}
}

// A script error of one member of a batch goes to that caller only.
func TestAutoPipeErrorsGoToTheirCaller(t *testing.T) {
	r, rdb, h := apRunner(t, 1)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	for i := range n {
		if i%2 == 1 { // a list: INCR on it fails with WRONGTYPE
			rdb.RPush(ctx, "ap:err:"+strconv.Itoa(i), "x")
		}
	}
	release := h.Hold()
	go func() { _, _ = apCall(ctx, r, "ap:err:lane", "lane") }()
	eventually(t, 10*time.Second, "the lane held", func() bool { return h.Held.Load() == 1 })
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k := "ap:err:" + strconv.Itoa(i)
			_, errs[i] = apCall(ctx, r, k, k)
		})
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return r.pipe.stats().queued == n })
	release()
	wg.Wait()
	for i, err := range errs {
		wrongType := err != nil && strings.Contains(err.Error(), "WRONGTYPE")
		if (i%2 == 1) != wrongType {
			t.Errorf("call %d: %v; want WRONGTYPE exactly for the odd calls", i, err)
		}
	}
	if h.Pipelines.Load() != 1 {
		t.Errorf("pipelines: %d, want 1", h.Pipelines.Load())
	}
}

// When go-redis resends a pipeline (its reply was lost with the
// connection), every member still gets its own reply, once.
func TestAutoPipeResentBatch(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), MaxRetries: 3})
	t.Cleanup(func() { rdb.Close() })
	h := redistest.NewEvalHook()
	rdb.AddHook(h)
	r := NewRunner(Config{Redis: rdb, Lanes: 1})
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	const n = 8
	release := h.Hold()
	go func() { _, _ = apCall(ctx, r, "ap:resend:lane", "lane") }()
	eventually(t, 10*time.Second, "the lane held", func() bool { return h.Held.Load() == 1 })
	vals := make([]int64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			k := "ap:resend:" + strconv.Itoa(i)
			vals[i], errs[i] = apCall(ctx, r, k, k) // checks the reply carries its own argument
		})
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return r.pipe.stats().queued == n })
	// The batch's reply, whichever connection it comes on (a new one's
	// handshake reply passes): it carries the members' own arguments.
	proxy.DropNextReplyWith("ap:resend:")
	release()
	wg.Wait()
	if proxy.Dropped() != 1 {
		t.Fatalf("replies dropped: %d, want 1", proxy.Dropped())
	}
	for i := range n {
		k := "ap:resend:" + strconv.Itoa(i)
		// apIncr is not idempotent: the resend ran it again, and its reply
		// is the one the caller got.
		stored, _ := srv.Client(t).Get(ctx, k).Int64()
		if errs[i] != nil || vals[i] != stored || stored != 2 {
			t.Errorf("%s: reply %d, %v; stored %d; want the resend's reply 2", k, vals[i], errs[i], stored)
		}
	}
	if h.Pipelines.Load() != 1 {
		t.Errorf("pipelines seen by the hook: %d, want 1 (go-redis resends inside it)", h.Pipelines.Load())
	}
}

// The pipeline's context has no member's cancellation, and the latest of
// their deadlines (none when one has none).
func TestAutoPipeBatchContext(t *testing.T) {
	base := context.Background()
	cancelled, cancel := context.WithCancel(base)
	cancel()
	soon, c1 := context.WithTimeout(base, time.Minute)
	defer c1()
	late, c2 := context.WithTimeout(base, time.Hour)
	defer c2()
	members := func(ctxs ...context.Context) []*queuedCall {
		var ms []*queuedCall
		for _, ctx := range ctxs {
			ms = append(ms, &queuedCall{ctx: ctx})
		}
		return ms
	}
	ctx, stop := batchContext(cancelled, members(soon, late))
	if stop == nil {
		t.Fatal("no cancel func for a deadline")
	}
	defer stop()
	if ctx.Err() != nil {
		t.Errorf("batch context of a cancelled leader: %v, want alive", ctx.Err())
	}
	if d, ok := ctx.Deadline(); !ok || d.Before(time.Now().Add(59*time.Minute)) {
		t.Errorf("deadline %v, %v; want the latest member's (an hour)", d, ok)
	}
	ctx, stop = batchContext(soon, members(soon, base))
	if stop != nil {
		stop()
	}
	if _, ok := ctx.Deadline(); ok {
		t.Error("batch context has a deadline though a member has none")
	}
}

// The plain-argument test matches go-redis: what it would flatten is not
// called plain.
func TestAutoPipePlainArg(t *testing.T) {
	for _, a := range []any{"s", []byte("b"), 1, int64(1), 1.5, true} {
		if !plainArg(a) {
			t.Errorf("plainArg(%T) = false", a)
		}
	}
	for _, a := range []any{[]string{"a"}, []any{1}, map[string]string{}, struct{}{}, nil, net.IP{}} {
		if plainArg(a) {
			t.Errorf("plainArg(%T) = true", a)
		}
	}
}

// panicHook panics in the first pipeline it sees.
type panicHook struct{ armed atomic.Bool }

func (h *panicHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *panicHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *panicHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.armed.CompareAndSwap(true, false) {
			panic("test: pipeline hook")
		}
		return next(ctx, cmds)
	}
}

// A go-redis hook panicking in a batch's pipeline panics no caller (the
// batch is sent on a goroutine of its own): every member gets an error that
// says it may have run (not an empty success), and the lane is freed.
func TestAutoPipePanickingHook(t *testing.T) {
	r, rdb, h := apRunner(t, 1)
	ph := &panicHook{}
	rdb.AddHook(ph)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	release := h.Hold()
	t.Cleanup(release)
	go func() { _, _ = apCall(ctx, r, "ap:panic:lane", "lane") }()
	eventually(t, 10*time.Second, "the lane held", func() bool { return h.Held.Load() == 1 })
	const n = 4
	errs := make(chan error, n)
	var panics atomic.Int64
	for i := range n {
		go func() {
			defer func() {
				if r := recover(); r != nil {
					panics.Add(1)
					errs <- nil
				}
			}()
			k := "ap:panic:" + strconv.Itoa(i)
			_, err := apCall(ctx, r, k, k)
			errs <- err
		}()
	}
	eventually(t, 10*time.Second, "the calls queued", func() bool { return r.pipe.stats().queued == n })
	ph.armed.Store(true)
	release()
	failed := 0
	for range n {
		if err := recvErr(t, errs); errors.Is(err, errAutoPipePanic) && MayHaveRun(err) {
			failed++
		} else if err != nil {
			t.Errorf("member of the panicked batch: %v", err)
		}
	}
	if panics.Load() != 0 || failed != n {
		t.Errorf("%d panics, %d members failed; want none and %d", panics.Load(), failed, n)
	}
	if _, err := apCall(ctx, r, "ap:panic:after", "after"); err != nil {
		t.Errorf("call after the panic: %v", err)
	}
	a := r.pipe
	a.mu.Lock()
	busy := a.busy
	a.mu.Unlock()
	if busy != 0 {
		t.Errorf("lanes busy after the panic: %d, want 0", busy)
	}
}

// pipeGate holds every pipeline of EVALSHAs after its replies, until
// released (not go-redis's own, such as a connection's HELLO).
type pipeGate struct {
	gate chan struct{}
	held atomic.Int64
}

func (g *pipeGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *pipeGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (g *pipeGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if len(cmds) == 0 || cmds[0].Name() != "evalsha" {
			return err
		}
		g.held.Add(1)
		<-g.gate
		g.held.Add(-1)
		return err
	}
}

// A member of a batch in flight returns when its own context ends, with
// the context's error (it may have run), not when the batch's replies come:
// no caller waits on another's deadline. The others get their replies.
func TestAutoPipeMemberReturnsAtItsDeadline(t *testing.T) {
	r, rdb, h := apRunner(t, 1)
	g := &pipeGate{gate: make(chan struct{})}
	rdb.AddHook(g)
	var once sync.Once
	open := func() { once.Do(func() { close(g.gate) }) }
	t.Cleanup(open)
	ctx := testCtx(t, 30*time.Second)
	if _, err := apCall(ctx, r, "ap:warm", "warm"); err != nil {
		t.Fatal(err)
	}
	errs, release := queueCalls(t, ctx, r, h, "ap:kept", 2)
	short, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	shortErr := make(chan error, 1)
	go func() {
		_, err := apCall(short, r, "ap:short", "short")
		shortErr <- err
	}()
	eventually(t, 10*time.Second, "the short call queued", func() bool { return r.pipe.stats().queued == 3 })
	release()
	eventually(t, 10*time.Second, "the batch held after its replies", func() bool { return g.held.Load() == 1 })
	err := recvErr(t, shortErr)
	if !errors.Is(err, context.DeadlineExceeded) || !MayHaveRun(err) {
		t.Fatalf("call whose deadline passed in flight: %v (may have run: %v); want DeadlineExceeded, may have run", err, MayHaveRun(err))
	}
	if g.held.Load() != 1 {
		t.Fatal("the short call returned only once its batch was done")
	}
	open()
	for range 2 {
		if err := recvErr(t, errs); err != nil {
			t.Error(err)
		}
	}
	if n, err := rdb.Get(ctx, "ap:short").Int(); err != nil || n != 1 {
		t.Errorf("GET ap:short = %d, %v; want 1 (it ran)", n, err)
	}
	a := r.pipe
	eventually(t, 10*time.Second, "every lane free", func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.busy == 0
	})
}
