package redisson

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/goredisson/redisson/internal/history"
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

func sleepCtx(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
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
