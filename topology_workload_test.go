package redisson

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// A workload is a set of goroutines repeating one operation (acquire, hold
// briefly, release) while a test changes the topology under them. It
// records what callers saw: completed operations, errors by kind and when
// they happened, the longest stretch without a completed operation, and
// mutual exclusion violations the operation itself detects in the test's
// own bookkeeping.
type topoWorkload struct {
	name       string
	stop       chan struct{}
	wg         sync.WaitGroup
	violations atomic.Int64

	mu        sync.Mutex
	origin    time.Time // the topology change began
	changed   time.Time // the topology change was done
	done      int
	waitedOut int // waits that ran out (false, nil)
	errs      int
	kinds     map[string]int
	firstErr  time.Time
	lastErr   time.Time
	lastDone  time.Time
	gap       time.Duration // longest time without a completed operation
	gapEnd    time.Time
	after     []int // per goroutine: operations completed after changed
}

// workloadOp runs one operation for goroutine g. done reports that it
// acquired and released (even if the release failed); err is what the
// caller saw, if anything.
type workloadOp func(ctx context.Context, w *topoWorkload, g int) (done bool, err error)

const workloadOpTimeout = 20 * time.Second // no single operation may take longer

// startWorkload starts n goroutines repeating op, with a short pause
// between operations, until stopAndWait.
func startWorkload(name string, n int, op workloadOp) *topoWorkload {
	now := time.Now()
	w := &topoWorkload{name: name, stop: make(chan struct{}), kinds: map[string]int{},
		lastDone: now, after: make([]int, n)}
	for g := 0; g < n; g++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for {
				select {
				case <-w.stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
				ctx, cancel := context.WithTimeout(context.Background(), workloadOpTimeout)
				done, err := op(ctx, w, g)
				cancel()
				w.record(g, done, err)
			}
		}()
	}
	return w
}

func (w *topoWorkload) record(g int, done bool, err error) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if done {
		w.done++
		if d := now.Sub(w.lastDone); d > w.gap {
			w.gap, w.gapEnd = d, now
		}
		w.lastDone = now
		if !w.changed.IsZero() {
			w.after[g]++
		}
	}
	if err != nil {
		w.errs++
		w.kinds[errorKind(err)]++
		if w.firstErr.IsZero() {
			w.firstErr = now
		}
		w.lastErr = now
	} else if !done {
		w.waitedOut++
	}
}

// note records an error a caller saw in the middle of an operation (a
// release it then retried).
func (w *topoWorkload) note(g int, err error) { w.record(g, false, err) }

