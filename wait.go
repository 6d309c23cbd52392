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
type attempt func(ctx context.Context, w waiting) (bool, time.Duration, error)

// firstTry is the outcome of a failed try the caller already made.
type firstTry struct {
	done  bool
	retry time.Duration
}

// await runs try until it succeeds, wait runs out (false, nil; wait < 0
// never runs out) or ctx ends (an error wrapping ctx.Err()). Between tries
// it waits on channel, through the client's shared subscription, for a
// message that policy counts as a wake-up, for at most the time try
// reported, so that a lost message only delays. kind and name name the
// object in errors. first, when done, is a failed try made before.
func (c *Client) await(ctx context.Context, kind, name, channel string, policy wakePolicy, wait time.Duration, first firstTry, try attempt) (bool, error) {
	return c.awaitShared(ctx, kind, name, objectChannel{name: channel}, policy, wait, first, false, try)
}

// awaitShared is await for objects that several callers can hold at once
// when shared is true (read locks): a new caller then never queues behind
// local waiters or yields before its first try, since it may well get in
// beside the current holders. Its channel says whether it follows the
// pub/sub mode or stays plain (see objectChannel); await's follows the mode.
func (c *Client) awaitShared(ctx context.Context, kind, name string, channel objectChannel, policy wakePolicy, wait time.Duration, first firstTry, shared bool, try attempt) (ok bool, err error) {
	// Join the channel first if this client already listens to it: no I/O,
	// and a wake-up sent after the first try is then kept for this waiter.
	// When local waiters are already queued the object is taken: queue
	// behind them without a try (one round trip saved, and local order
	// kept), but always try at least once before giving up.
	sub, queued, yield := c.pubsub.join(channel)
	if shared {
		queued, yield = false, 0
	}
	if sub != nil {
		defer sub.close()
	}
	// A waiter that leaves without the object wakes the next local one, so
	// that a wake-up it got is not lost and a waiter that never tried (it
	// queued) learns the holder's lease by trying. (Runs before close.)
	defer func() {
		if !ok && sub != nil {
			sub.passOn()
		}
	}()
	retry, tried := time.Duration(-1), first.done
	mustTry := false
	switch {
	case tried && sub != nil:
		// Someone subscribed after the caller's try: a wake-up may have
		// passed unseen, so try once more.
		mustTry = true
	case tried:
		retry = first.retry
	case queued && wait != 0:
		// Queue behind the local waiters.
	case yield > 0 && wait != 0:
		// This client just released the object while other clients wait:
		// give their waiter a moment before competing with it. If one
		// announces it took the object, that answers the first try.
		start := time.Now()
		if _, err := sub.wait(ctx, yield); err != nil {
			return false, c.waitErr(kind, name, err)
		}
		tried = sub.takenSince(start)
		mustTry = !tried
	default:
		mustTry = true
	}
	if mustTry {
		if ok, retry, err = try(ctx, sub.waiting()); err != nil || ok || wait == 0 {
			return ok, err
		}
		tried = true
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	// bound limits a wait by retry and by the caller's wait; it reports
	// false once the caller's wait ran out.
	bound := func(retry time.Duration) (time.Duration, bool) {
		switch {
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
		var fresh *subscription
		if fresh, err = c.pubsub.subscribe(ctx, channel, policy); err != nil {
			return false, err
		}
		sub = fresh
		defer fresh.close()
		// A message published before Redis confirmed the subscription is
		// lost: wait for the confirmation, then try again before waiting.
		d, more := bound(retry)
		if !more {
			return false, nil
		}
		sub.ready(ctx, d)
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
		if _, err := sub.wait(ctx, d); err != nil {
			return false, c.waitErr(kind, name, err)
		}
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("redisson: %s %q: %w", kind, name, err)
		}
		if ok, retry, err = try(ctx, sub.waiting()); err != nil || ok {
			return ok, err
		}
		tried = true
	}
}

// waitErr wraps an error that ended a wait.
func (c *Client) waitErr(kind, name string, err error) error {
	if errors.Is(err, ErrClientClosed) {
		return err
	}
	return fmt.Errorf("redisson: %s %q: %w", kind, name, err)
}
