package redisson

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// attempt makes one try at taking something (a lock, permits). It reports
// whether it succeeded and, when not, how long until trying again is worth
// it: the holder's remaining lease, or a negative value when unknown.
type attempt func(ctx context.Context, w waitState) (bool, time.Duration, error)

// waitSpec says how await waits for one object: every object that blocks
// (locks of every kind, semaphores, latches) is one configuration of it.
type waitSpec struct {
	what    string        // the object's kind, in errors: "lock", "semaphore", ...
	name    string        // the object's name, in errors
	channel string        // where the object's wake-ups are published
	plain   bool          // channel is plain whatever the pub/sub mode (see objectChannel)
	policy  wakePolicy    // which messages on channel wake a waiter
	wait    time.Duration // how long to wait: < 0 until ctx ends
	start   time.Time     // when the caller's wait began; zero: when await starts

	// recheck: the caller's own try has failed already (or, for a
	// semaphore whose client listens to its channel, is worth making only
	// by the loop), so the loop's first try is a re-check. It is made at
	// once when the loop joins this client's subscription, after
	// subscribing otherwise; the loop never queues behind local waiters or
	// yields to other clients first. retry, with recheck, is what that
	// failed try reported: it bounds the wait before the re-check.
	recheck bool
	retry   time.Duration

	// shared: several callers can hold the object at once (read locks): a
	// new caller then never queues behind local waiters or yields before
	// its first try, since it may well get in beside the current holders.
	shared bool

	// own: channel is this waiter's alone (a fair lock waiter's): the loop
	// subscribes without joining another caller's subscription, and wakes
	// nobody when it leaves.
	own bool
	// beat, when > 0, replaces the default bound of a wait (the retry
	// reported, or WatchdogTimeout when none is known): every wait lasts at
	// most beat, or the retry reported when that is shorter, so that the
	// waiter tries again at least every beat (a fair waiter's try confirms
	// its place in the queue).
	beat time.Duration
	// onGiveUp, when set, runs when the loop subscribed and then returns
	// without the object (a fair waiter leaves the queue), before the
	// subscription closes; it is given wait.
	onGiveUp func(ctx context.Context, wait time.Duration)
}

