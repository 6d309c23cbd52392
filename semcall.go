package redisson

import (
	"context"
	"time"
)

// wait takes the permits, queuing in Redis, until deadline (zero: until ctx
// ends).
func (a *semCall) wait(ctx context.Context, deadline time.Time) (bool, error) {
	s := a.s
	return s.c.queueWait(ctx, semKind, s.name, s.channel, s.wake, a.id[len(s.c.id)+1:], deadline,
		func(ctx context.Context) (bool, time.Duration, error) {
			ok, err := a.try(ctx, true)
			return ok, -1, err
		})
}

// semCall is one Acquire or TryAcquire call: its id names its call marker
// and its place in the queue.
type semCall struct {
	s      *Semaphore
	n      int64
	id     string
	keys   []string // semaphore, queue, waiters, channel, wake prefix, call marker
	start  time.Time
	queued bool // a try of this call may have left it a place in the queue
}

// try runs the acquire script once; with queue, a try that takes nothing
// queues the call (or confirms its place). A try whose reply may have been
// lost is undone before it returns its error.
func (a *semCall) try(ctx context.Context, queue bool) (bool, error) {
	s := a.s
	q := "0"
	if queue {
		q = "1"
		a.queued = true
	}
	res, err := s.c.scripts.run(ctx, scriptSemAcquire, a.keys,
		a.n, a.id, q, s.c.retryWindowArg, semPlaceTTLArg, s.c.pubsub.publishArg(ctx)).Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			a.cancel(ctx, true) // the script may have run: undo it
		}
		return false, s.wrap(err)
	}
	switch {
	case len(res) >= 2 && res[0] == 1:
		a.queued = false
		s.c.janitor.add(a.keys[5])
		return true, nil
	case len(res) >= 3 && res[0] == 0:
		return false, nil
	}
	return false, objectErrorf(semKind, s.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
}

// cancel ends the call in Redis: it gives back permits a try took if its
// reply was lost, gives up the call's place in the queue, and, with
// inFlight, leaves a marker that refuses a resend still on its way. It
// outlives ctx, within the client's CleanupTimeout; if Redis cannot be
// reached, the place expires by itself, but permits taken by a lost reply
// stay taken.
func (a *semCall) cancel(ctx context.Context, inFlight bool) {
	s := a.s
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	var window any = "0"
	if inFlight {
		window = s.c.retryWindowArg
	}
	if err := s.c.scripts.run(cctx, scriptSemCancel, a.keys, a.n, a.id, window, s.c.pubsub.publishArg(cctx)).Err(); err != nil {
		// The place expires by itself; until then it holds up the waiters
		// behind it.
		s.c.emit.emit(Event{Type: EventHandOffFailed, Kind: semKind, Name: s.name, Err: err})
	}
	a.queued = false
}
