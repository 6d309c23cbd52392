package redisson

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// schedNow is the Scheduler's reading of this machine's clock: the
// instances' clocks matter only through their estimate of the server's, and
// the process tests skew it to prove it.
var schedNow = time.Now

// Timing of a Scheduler's Run.
const (
	schedReload   = 5 * time.Second        // re-read the jobs, even without a message
	schedFireLag  = time.Millisecond       // aim this long after an instant, on the server clock estimate
	schedBackoff  = 100 * time.Millisecond // after a failed call, doubling up to schedBackoffMax
	schedBackoffM = 2 * time.Second
)

// Run fires, until ctx ends, every job defined in Redis for which this
// process has a handler (Handle): for each, it sleeps until the job's next
// instant on its estimate of the server's clock (taken from the server's
// TIME in every reply), then asks Redis to fire it. The first instance to
// ask fires it; the others learn that it was fired. A run's handler runs in
// a goroutine of its own with the run's lease (see JobHandler); Run returns
// once ctx has ended and every run it started has returned (a run fired
// just as ctx ended still gets its handler call, its context already
// ended). Jobs added,
// redefined or removed (Add, Remove, Handle) are picked up at once by a
// message on the scheduler's channel, and within 5 s without one.
//
// Missed instants (no instance could fire them in time) are fired or
// skipped by the job's CatchUpPolicy. A job that does not allow overlap
// skips an instant while an earlier run holds its lease. Redis errors are
// retried with back-off (reported to the Observer as the failed
// operations).
//
// It returns nil when ctx ends; ErrEmptyName, ErrInvalidName,
// ErrClientClosed (also when the client closes while it runs), or
// ErrNotSubscribed when Redis did not confirm the subscription to the
// scheduler's channel within 10 s.
func (s *Scheduler) Run(ctx context.Context) (err error) {
	sctx, rec, err := s.open(ctx, opSchedulerStart)
	if err == nil {
		err = s.check()
	}
	var sub *channelSub
	l := &listener{ch: make(chan string, 64), resubscribed: make(chan struct{}, 1)}
	if err == nil {
		sub, err = s.subscribe(sctx, l)
	}
	rec.end(err, OutcomeOK)
	if err != nil {
		return err
	}
	defer sub.close()
	stop := make(chan struct{})
	done := make(chan struct{})
	if !s.c.handles.spawn(func(closing context.Context) {
		defer close(done)
		select {
		case <-closing.Done():
		case <-stop:
		}
	}) {
		return ErrClientClosed
	}
	defer func() { close(stop); <-done }()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { // the client's Close ends Run too
		select {
		case <-done:
			cancel()
		case <-cctx.Done():
		}
	}()
	err = s.loop(cctx, l)
	if s.c.closed.Load() {
		return ErrClientClosed
	}
	return err
}

// subscribe listens on the scheduler's channel and waits for Redis's
// confirmation.
func (s *Scheduler) subscribe(ctx context.Context, l *listener) (*channelSub, error) {
	sharded, err := s.c.pubsub.objectsSharded(ctx)
	if err != nil {
		return nil, s.wrap(err)
	}
	s.c.trip(ctx, 1)
	sub, err := s.c.pubsub.listen(ctx, chanKey{name: s.channel, sharded: sharded}, l)
	if err != nil {
		return nil, s.wrap(err)
	}
	if !sub.ready(ctx, subscribeTimeout) {
		sub.close()
		if err := ctx.Err(); err != nil {
			return nil, s.errorf("run: %w", err)
		}
		if s.c.closed.Load() {
			return nil, ErrClientClosed
		}
		return nil, s.errorf("%w after %v", ErrNotSubscribed, subscribeTimeout)
	}
	return sub, nil
}

// jobLoop is the goroutine firing one job.
type jobLoop struct {
	def    string
	cancel context.CancelFunc
	done   chan struct{}
}