// releaseRetrying runs release until it succeeds, ctx ends, or it fails with
// an error after which the release may have happened. Refusals that
// guarantee nothing was written (see refusedUnwritten) are retried, as a
// careful caller would (a Semaphore permit whose release is dropped is gone
// for good); each is recorded.
func releaseRetrying(ctx context.Context, w *topoWorkload, g int, release func(context.Context) error) error {
	for {
		err := release(ctx)
		if err == nil || !refusedUnwritten(err) || ctx.Err() != nil {
			return err
		}
		w.note(g, err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// refusedUnwritten reports whether err is a Redis refusal that leaves
// nothing written: the node would not write (NOREPLICAS, READONLY), the slot
// is moving (TRYAGAIN, ASK, MOVED, CLUSTERDOWN), or the script was not
// there (NOSCRIPT).
func refusedUnwritten(err error) bool {
	k := errorKind(err)
	for _, p := range []string{"NOREPLICAS", "READONLY", "TRYAGAIN", "ASK ", "MOVED ", "CLUSTERDOWN", "NOSCRIPT"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// errorKind names an error by its innermost message, shortened.
func errorKind(err error) string {
	for {
		inner := errors.Unwrap(err)
		if inner == nil {
			break
		}
		err = inner
	}
	msg := err.Error()
	if i := strings.Index(msg, "NOREPLICAS"); i >= 0 {
		msg = msg[i:] // a script error carries the Redis error inside
	}
	if len(msg) > 70 {
		msg = msg[:70] + "..."
	}
	return msg
}

// markChanging and markChanged bracket the topology change.
func (w *topoWorkload) markChanging(t time.Time) { w.mu.Lock(); w.origin = t; w.mu.Unlock() }
func (w *topoWorkload) markChanged(t time.Time)  { w.mu.Lock(); w.changed = t; w.mu.Unlock() }

// recovered reports whether every goroutine completed an operation after
// the change and no error came for quiet.
func (w *topoWorkload) recovered(quiet time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.changed.IsZero() || time.Since(w.lastErr) < quiet {
		return false
	}
	for _, n := range w.after {
		if n == 0 {
			return false
		}
	}
	return true
}

// idle returns the goroutines that completed no operation after the
// change.
func (w *topoWorkload) idle() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var idle []int
	for g, n := range w.after {
		if n == 0 {
			idle = append(idle, g)
		}
	}
	return idle
}

// waitRecovered waits until every workload has recovered (see recovered),
// failing the test after limit with the workloads' reports.
func waitRecovered(t *testing.T, limit, quiet time.Duration, ws ...*topoWorkload) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		all := true
		for _, w := range ws {
			all = all && w.recovered(quiet)
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			for _, w := range ws {
				t.Log(w.report())
				if idle := w.idle(); len(idle) > 0 {
					t.Logf("%s: goroutines %v completed no operation after the change", w.name, idle)
				}
			}
			t.Fatalf("workloads did not recover within %v of the topology change (every goroutine completing an operation, then %v without errors)", limit, quiet)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopAndWait stops the workloads and fails the test, with every
// goroutine's stack, unless all their goroutines return within bound.
func stopAndWait(t *testing.T, bound time.Duration, ws ...*topoWorkload) {
	t.Helper()
	for _, w := range ws {
		close(w.stop)
	}
	finished := make(chan struct{})
	go func() {
		for _, w := range ws {
			w.wg.Wait()
		}
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(bound):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("workload goroutines still running %v after stop (a caller hangs):\n%s", bound, buf)
	}
}

// report summarises the workload; times are relative to the start of the
// topology change.
func (w *topoWorkload) report() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	rel := func(at time.Time) string {
		if at.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%+.2fs", at.Sub(w.origin).Seconds())
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d operations, %d waits ran out, %d errors", w.name, w.done, w.waitedOut, w.errs)
	if w.errs > 0 {
		fmt.Fprintf(&b, " (first %s, last %s)", rel(w.firstErr), rel(w.lastErr))
		kinds := make([]string, 0, len(w.kinds))
		for k, n := range w.kinds {
			kinds = append(kinds, fmt.Sprintf("%dx %q", n, k))
		}
		sort.Strings(kinds)
		fmt.Fprintf(&b, " [%s]", strings.Join(kinds, ", "))
	}
	fmt.Fprintf(&b, "; change took %s; longest stretch without a completed operation %.2fs, ending %s; mutual exclusion violations %d",
		rel(w.changed), w.gap.Seconds(), rel(w.gapEnd), w.violations.Load())
	return b.String()
}

// lastErrorAfterOrigin returns when the last error came, relative to the
// start of the change (0 without errors).
func (w *topoWorkload) lastErrorAfterOrigin() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastErr.IsZero() {
		return 0
	}
	return w.lastErr.Sub(w.origin)
}

// exclusion tracks holders of one object in the test's own bookkeeping.
type exclusion struct {
	holders atomic.Int64
	readers atomic.Int64
}

// lockOp returns an operation taking the lock handle locks[g] for a few
// milliseconds; a second holder at the same time counts as a violation.
func lockOp(locks []*Lock, ex []*exclusion) workloadOp {
	return func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
		l, e := locks[g], ex[g]
		ok, err := l.TryLock(ctx, 5*time.Second, 0)
		if err != nil || !ok {
			return false, err
		}
		if e.holders.Add(1) != 1 || e.readers.Load() != 0 {
			w.violations.Add(1)
		}
		time.Sleep(time.Millisecond)
		e.holders.Add(-1)
		return true, releaseRetrying(ctx, w, g, l.Unlock)
	}
}

// readOp is lockOp for read locks: a writer at the same time is a
// violation.
func readOp(locks []*Lock, ex []*exclusion) workloadOp {
	return func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
		l, e := locks[g], ex[g]
		ok, err := l.TryLock(ctx, 5*time.Second, 0)
		if err != nil || !ok {
			return false, err
		}
		e.readers.Add(1)
		if e.holders.Load() != 0 {
			w.violations.Add(1)
		}
		time.Sleep(time.Millisecond)
		e.readers.Add(-1)
		return true, releaseRetrying(ctx, w, g, l.Unlock)
	}
}

// semaphoreOp takes one permit of sems[g] briefly; more holders than
// permits at the same time is a violation.
func semaphoreOp(sems []*Semaphore, ex []*exclusion, permits int64) workloadOp {
	return func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
		s, e := sems[g], ex[g]
		ok, err := s.TryAcquire(ctx, 1, 5*time.Second)
		if err != nil || !ok {
			return false, err
		}
		if e.holders.Add(1) > permits {
			w.violations.Add(1)
		}
		time.Sleep(time.Millisecond)
		e.holders.Add(-1)
		return true, releaseRetrying(ctx, w, g, func(ctx context.Context) error { return s.Release(ctx, 1) })
	}
}

// permitOp takes one expirable permit of sems[g] briefly.
func permitOp(sems []*PermitExpirableSemaphore, ex []*exclusion, permits int64) workloadOp {
	return func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
		s, e := sems[g], ex[g]
		id, ok, err := s.TryAcquire(ctx, 5*time.Second, 10*time.Second)
		if err != nil || !ok {
			return false, err
		}
		if e.holders.Add(1) > permits {
			w.violations.Add(1)
		}
		time.Sleep(time.Millisecond)
		e.holders.Add(-1)
		return true, releaseRetrying(ctx, w, g, func(ctx context.Context) error { return s.Release(ctx, id) })
	}
}

// latchOp opens a fresh latch: one client waits on it while the other
// counts it down; the waiter must see it open.
func latchOp(waiter, counter *Client, name func(i int) string) workloadOp {
	var seq atomic.Int64
	return func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
		n := name(int(seq.Add(1)))
		if ok, err := counter.GetCountDownLatch(n).TrySetCount(ctx, 1); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("TrySetCount on fresh latch %s = false", n)
			}
			return false, err
		}
		type result struct {
			ok  bool
			err error
		}
		res := make(chan result, 1)
		go func() {
			ok, err := waiter.GetCountDownLatch(n).TryAwait(ctx, 10*time.Second)
			res <- result{ok, err}
		}()
		time.Sleep(time.Millisecond)
		cerr := releaseRetrying(ctx, w, g, counter.GetCountDownLatch(n).CountDown)
		r := <-res
		if cerr != nil {
			return false, cerr
		}
		if r.err != nil {
			return false, r.err
		}
		if !r.ok {
			w.violations.Add(1) // counted down, yet the waiter never saw it open
			return false, nil
		}
		return true, nil
	}
}
