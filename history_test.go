package redisson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
)

// workload is a contended lock or semaphore workload whose every call is
// recorded in rec, with the errors callers saw counted.
type workload struct {
	rec      *history.Recorder
	keys     []string
	wait     time.Duration // TryLock / TryAcquire wait
	hold     time.Duration // up to this long between acquire and release
	acquired atomic.Int64
	errs     sync.Map // error text -> *atomic.Int64
}

func (w *workload) countErr(err error) {
	v, _ := w.errs.LoadOrStore(errClass(err), new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
}

// errClass names an error by the sentinel it matches, for the summaries.
func errClass(err error) string {
	for _, s := range []error{ErrLeaseLost, ErrNotHeld, context.DeadlineExceeded, context.Canceled, ErrClientClosed} {
		if errors.Is(err, s) {
			return s.Error()
		}
	}
	return err.Error()
}

// errSummary returns the errors counted, "none" when there were none.
func (w *workload) errSummary() string {
	s := ""
	w.errs.Range(func(k, v any) bool {
		s += fmt.Sprintf("%s x%d; ", k, v.(*atomic.Int64).Load())
		return true
	})
	if s == "" {
		return "none"
	}
	return s[:len(s)-2]
}

// lockLoop runs acquire/release cycles on random keys until ctx ends, with
// a new Lock handle from c for each cycle. A hold whose Done closes with
// ErrLeaseLost records when the owner was told.
func (w *workload) lockLoop(ctx context.Context, c *Client) {
	for ctx.Err() == nil {
		key := w.keys[rand.IntN(len(w.keys))]
		l := c.GetLock(key)
		owner := l.Owner()
		inv := history.Now()
		ok, err := l.TryLock(ctx, w.wait, 0)
		ret := history.Now()
		if err != nil {
			if ctx.Err() != nil {
				return // cut short by the end of the run: not a completed call
			}
			w.countErr(err)
			continue
		}
		w.rec.Add(history.Op{Owner: owner, Key: key, Kind: history.Acquire, OK: ok, Token: l.Token(), Invoke: inv, Return: ret})
		if !ok {
			continue
		}
		w.acquired.Add(1)
		done := l.Done()
		watch := make(chan struct{})
		go func() {
			defer close(watch)
			<-done
			if errors.Is(l.Err(), ErrLeaseLost) {
				w.rec.SetLost(owner, key, history.Now())
			}
		}()
		sleepCtx(ctx, rand.N(w.hold+1))
		inv = history.Now()
		err = l.Unlock(context.WithoutCancel(ctx))
		ret = history.Now()
		if err != nil {
			w.countErr(err)
		}
		<-watch
		w.rec.Add(history.Op{Owner: owner, Key: key, Kind: history.Release, OK: err == nil, Invoke: inv, Return: ret})
	}
}

// semLoop runs TryAcquire(1)/Release(1) cycles on random semaphores until
// ctx ends. Each cycle is its own owner in the history.
func (w *workload) semLoop(ctx context.Context, c *Client, id string) {
	for i := 0; ctx.Err() == nil; i++ {
		key := w.keys[rand.IntN(len(w.keys))]
		s := c.GetSemaphore(key)
		owner := fmt.Sprintf("%s/%d", id, i)
		inv := history.Now()
		ok, err := s.TryAcquire(ctx, 1, w.wait)
		ret := history.Now()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			w.countErr(err)
			continue
		}
		w.rec.Add(history.Op{Owner: owner, Key: key, Kind: history.Acquire, OK: ok, Invoke: inv, Return: ret})
		if !ok {
			continue
		}
		w.acquired.Add(1)
		sleepCtx(ctx, rand.N(w.hold+1))
		inv = history.Now()
		err = s.Release(context.WithoutCancel(ctx), 1)
		ret = history.Now()
		if err != nil {
			w.countErr(err)
		}
		w.rec.Add(history.Op{Owner: owner, Key: key, Kind: history.Release, OK: err == nil, Invoke: inv, Return: ret})
	}
}

// checkLockHistory runs the direct checks and, when linearizable is set,
// porcupine on ops, and returns the number of violations found (each is
// reported with t.Error).
func checkLockHistory(t testing.TB, ops []history.Op, linearizable bool) int {
	t.Helper()
	holds, err := history.Holds(ops)
	if err != nil {
		t.Errorf("malformed history: %v", err)
		return 1
	}
	bad := append(history.Overlaps(holds, 1), history.TokenOrder(holds)...)
	for i, b := range bad {
		if i < 10 {
			t.Errorf("violation: %s", b)
		}
	}
	if linearizable {
		switch res := history.CheckLock(ops, time.Minute); res {
		case porcupine.Ok:
		case porcupine.Illegal:
			t.Errorf("history of %d operations is not linearizable as a mutex", len(ops))
			bad = append(bad, "not linearizable")
		default:
			t.Errorf("porcupine gave up on %d operations: %v", len(ops), res)
			bad = append(bad, "unknown")
		}
	}
	return len(bad)
}

