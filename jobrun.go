package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// JobRun is one fired instant of a Scheduler job, as its handler gets it.
type JobRun struct {
	// Job is the job's name.
	Job string
	// Instant is the scheduled instant that fired (UTC).
	Instant time.Time
	// Fired is the server's clock when it fired: Fired - Instant is the
	// fire's lateness.
	Fired time.Time
	// Token is the run's fencing token: higher than every earlier run's of
	// the scheduler, across FLUSHALL and restarts (it is at least the
	// server's clock in microseconds). Pass it to the resources the run
	// writes to, which should refuse a token lower than one they have seen.
	Token int64
	// Skipped is how many earlier instants the catch-up policy skipped
	// with this one (0 when none were missed).
	Skipped int
}

// schedRenewal is the renewal spec of every run's lease: the watchdog
// renews the runs' entries in their jobs' sorted sets.
var schedRenewal = &renewSpec{what: "scheduler run", script: scriptSchedRenew}

// startRun leases run r (fired by a call sent at sent, its lease entry
// member) to the watchdog and runs fn for it in a goroutine counted in wg.
// The handler's context ends with parent, or with the lease's loss a
// twentieth of the lease before Redis would let another run start. The
// channel returned is closed when the run has ended.
func (s *Scheduler) startRun(parent context.Context, wg *sync.WaitGroup, fn JobHandler, r JobRun, member string, sent time.Time) <-chan struct{} {
	ended := make(chan struct{})
	lease := s.c.opts.WatchdogTimeout
	key := s.runs(r.Job)
	h := newHold(key, member, "", s.c.slot(key))
	h.renewal = schedRenewal
	h.renewArgs = []any{member}
	if !s.c.watchdog.add(h, sent.Add(lease-lossMargin(lease))) {
		close(ended)
		return ended // the client closed: the lease runs out on its own
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ended)
		ctx, cancel := context.WithCancelCause(parent)
		finished := make(chan struct{})
		go func() {
			select {
			case <-h.done:
				cancel(s.leaseCause(h, r))
			case <-finished:
			}
		}()
		rctx, rec := s.begin(ctx, opSchedulerRun)
		err := callJob(rctx, fn, r)
		close(finished)
		if ended, herr := h.ended(); err == nil && ended && herr != nil {
			err = context.Cause(ctx) // the lease was lost while it ran
		}
		cancel(nil)
		rec.end(err, OutcomeOK)
		s.finishRun(parent, h, member)
	}()
	return ended
}

// leaseCause is the cause given to the handler of r whose hold ended.
func (s *Scheduler) leaseCause(h *hold, r JobRun) error {
	if _, err := h.ended(); !errors.Is(err, ErrLeaseLost) {
		return err // ErrClientClosed
	}
	return s.errorf("job %s, instant %s: %w", r.Job, r.Instant.Format(time.RFC3339Nano), ErrRunLeaseLost)
}

// finishRun stops renewing h and removes the run's lease entry (within
// the client's CleanupTimeout, even when ctx has ended).
func (s *Scheduler) finishRun(ctx context.Context, h *hold, member string) {
	s.c.watchdog.forget(h)
	defer s.c.watchdog.remove(h)
	if ended, _ := h.ended(); ended {
		return // lost: the entry is gone or someone else's concern
	}
	h.end(ErrNotHeld)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	// A failure leaves the entry to expire with its lease.
	_ = s.c.scripts.run(cctx, scriptSchedDone, []string{h.key}, member).Err()
}

// callJob runs fn; a panic is an error matching ErrJobPanicked.
func callJob(ctx context.Context, fn JobHandler, r JobRun) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrJobPanicked, p)
		}
	}()
	return fn(ctx, r)
}

// runMember is a run's entry in its job's sorted set of runs.
func runMember(token int64, owner string) string {
	return strconv.FormatInt(token, 10) + " " + owner
}
