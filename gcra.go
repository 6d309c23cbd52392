package redisson

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// GCRALimiter grants each identity a steady rate of permits with bursts: an
// identity may use up to burst permits at once, and regains one permit
// every period/rate (the emission interval). It is the generic cell rate
// algorithm, a leaky bucket that stores a single timestamp per identity:
// the theoretical arrival time (TAT), at which the identity would be back
// to a full burst. Time is read from the Redis server (TIME), so clients'
// clocks do not matter.
//
// Layout: the TAT of identity key is the string <name>:{<key>} (see
// KeyedLimiter), in microseconds since the Unix epoch; it expires when the
// identity is back to a full burst, so an idle identity costs nothing in
// Redis. One script call (EVALSHA) per decision; a rejected request changes
// nothing.
//
// A GCRALimiter is safe for concurrent use and holds no state of its own.
type GCRALimiter struct {
	base        // its keys are per identity, in slots of their own: any name is usable
	rate        int64
	period      time.Duration
	burst       int64
	interval    time.Duration
	badConfig   error
	intervalArg string
	burstArg    string
}

const gcraKind = "gcra limiter"

// maxTolerance bounds burst × emission interval so that the script's
// microsecond arithmetic stays exact in Lua's doubles.
const maxTolerance = 100 * 365 * 24 * time.Hour

// GetGCRALimiter returns the GCRA limiter called name that grants each
// identity rate permits per period, in bursts of up to burst permits. It
// does no I/O. The emission interval period/rate is rounded down to the
// microsecond. A rate, period or burst below 1 (or an interval below 1µs,
// or burst × interval beyond 100 years) makes every call return
// ErrInvalidRate; an empty name, ErrEmptyName.
func (c *Client) GetGCRALimiter(name string, rate int64, period time.Duration, burst int64) *GCRALimiter {
	l := &GCRALimiter{base: newBase(c, gcraKind, name, nil), rate: rate, period: period, burst: burst}
	if rate >= 1 {
		l.interval = (period / time.Duration(rate)).Truncate(time.Microsecond)
	}
	bad := func(field string, value any, rule string) {
		l.badConfig = objectErr(gcraKind, name, invalidOption(ErrInvalidRate, field, value, rule))
	}
	switch {
	case rate < 1:
		bad("rate", rate, "at least 1")
	case burst < 1:
		bad("burst", burst, "at least 1")
	case l.interval < time.Microsecond:
		bad("period", period, fmt.Sprintf("at least 1µs per permit (rate %d)", rate))
	case burst > int64(maxTolerance/l.interval):
		bad("burst", burst, fmt.Sprintf("at most %d at this rate", int64(maxTolerance/l.interval)))
	}
	l.intervalArg = micros(l.interval)
	l.burstArg = strconv.FormatInt(burst, 10)
	return l
}

// Name returns the limiter's name, the prefix of its keys.
func (l *GCRALimiter) Name() string { return l.name }

// Interval returns the emission interval: period/rate, rounded down to the
// microsecond; one permit is regained per interval.
func (l *GCRALimiter) Interval() time.Duration { return l.interval }

// Policy returns the limiter's configuration: Limit is the rate, Window the
// period, Burst the burst.
func (l *GCRALimiter) Policy() RatePolicy {
	return RatePolicy{Name: l.name, Limit: l.rate, Window: l.period, Burst: l.burst}
}

// Allow asks for n permits for the identity key. When the identity has
// them, they are spent and the decision is Allowed; otherwise nothing
// changes and RetryAfter is how long until n permits will be available.
// Remaining is the number of permits available at once after the decision;
// ResetAfter is how long until the identity is back to a full burst.
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrInvalidPermits for n < 1, ErrPermitsExceedRate for n
// greater than the burst, ErrWrongType when the identity's key holds
// another Redis type (or a string that is not a time), ErrEmptyName,
// ErrClientClosed, or a Redis error; Redis is then unchanged.
func (l *GCRALimiter) Allow(ctx context.Context, key string, n int64) (d RateDecision, err error) {
	ctx, rec := l.begin(ctx, opRateAllow)
	defer func() { rec.end(err, grantedIf(d.Allowed)) }()
	if err := checkAllow(l.c, gcraKind, l.name, l.badConfig, key, n, l.burst); err != nil {
		return RateDecision{}, err
	}
	k := identityKey(l.name, key)
	v, err := l.c.scripts.run(ctx, scriptGCRA, []string{k}, l.intervalArg, l.burstArg, n).Result()
	if err != nil {
		return RateDecision{}, objectErr(gcraKind, k, err)
	}
	return decisionReply(gcraKind, l.name, l.burst, v)
}

// Peek reports the identity key's state without spending anything: the
// decision Allow(ctx, key, 1) would make now (see KeyedLimiter.Peek). It
// is one read-only script call; an identity without state has a full
// allowance (the burst).
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrWrongType when the identity's key holds another Redis
// type (or a string that is not this limiter's state), ErrEmptyName,
// ErrClientClosed, or a Redis error. It never writes to Redis.
func (l *GCRALimiter) Peek(ctx context.Context, key string) (d RateDecision, err error) {
	ctx, rec := l.begin(ctx, opRatePeek)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := checkKey(l.c, gcraKind, l.name, l.badConfig, key); err != nil {
		return RateDecision{}, err
	}
	k := identityKey(l.name, key)
	v, err := l.c.scripts.run(ctx, scriptGCRAPeek, []string{k}, l.intervalArg, l.burstArg).Result()
	if err != nil {
		return RateDecision{}, objectErr(gcraKind, k, err)
	}
	return decisionReply(gcraKind, l.name, l.burst, v)
}

// Reset forgets the identity key's state (deletes <name>:{<key>}), so that
// its next Allow has a full allowance (the burst); see KeyedLimiter.Reset. It
// does not depend on the configuration beyond its validity: any handle
// with the limiter's name resets it. One script call; an identity without
// state is no error.
//
// It returns ErrInvalidRate for an invalid configuration, ErrEmptyKey for
// an empty key, ErrWrongType when the key holds another Redis type or a
// string that is not digits (Redis is then unchanged), ErrEmptyName,
// ErrClientClosed, or a Redis error.
func (l *GCRALimiter) Reset(ctx context.Context, key string) (err error) {
	ctx, rec := l.begin(ctx, opRateReset)
	defer func() { rec.end(err, OutcomeOK) }()
	return resetIdentity(ctx, l.c, gcraKind, l.name, l.badConfig, key)
}