// await runs try until it succeeds, s.wait runs out (false, nil; a
// negative wait never runs out) or ctx ends (an error wrapping ctx.Err()).
// Between tries it waits on s.channel, through the client's shared
// subscription (its own one with s.own), for a message that s.policy counts
// as a wake-up, for at most the time try reported, so that a lost message
// only delays.
//
// Every try is bounded by the end of the wait (see tryContext), so that a
// server that does not answer ends the call by the end of its wait plus
// the undo of the try cut off (one command, within CleanupTimeout).
func (c *Client) await(ctx context.Context, s waitSpec, try attempt) (ok bool, err error) {
	if s.start.IsZero() {
		s.start = time.Now()
	}
	deadline := waitEnd(s.start, s.wait)
	try = boundTry(deadline, try)
	// Join the channel first if this client already listens to it: no I/O,
	// and a wake-up sent after the first try is then kept for this waiter.
	// When local waiters are already queued the object is taken: queue
	// behind them without a try (one round trip saved, and local order
	// kept), but always try at least once before giving up.
	var sub *channelSub
	var queued bool
	var yield time.Duration
	if !s.own {
		sub, queued, yield = c.pubsub.join(objectChannel{name: s.channel, plain: s.plain})
	}
	if s.shared {
		queued, yield = false, 0
	}
	if sub != nil {
		defer sub.close()
	}
	// A waiter that leaves without the object wakes the next local one, so
	// that a wake-up it got is not lost and a waiter that never tried (it
	// queued) learns the holder's lease by trying. (Runs before close.)
	defer func() {
		if !ok && sub != nil && !s.own {
			sub.passOn()
		}
	}()
	retry, tried := time.Duration(-1), s.recheck
	mustTry := false
	switch {
	case tried && sub != nil:
		// Someone subscribed after the caller's try: a wake-up may have
		// passed unseen, so try once more.
		mustTry = true
	case tried:
		retry = s.retry
	case queued && s.wait != 0:
		// Queue behind the local waiters.
	case yield > 0 && s.wait != 0:
		// This client just released the object while other clients wait:
		// give their waiter a moment before competing with it. If one
		// announced it took the object since the release, that answers
		// the first try.
		t := c.blockStart()
		_, err := sub.wait(ctx, yield)
		c.blockEnd(ctx, t)
		if err != nil {
			return false, c.waitErr(s.what, s.name, err)
		}
		tried = sub.takenSinceRelease()
		mustTry = !tried
	default:
		mustTry = true
	}
	if mustTry {
		if ok, retry, err = try(ctx, sub.waiting()); err != nil || ok || s.wait == 0 {
			return ok, err
		}
		tried = true
	}
	// bound limits a wait by retry (or the beat) and by the caller's wait;
	// it reports false once the caller's wait ran out.
	bound := func(retry time.Duration) (time.Duration, bool) {
		switch {
		case s.beat > 0:
			if retry < 0 || retry > s.beat {
				retry = s.beat
			} else if retry == 0 {
				// The lease ends this millisecond: not a reason to sleep a beat.
				retry = time.Millisecond
			}
		case retry < 0:
			retry = c.opts.WatchdogTimeout // no expiry known: re-check now and then
		case retry == 0:
			retry = time.Millisecond
		}
		if deadline.IsZero() {
			return retry, true
		}
		left := time.Until(deadline)
		return min(retry, left), left > 0
	}
	if sub == nil {
		var fresh *channelSub
		if fresh, err = c.pubsub.subscribe(ctx, objectChannel{name: s.channel, plain: s.plain}, s.policy); err != nil {
			return false, c.waitErr(s.what, s.name, err)
		}
		sub = fresh
		defer fresh.close()
		c.trip(ctx, 1) // SUBSCRIBE, and its confirmation
		if s.onGiveUp != nil {
			defer func() {
				if !ok {
					s.onGiveUp(ctx, s.wait)
				}
			}()
		}
		// A message published before Redis confirmed the subscription is
		// lost: wait for the confirmation, then try again before waiting.
		d, more := bound(retry)
		if !more {
			return false, nil
		}
		t := c.blockStart()
		sub.ready(ctx, d)
		c.blockEnd(ctx, t)
		if ok, retry, err = try(ctx, sub.waiting()); err != nil || ok {
			return ok, err
		}
	}
	for {
		d, more := bound(retry)
		if !more {
			if !tried {
				ok, _, err = try(ctx, sub.waiting())
				return ok, err
			}
			return false, nil
		}
		t := c.blockStart()
		_, err := sub.wait(ctx, d)
		c.blockEnd(ctx, t)
		if err != nil {
			return false, c.waitErr(s.what, s.name, err)
		}
		if err := ctx.Err(); err != nil {
			return false, objectErrorf(s.what, s.name, "%w", err)
		}
		if ok, retry, err = try(ctx, sub.waiting()); err != nil || ok {
			return ok, err
		}
		tried = true
	}
}

// tryFloor is the least time a try within a wait is given, however little
// of the wait is left, so that a try at the end of a wait on a server that
// answers is not cut off.
const tryFloor = 250 * time.Millisecond

// tryContext bounds ctx, for one try, by the end of a wait (deadline; zero:
// no bound), but to no less than tryFloor from now: go-redis's retries and
// dials on a server that does not answer then end with the wait.
func tryContext(ctx context.Context, deadline time.Time) (context.Context, context.CancelFunc) {
	if deadline.IsZero() {
		return ctx, noCancel
	}
	if floor := time.Now().Add(tryFloor); deadline.Before(floor) {
		deadline = floor
	}
	return context.WithDeadline(ctx, deadline)
}

// waitEnd returns when a wait that began at start runs out; zero for a
// wait that does not (wait < 0) or makes one try (wait == 0).
func waitEnd(start time.Time, wait time.Duration) time.Time {
	if wait <= 0 {
		return time.Time{}
	}
	return start.Add(wait)
}

func noCancel() {}

// boundTry runs try under tryContext.
func boundTry(deadline time.Time, try attempt) attempt {
	if deadline.IsZero() {
		return try
	}
	return func(ctx context.Context, w waitState) (bool, time.Duration, error) {
		tctx, cancel := tryContext(ctx, deadline)
		defer cancel()
		ok, retry, err := try(tctx, w)
		if err != nil && tctx.Err() != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w (the wait ran out before Redis answered)", err)
		}
		return ok, retry, err
	}
}

// waitErr wraps an error that ended a wait.
func (c *Client) waitErr(kind, name string, err error) error {
	if errors.Is(err, ErrClientClosed) {
		return err
	}
	return objectErrorf(kind, name, "%w", err)
}
