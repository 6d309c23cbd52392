package redisson

import (
	"context"
	"time"
)

// Peek reports the identity key's state without spending anything: the
// wrapped limiter's Peek (one read-only script call), with the permits
// this client holds for the identity added to Remaining (they are counted
// in Redis already) and a refusal that stands in process reported as
// Allow would report it. So a following Allow(ctx, key, n) of this client,
// if nothing else happens in between, sees the same Remaining. Other
// clients' chunks are not visible. It changes nothing, in Redis or in
// process.
//
// It returns the errors of the wrapped limiter's Peek (ErrInvalidRate,
// ErrEmptyKey, ErrWrongType, ErrEmptyName, ErrClientClosed, a Redis error)
// and ErrInvalidOption for an invalid LocalQuota.
func (l *LocalQuotaLimiter) Peek(ctx context.Context, key string) (RateDecision, error) {
	if err := l.check(key, 1); err != nil {
		return RateDecision{}, err
	}
	d, err := l.peek(ctx, key)
	if err != nil {
		return RateDecision{}, err
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.ids[key]
	switch {
	case e == nil:
	case e.local > 0 && now.Before(e.validUntil):
		d.Remaining = min(d.Remaining+e.local, l.limit)
		d.Allowed, d.RetryAfter = true, 0
	case e.blockedNeed <= 1 && now.Before(e.blockedUntil):
		d.Allowed = false
		d.RetryAfter = max(d.RetryAfter, e.blockedUntil.Sub(now))
	}
	return d, nil
}

// Reset forgets the identity key's state: in Redis (the wrapped limiter's
// Reset) and in this client, whose unused chunk for it is dropped and
// whose standing refusal is lifted, so that its next Allow takes a chunk
// from a full allowance. Other clients in local-quota mode keep serving
// the chunks they hold for the identity (at most Chunk each) until those
// run out or expire.
//
// It returns the errors of the wrapped limiter's Reset (ErrInvalidRate,
// ErrEmptyKey, ErrWrongType with Redis unchanged, ErrEmptyName,
// ErrClientClosed, a Redis error) and ErrInvalidOption for an invalid
// LocalQuota; this client's state is then unchanged too.
func (l *LocalQuotaLimiter) Reset(ctx context.Context, key string) error {
	if err := l.check(key, 1); err != nil {
		return err
	}
	if err := l.reset(ctx, key); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e := l.ids[key]; e != nil {
		e.local, e.left, e.want = 0, 0, 1
		e.blockedUntil, e.blockedNeed = time.Time{}, 0
		if e.refill == nil {
			l.drop(e)
		}
	}
	return nil
}
