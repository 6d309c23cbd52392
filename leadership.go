package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// Leadership is one candidate's term as the leader of an Election, from
// Campaign until Resign or the loss of its lease. It is safe for concurrent
// use.
type Leadership struct {
	e        *Election
	lock     *Lock // the election's lock, held by this candidate alone
	h        *hold
	value    string
	term     int64
	since    time.Time // the server's clock when the record was written
	resigned atomic.Bool
	reported sync.Once // the end's event
}

// report emits the leadership's start, and arranges for its end to be
// emitted once, whatever ends it (Resign, the lease's loss, Close).
func (l *Leadership) report() {
	em := l.e.c.emit
	_, owner := l.h.what()
	em.emit(Event{Type: EventLeaderElected, Kind: l.e.kind, Name: l.e.name, Owner: owner, Count: int(l.term)})
	l.h.whenEnded(func(err error) {
		l.reported.Do(func() {
			em.emit(Event{Type: EventLeadershipEnded, Kind: l.e.kind, Name: l.e.name, Owner: owner, Count: int(l.term),
				Err: l.cause(err)})
		})
	})
}

// Term returns the leadership's term: the fencing token of its lock
// acquisition (Lock.Token), higher than every earlier term of the
// election. Pass it to the resources the leader writes to, which should
// refuse a term lower than one they have seen.
func (l *Leadership) Term() int64 { return l.term }

// Value returns the value the leadership campaigned with.
func (l *Leadership) Value() string { return l.value }

// Done returns a channel that is closed when the leadership ends: by
// Resign, by the loss of its lease, or by the client's Close. Err then
// tells which.
func (l *Leadership) Done() <-chan struct{} { return l.h.done }

// Err returns nil while the caller leads; ErrResigned after Resign, an
// error matching ErrLeadershipLost (and ErrLeaseLost) once the lease is
// lost, and ErrClientClosed after the client's Close. Unlike Done it looks
// at the clock too: once the lease deadline known here has passed (a
// process paused for longer than the lease, then resumed) it reports the
// loss at once, even before the watchdog closes Done. Check it right before
// each action only the leader may take.
func (l *Leadership) Err() error {
	if ended, err := l.h.ended(); ended {
		return l.cause(err)
	}
	if d := l.e.c.watchdog.deadline(l.h); !d.IsZero() && !time.Now().Before(d) {
		return ErrLeadershipLost
	}
	return nil
}

// cause is the leadership's version of its hold's end.
func (l *Leadership) cause(err error) error {
	switch {
	case l.resigned.Load() || errors.Is(err, ErrNotHeld) && !errors.Is(err, ErrLeaseLost):
		return ErrResigned
	case errors.Is(err, ErrLeaseLost):
		return ErrLeadershipLost
	}
	return err
}

// Context returns a context that is cancelled, with Err's value as its
// cause, when the leadership ends (or parent ends). Run the leader's work
// under it. Call cancel to release its resources.
func (l *Leadership) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-l.h.done:
			cancel(l.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// Resign ends the leadership: it releases the election's lock, whose
// unlock message wakes the next candidate at once, and then deletes the
// leader record if it is still this leadership's (observers get no new
// leader until the next one announces itself). It still runs when ctx is
// already cancelled, within the client's CleanupTimeout. A second Resign
// returns nil. It returns an error matching ErrLeadershipLost when the
// lease had been lost before (there was nothing to hand over),
// ErrClientClosed, or a Redis error.
func (l *Leadership) Resign(ctx context.Context) (err error) {
	e := l.e
	ctx, rec, err := e.open(ctx, opElectionResign)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), e.c.opts.CleanupTimeout)
		defer cancel()
	}
	if _, herr := l.h.ended(); herr != nil && !l.resigned.Load() && errors.Is(herr, ErrLeaseLost) {
		return e.errorf("resign: %w", ErrLeadershipLost)
	}
	if !l.resigned.CompareAndSwap(false, true) {
		return nil
	}
	if err := l.lock.Unlock(ctx); err != nil {
		if errors.Is(err, ErrLeaseLost) {
			return e.errorf("resign: %w", ErrLeadershipLost)
		}
		l.resigned.Store(false) // the lock may still be held: Resign may be retried
		return err
	}
	pub := e.c.pubsub.publishArg(ctx)
	if err := e.c.scripts.run(ctx, scriptElectionResign, []string{e.record, e.channel}, l.lock.ident().field, pub).Err(); err != nil {
		// The lock is released: the record no longer counts (Leader checks
		// its owner against the lock), so this is only untidy.
		return e.wrap(err)
	}
	return nil
}