// runLockHistory runs lock cycles for d on three keys from procs worker
// processes and clients in-process Clients, each with goroutines goroutines,
// and returns the merged history and the in-process workload.
func runLockHistory(t testing.TB, addr string, procs, clients, goroutines int, d, hold time.Duration) ([]history.Op, *workload) {
	rdb := sharedRedis(t)
	base := uniqueName(t, rdb)
	w := &workload{rec: &history.Recorder{}, wait: 2 * time.Second, hold: hold}
	for i := range 3 {
		key := fmt.Sprintf("%s:%d", base, i)
		w.keys = append(w.keys, key)
		t.Cleanup(func() { deleteLockKeys(rdb, key) })
	}
	workers := make([]*worker, procs)
	for i := range workers {
		workers[i] = startWorker(t, addr, 30*time.Second, fmt.Sprintf("worker%d", i))
		workers[i].send("cycles %s %d %d %d", base, goroutines, d.Milliseconds(), hold.Milliseconds())
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for range clients {
		c := newClient(t, rdb, nil)
		for range goroutines {
			wg.Go(func() { w.lockLoop(ctx, c) })
		}
	}
	wg.Wait()
	ops := w.rec.Ops()
	for _, wk := range workers {
		for {
			line := wk.line()
			if js, ok := strings.CutPrefix(line, "op "); ok {
				var op history.Op
				if err := json.Unmarshal([]byte(js), &op); err != nil {
					t.Fatalf("%s: %v", wk.name, err)
				}
				ops = append(ops, op)
				continue
			}
			if errs, ok := strings.CutPrefix(line, "done "); ok {
				if errs != "none" {
					t.Errorf("%s: errors: %s", wk.name, errs)
				}
				break
			}
			t.Fatalf("%s: %q", wk.name, line)
		}
	}
	return ops, w
}

// countOps returns the number of successful acquires in ops.
func countOps(ops []history.Op) (acquired int) {
	for _, op := range ops {
		if op.Kind == history.Acquire && op.OK {
			acquired++
		}
	}
	return acquired
}

// A contended lock workload from two worker processes and two in-process
// Clients (eight goroutines each, three locks) has a history that is
// linearizable as a mutex (porcupine), with no two holds of one lock at
// once and fencing tokens increasing in grant order; no caller sees an
// error.
func TestLockHistoryLinearizable(t *testing.T) {
	ops, w := runLockHistory(t, redistest.Shared(t).Addr(), 2, 2, 8, 3*time.Second, 2*time.Millisecond)
	acquired := countOps(ops)
	if acquired < 20 {
		t.Fatalf("only %d acquisitions in the history; want a real workload", acquired)
	}
	bad := checkLockHistory(t, ops, true)
	if errs := w.errSummary(); errs != "none" {
		t.Errorf("callers saw errors: %s", errs)
	}
	t.Logf("SUMMARY fault=none (history check); topology=single, 2 processes + 2 clients x 8 goroutines, 3 locks; ops=%d (%d acquired); violations=%d; errors=%s",
		len(ops), acquired, bad, w.errSummary())
}

// A semaphore of 3 permits taken one at a time by three Clients (six
// goroutines each, two semaphores) never has more than 3 holders at once
// in the recorded history, and no caller sees an error.
func TestSemaphoreHistoryNeverOverN(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	const permits = 3
	w := &workload{rec: &history.Recorder{}, wait: 2 * time.Second, hold: 3 * time.Millisecond}
	for i := range 2 {
		key := uniqueName(t, rdb) + fmt.Sprint(":", i)
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		w.keys = append(w.keys, key)
		if ok, err := newClient(t, rdb, nil).GetSemaphore(key).TrySetPermits(ctx, permits); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
	}
	run, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 3 {
		c := newClient(t, rdb, nil)
		for j := range 6 {
			wg.Go(func() { w.semLoop(run, c, fmt.Sprintf("c%d.g%d", i, j)) })
		}
	}
	wg.Wait()
	ops := w.rec.Ops()
	holds, err := history.Holds(ops)
	if err != nil {
		t.Fatal(err)
	}
	bad := history.Overlaps(holds, permits)
	for i, b := range bad {
		if i < 10 {
			t.Errorf("violation: %s", b)
		}
	}
	if len(holds) < 20 {
		t.Fatalf("only %d holds; want a real workload", len(holds))
	}
	// Every permit came back.
	for _, key := range w.keys {
		if n, err := newClient(t, rdb, nil).GetSemaphore(key).AvailablePermits(ctx); err != nil || n != permits {
			t.Errorf("%s: %d permits available after the run (%v); want %d", key, n, err, permits)
		}
	}
	if errs := w.errSummary(); errs != "none" {
		t.Errorf("callers saw errors: %s", errs)
	}
	t.Logf("SUMMARY fault=none (history check); topology=single, 3 clients x 6 goroutines, 2 semaphores of %d; ops=%d (%d acquired); violations=%d; errors=%s",
		permits, len(ops), len(holds), len(bad), w.errSummary())
}

// sleepCtx waits d, or until ctx ends (false).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
