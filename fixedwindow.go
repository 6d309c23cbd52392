package redisson

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// FixedWindowLimiter grants each identity at most a limit of permits per
// window. An identity's window opens with its first allowed request (it is
// not aligned to the clock) and its counter expires when the window ends,
// so an idle identity costs nothing in Redis. It is the cheapest limiter:
// one string per active identity and one script call (EVALSHA) per
// decision. A client may use up to twice the limit across the boundary of
// two windows; use a GCRALimiter for a smooth rate.
//
// Layout: the counter of identity key is the string <name>:{<key>} (see
// KeyedLimiter for why the braces); its TTL is the time left in the window.
// A rejected request is not counted: the script reads the counter and
// increments it only when the request fits, in the same round trip.
//
// A FixedWindowLimiter is safe for concurrent use and holds no state of its
// own.
type FixedWindowLimiter struct {
	base      // its keys are per identity, in slots of their own: any name is usable
	limit     int64
	window    time.Duration
	badConfig error
	limitArg  string
	windowArg string
}

const fixedWindowKind = "fixed window limiter"

// maxExactCount is the largest limit a fixed window counts exactly: its
// script compares counts in Lua's numbers, doubles, exact to 2^53.
const maxExactCount = 1<<53 - 1

// GetFixedWindowLimiter returns the fixed-window limiter called name that
// grants each identity at most limit permits per window. It does no I/O. A
// limit below 1 or above 2^53-1 (what the script counts exactly), or a
// window below 1ms, makes every call return ErrInvalidRate; an empty name,
// ErrEmptyName. Windows are counted in whole
// milliseconds.
func (c *Client) GetFixedWindowLimiter(name string, limit int64, window time.Duration) *FixedWindowLimiter {
	l := &FixedWindowLimiter{
		base:      newBase(c, fixedWindowKind, name, nil),
		limit:     limit,
		window:    window.Truncate(time.Millisecond),
		limitArg:  strconv.FormatInt(limit, 10),
		windowArg: strconv.FormatInt(window.Milliseconds(), 10),
	}
	switch {
	case limit < 1 || limit > maxExactCount:
		l.badConfig = objectErr(fixedWindowKind, name, invalidOption(ErrInvalidRate, "limit", limit, fmt.Sprintf("1 to %d", int64(maxExactCount))))
	case window < time.Millisecond:
		l.badConfig = objectErr(fixedWindowKind, name, invalidOption(ErrInvalidRate, "window", window, "at least 1ms"))
	}
	return l
}

// Name returns the limiter's name, the prefix of its keys.
func (l *FixedWindowLimiter) Name() string { return l.name }

// Policy returns the limiter's configuration: Limit and Burst are the
// limit, Window the window.
func (l *FixedWindowLimiter) Policy() RatePolicy {
	return RatePolicy{Name: l.name, Limit: l.limit, Window: l.window, Burst: l.limit}
}

// Allow asks for n permits for the identity key in its current window. When
// they fit, they are counted and the decision is Allowed; otherwise nothing
// is counted and RetryAfter (equal to ResetAfter) is the time left in the
// window. Remaining is the number of permits left in the window.
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrInvalidPermits for n < 1, ErrPermitsExceedRate for n
// greater than the limit, ErrWrongType when the identity's key holds
// another Redis type (or a string that is not a count), ErrEmptyName,
// ErrClientClosed, or a Redis error; Redis is then unchanged.
func (l *FixedWindowLimiter) Allow(ctx context.Context, key string, n int64) (d RateDecision, err error) {
	ctx, rec := l.begin(ctx, opRateAllow)
	defer func() { rec.end(err, grantedIf(d.Allowed)) }()
	if err := checkAllow(l.c, fixedWindowKind, l.name, l.badConfig, key, n, l.limit); err != nil {
		return RateDecision{}, err
	}
	k := identityKey(l.name, key)
	v, err := l.c.scripts.run(ctx, scriptFixedWindow, []string{k}, l.limitArg, l.windowArg, n).Result()
	if err != nil {
		return RateDecision{}, objectErr(fixedWindowKind, k, err)
	}
	return decisionReply(fixedWindowKind, l.name, l.limit, v)
}

// Peek reports the identity key's state without spending anything: the
// decision Allow(ctx, key, 1) would make now (see KeyedLimiter.Peek). It
// is one read-only script call; an identity without state has a full
// allowance (the limit).
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrWrongType when the identity's key holds another Redis
// type (or a string that is not this limiter's state), ErrEmptyName,
// ErrClientClosed, or a Redis error. It never writes to Redis.
func (l *FixedWindowLimiter) Peek(ctx context.Context, key string) (d RateDecision, err error) {
	ctx, rec := l.begin(ctx, opRatePeek)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := checkKey(l.c, fixedWindowKind, l.name, l.badConfig, key); err != nil {
		return RateDecision{}, err
	}
	k := identityKey(l.name, key)
	v, err := l.c.scripts.run(ctx, scriptFixedWindowPeek, []string{k}, l.limitArg, l.windowArg).Result()
	if err != nil {
		return RateDecision{}, objectErr(fixedWindowKind, k, err)
	}
	return decisionReply(fixedWindowKind, l.name, l.limit, v)
}

// Reset forgets the identity key's state (deletes <name>:{<key>}), so that
// its next Allow has a full allowance (the limit); see KeyedLimiter.Reset. It
// does not depend on the configuration beyond its validity: any handle
// with the limiter's name resets it. One script call; an identity without
// state is no error.
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrWrongType when the key holds another Redis type or a
// string that is not digits (Redis is then unchanged), ErrEmptyName,
// ErrClientClosed, or a Redis error.
func (l *FixedWindowLimiter) Reset(ctx context.Context, key string) (err error) {
	ctx, rec := l.begin(ctx, opRateReset)
	defer func() { rec.end(err, OutcomeOK) }()
	return resetIdentity(ctx, l.c, fixedWindowKind, l.name, l.badConfig, key)
}
