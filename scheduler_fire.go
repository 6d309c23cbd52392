package redisson

import (
	"context"
	"sync"
	"time"
)

// firer fires one job of a Scheduler's Run: its loop sleeps to each
// instant on the server clock's estimate and runs the fire script.
type firer struct {
	s     *Scheduler
	job   string
	sc    *schedule
	clock *serverClock
	owner string
	runs  *sync.WaitGroup
	prev  <-chan struct{} // closed when this loop's latest run has ended
}

// loop fires the job's instants after last until ctx ends or the job's
// definition is no longer the one it fires by (it returns, and Run
// re-reads the jobs).
func (f *firer) loop(ctx context.Context, last time.Time) {
	backoff := time.Duration(0)
	for ctx.Err() == nil {
		instant, skipped, ok := f.sc.due(last, f.clock.now())
		if !ok {
			<-ctx.Done() // a cron expression that never matches
			return
		}
		if !f.sc.overlap && f.prev != nil && !instant.After(f.clock.now()) {
			// Catching up: let this instance's run end first, or the
			// instant would be skipped as an overlap.
			select {
			case <-f.prev:
			case <-ctx.Done():
				return
			}
		}
		if !schedSleep(ctx, instant.Add(schedFireLag).Sub(f.clock.now())) {
			return
		}
		// Recompute: the sleep may have overslept past later instants.
		if instant, skipped, _ = f.sc.due(last, f.clock.now()); instant.After(f.clock.now()) {
			continue
		}
		res, err := f.fire(ctx, instant, skipped)
		if err != nil {
			backoff = min(max(2*backoff, schedBackoff), schedBackoffM)
			if !schedSleep(ctx, backoff) {
				return
			}
			continue
		}
		backoff = 0
		switch res[0] {
		case 1, 0: // fired, or skipped as an overlap
			last = instant
		case -1: // too early on the server's clock: sleep the rest
			if !schedSleep(ctx, time.Duration(res[1])*time.Millisecond) {
				return
			}
		case -2: // fired already
			last = time.UnixMilli(res[1])
		default: // -3: the definition changed or the job was removed
			return
		}
	}
}

// fire runs the fire script for instant, starts the run when it fired, and
// returns the script's reply (see sched_fire.lua).
func (f *firer) fire(ctx context.Context, instant time.Time, skipped int) ([]int64, error) {
	s := f.s
	// A fire sent is seen through even when Run's ctx ends meanwhile: a
	// reply lost to the cancellation would leave the instant fired and run
	// by nobody. Its run then starts with ctx already ended.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	fctx, rec := s.begin(wctx, opSchedulerFire)
	keys := []string{s.defs, s.state, s.tokens, s.runs(f.job)}
	if s.fireLog != "" {
		keys = append(keys, s.fireLog)
	}
	lease := s.c.opts.WatchdogTimeout
	sent := time.Now()
	l0 := schedNow()
	res, err := s.c.scripts.run(fctx, scriptSchedFire, keys, f.job, instant.UnixMilli(), f.sc.def,
		f.owner, lease.Milliseconds(), skipped).Int64Slice()
	l1 := schedNow()
	if err == nil && !validFireReply(res) {
		err = s.errorf("%w: fire returned %v", ErrUnexpectedReply, res)
	}
	if err != nil {
		err = s.wrap(err)
		rec.end(err, OutcomeOK)
		return nil, err
	}
	if len(res) == 3 {
		f.clock.sample(l0, l1, res[2])
	} else if res[0] == 0 {
		f.clock.sample(l0, l1, res[1])
	}
	switch res[0] {
	case 1:
		rec.end(nil, OutcomeAcquired)
		if fn := s.handler(f.job); fn != nil {
			r := JobRun{Job: f.job, Instant: instant.UTC(), Fired: time.UnixMicro(res[2]).UTC(), Token: res[1], Skipped: skipped}
			f.prev = s.startRun(ctx, f.runs, fn, r, runMember(res[1], f.owner), sent)
		} else {
			// The handler was removed meanwhile: the run is over at once.
			h := newHold(s.runs(f.job), runMember(res[1], f.owner), "", 0)
			s.finishRun(ctx, h, h.field)
		}
	case 0:
		rec.end(nil, OutcomeOK)
		_, srec := s.begin(ctx, opSchedulerSkip)
		srec.end(nil, OutcomeDenied)
	default:
		rec.end(nil, OutcomeDenied)
	}
	return res, nil
}

// validFireReply reports whether res has the shape of a fire script reply.
func validFireReply(res []int64) bool {
	if len(res) == 0 {
		return false
	}
	switch res[0] {
	case 1:
		return len(res) == 3
	case 0, -1, -2:
		return len(res) >= 2
	case -3:
		return len(res) == 1
	}
	return false
}

// schedSleep sleeps for d; it reports false when ctx ended first.
func schedSleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