// loop keeps one jobLoop per handled job until ctx ends, then waits for
// them and for the runs they started.
func (s *Scheduler) loop(ctx context.Context, l *listener) error {
	var runs sync.WaitGroup
	defer runs.Wait()
	clock := &serverClock{}
	owner := s.c.newOwner()
	loops := make(map[string]*jobLoop)
	ended := make(chan struct{}, 1) // a job loop ended: its definition changed
	defer func() {
		for _, jl := range loops {
			jl.cancel()
			<-jl.done
		}
	}()
	backoff := time.Duration(0)
	for {
		ok := s.reload(ctx, clock, owner, loops, &runs, ended)
		wait := schedReload
		if !ok {
			backoff = min(max(2*backoff, schedBackoff), schedBackoffM)
			wait = backoff
		} else {
			backoff = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		case <-l.ch:
		case <-l.resubscribed:
		case <-s.changed:
		case <-ended:
		}
		t.Stop()
	}
}

// reload reads the jobs and starts, restarts or stops the job loops to
// match them and the handlers. It reports false when Redis failed.
func (s *Scheduler) reload(ctx context.Context, clock *serverClock, owner string, loops map[string]*jobLoop, runs *sync.WaitGroup, ended chan struct{}) bool {
	rctx, rec := s.begin(ctx, opSchedulerLoad)
	l0 := schedNow()
	res, err := s.c.scripts.run(rctx, scriptSchedLoad, []string{s.defs, s.state}).StringSlice()
	l1 := schedNow()
	if err == nil && (len(res) < 2 || (len(res)-2)%4 != 0) {
		err = s.errorf("%w: load returned %d values", ErrUnexpectedReply, len(res))
	}
	if err != nil {
		rec.end(s.wrap(err), OutcomeOK)
		return false
	}
	rec.end(nil, OutcomeOK)
	sec, _ := strconv.ParseInt(res[0], 10, 64)
	usec, _ := strconv.ParseInt(res[1], 10, 64)
	clock.sample(l0, l1, sec*1_000_000+usec)
	seen := make(map[string]bool)
	for i := 2; i+3 < len(res); i += 4 {
		job, def, lastS := res[i], res[i+1], res[i+2]
		fn := s.handler(job)
		if fn == nil {
			continue
		}
		sc, err := parseDef(def)
		if err != nil {
			continue // a definition this version cannot read
		}
		seen[job] = true
		if jl := loops[job]; jl != nil {
			select {
			case <-jl.done:
			default:
				if jl.def == def {
					continue
				}
			}
			jl.cancel()
			<-jl.done
		}
		last := clock.now()
		if ms, err := strconv.ParseInt(lastS, 10, 64); err == nil {
			last = time.UnixMilli(ms)
		}
		jctx, cancel := context.WithCancel(ctx)
		jl := &jobLoop{def: def, cancel: cancel, done: make(chan struct{})}
		loops[job] = jl
		f := &firer{s: s, job: job, sc: sc, clock: clock, owner: owner, runs: runs}
		go func() {
			defer close(jl.done)
			f.loop(jctx, last)
			if jctx.Err() == nil {
				select {
				case ended <- struct{}{}:
				default:
				}
			}
		}()
	}
	for job, jl := range loops {
		if !seen[job] {
			jl.cancel()
			<-jl.done
			delete(loops, job)
		}
	}
	return true
}

// serverClock estimates the offset of the server's clock from schedNow,
// from the replies that carry the server's TIME.
type serverClock struct {
	mu     sync.Mutex
	offset time.Duration
	rtt    time.Duration // of the sample the offset is from
	at     time.Time     // when it was taken (schedNow)
	ok     bool
}

// sample offers a reading of the server's clock (µs since the epoch) by a
// call sent at l0 and answered at l1. A sample with a round trip much
// longer than the one in use is ignored for 2 s: its midpoint guess is
// worse.
func (c *serverClock) sample(l0, l1 time.Time, serverUs int64) {
	rtt := l1.Sub(l0)
	server := time.UnixMicro(serverUs)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ok && rtt > 2*c.rtt+time.Millisecond && l1.Sub(c.at) < 2*time.Second {
		return
	}
	c.offset, c.rtt, c.at, c.ok = server.Sub(l0.Add(rtt/2)), rtt, l1, true
}

// now returns the estimate of the server's clock.
func (c *serverClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return schedNow().Add(c.offset)
}
