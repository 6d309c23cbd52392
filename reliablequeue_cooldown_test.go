package redisson

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// startTimes runs a worker of options o that records when each job's
// handler started, by value.
func startTimes(t *testing.T, f *rqFixture, o WorkerOptions) (get func(v string) (time.Time, bool), stop func() error) {
	var mu sync.Mutex
	starts := map[string]time.Time{}
	stop = process(t, f.q, func(_ context.Context, j *Job[string]) error {
		mu.Lock()
		starts[j.Value] = time.Now()
		mu.Unlock()
		return nil
	}, o)
	return func(v string) (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		at, ok := starts[v]
		return at, ok
	}, stop
}

// After a read that took a job, the worker waits FetchCooldown before it
// reads again: a job enqueued meanwhile starts no earlier than the
// cooldown after the first; the jobs of a burst come in one read. With a
// negative cooldown the next read follows at once.
func TestReliableQueueFetchCooldown(t *testing.T) {
	ctx := testCtx(t, time.Minute)
	const cooldown = maxFetchCooldown
	f := newRQFixture(t, time.Second)
	started, _ := startTimes(t, f, WorkerOptions{Concurrency: 64, FetchCooldown: cooldown})
	waitFor(t, "the worker's group", func() bool { return f.rdb.Exists(ctx, "jobs").Val() == 1 })
	time.Sleep(50 * time.Millisecond) // the worker waits in its blocking read
	if _, _, err := f.q.Enqueue(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	var first time.Time
	waitFor(t, "the first job's start", func() bool { var ok bool; first, ok = started("first"); return ok })
	reads := commandCalls(t, f.rdb, "xreadgroup")
	const burst = 20
	for i := range burst {
		if _, _, err := f.q.Enqueue(ctx, fmt.Sprint("burst-", i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range burst {
		v := fmt.Sprint("burst-", i)
		var at time.Time
		waitFor(t, v+"'s start", func() bool { var ok bool; at, ok = started(v); return ok })
		// The read that took the first job ended before its handler
		// started; the cooldown runs from that read's end.
		if gap := at.Sub(first); gap < cooldown-100*time.Millisecond {
			t.Errorf("%s started %v after the first job, within the cooldown (%v)", v, gap, cooldown)
		}
	}
	if n := commandCalls(t, f.rdb, "xreadgroup") - reads; n > 2 {
		t.Errorf("%d reads for a burst of %d jobs enqueued during the cooldown, want 1 (2 at most)", n, burst)
	}

	g := newRQFixture(t, time.Second)
	started, _ = startTimes(t, g, WorkerOptions{Concurrency: 4, FetchCooldown: -1})
	waitFor(t, "the worker's group", func() bool { return g.rdb.Exists(ctx, "jobs").Val() == 1 })
	time.Sleep(50 * time.Millisecond)
	if _, _, err := g.q.Enqueue(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the first job's start", func() bool { var ok bool; first, ok = started("first"); return ok })
	if _, _, err := g.q.Enqueue(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	var second time.Time
	waitFor(t, "the second job's start", func() bool { var ok bool; second, ok = started("second"); return ok })
	// Not a speed assertion: a tenth of the cooldown above, with no
	// cooldown at all.
	if gap := second.Sub(first); gap >= cooldown {
		t.Errorf("with FetchCooldown -1 the second job started %v after the first, want at once", gap)
	}
}
