package redisson

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// RateDecision is a keyed limiter's answer to one request.
type RateDecision struct {
	// Allowed reports whether the request's permits were granted (and
	// counted).
	Allowed bool

	// Limit is the largest number of permits one identity can use at once:
	// the limit per window of a FixedWindowLimiter, the burst of a
	// GCRALimiter.
	Limit int64

	// Remaining is the number of permits the identity could still use at
	// once after this decision.
	Remaining int64

	// RetryAfter is, when the request was rejected, how long until the same
	// request (same n) can be allowed, provided nothing else is spent in
	// between; 0 when it was allowed.
	RetryAfter time.Duration

	// ResetAfter is how long until the identity is back to a full
	// allowance (Remaining == Limit) if it sends nothing more.
	ResetAfter time.Duration
}

// RatePolicy describes a keyed limiter's configuration, for documentation
// and for HTTP headers (the IETF RateLimit-Policy field).
type RatePolicy struct {
	// Name is the limiter's name, the prefix of its Redis keys.
	Name string

	// Limit is the number of permits granted per Window in the long run:
	// the limit of a fixed window, the rate of a GCRA limiter.
	Limit int64

	// Window is the period Limit is counted over.
	Window time.Duration

	// Burst is the largest number of permits granted at once: Limit for a
	// fixed window, the burst of a GCRA limiter.
	Burst int64
}

// KeyedLimiter is a rate limiter with one configuration and many
// identities (a client IP, a user id, an API key), each limited on its own,
// whose state in Redis expires by itself once the identity is idle. Both
// FixedWindowLimiter and GCRALimiter implement it, and the httplimit
// middleware takes it.
//
// Key layout: the state of identity key under a limiter called name is the
// single Redis key <name>:{<key>}. The braces make each identity hash to
// its own Redis Cluster slot, so identities spread over the masters; since
// a decision touches one key, keys and names containing braces work too
// (a name with a hash tag, such as "{api}", puts all its identities in one
// slot). Two limiters must not share a name.
type KeyedLimiter interface {
	// Allow asks for n permits for the identity key, counts them when they
	// are granted, and reports the decision. A rejected request is not
	// counted. An error means the caller gets no permit; but a decision
	// whose reply was lost (the context ended while the call was in flight,
	// or the connection broke) may still have been counted by Redis: the
	// identity then pays for n permits it did not use. This errs on the
	// safe side (never more than the limit) and saves the extra write per
	// decision that undoing it would cost.
	Allow(ctx context.Context, key string, n int64) (RateDecision, error)

	// Peek reports the identity's state without spending anything: the
	// decision Allow(ctx, key, 1) would make now (Allowed, Remaining before
	// it, RetryAfter until one permit fits, ResetAfter), so that a following
	// Allow for n permits, if nothing else happens in between, sees the same
	// Remaining and leaves Remaining-n. It writes nothing to Redis. An
	// identity without state has a full allowance (Remaining == Limit).
	Peek(ctx context.Context, key string) (RateDecision, error)

	// Reset forgets the identity's state, so that its next decision has a
	// full allowance (the limit of a fixed window, the burst of a GCRA
	// limiter), as if it had been idle. An identity without state is left
	// as it is (no error). Only a key holding a keyed limiter's state is
	// deleted: another type, or a string that is not one, is ErrWrongType
	// and is left unchanged.
	Reset(ctx context.Context, key string) error

	// Policy returns the limiter's configuration.
	Policy() RatePolicy
}

// identityKey returns the Redis key of identity key under the limiter name:
// name + ":{" + key + "}". The braces make each identity's key hash to its
// own Redis Cluster slot (a key that itself contains braces still works:
// each decision touches a single key, so any slot will do).
func identityKey(name, key string) string {
	return name + ":{" + key + "}"
}

// checkAllow is the precondition shared by the keyed limiters' Allow: object
// (name, open client), configuration, key, then permits.
func checkAllow(c *Client, kind, name string, badConfig error, key string, n, most int64) error {
	if err := c.checkObject(name, nil); err != nil {
		return err
	}
	if badConfig != nil {
		return badConfig
	}
	if key == "" {
		return objectErrorf(kind, name, "%w", ErrEmptyKey)
	}
	if n <= 0 {
		return objectErr(kind, name, invalidOption(ErrInvalidPermits, "permits", n, "at least 1"))
	}
	if n > most {
		return objectErr(kind, name, invalidOption(ErrPermitsExceedRate, "permits", n, fmt.Sprintf("at most %d at once", most)))
	}
	return nil
}

// checkKey is the precondition of the keyed limiters' Peek and Reset:
// object (name, open client), configuration, then key.
func checkKey(c *Client, kind, name string, badConfig error, key string) error {
	if err := c.checkObject(name, nil); err != nil {
		return err
	}
	if badConfig != nil {
		return badConfig
	}
	if key == "" {
		return objectErrorf(kind, name, "%w", ErrEmptyKey)
	}
	return nil
}

// resetIdentity deletes the state of identity key (keyed_reset), after
// checkKey.
func resetIdentity(ctx context.Context, c *Client, kind, name string, badConfig error, key string) error {
	if err := checkKey(c, kind, name, badConfig, key); err != nil {
		return err
	}
	k := identityKey(name, key)
	if err := c.scripts.run(ctx, scriptKeyedReset, []string{k}).Err(); err != nil {
		return objectErr(kind, k, err)
	}
	return nil
}

// decisionReply decodes the reply {allowed, remaining, retry-after µs,
// reset-after µs} shared by the keyed limiters' scripts.
func decisionReply(kind, name string, limit int64, v any) (RateDecision, error) {
	a, ok := v.([]any)
	if !ok || len(a) != 4 {
		return RateDecision{}, objectErrorf(kind, name, "%w: %v", ErrUnexpectedReply, v)
	}
	var f [4]int64
	for i, x := range a {
		n, ok := x.(int64)
		if !ok {
			return RateDecision{}, objectErrorf(kind, name, "%w: %v", ErrUnexpectedReply, v)
		}
		f[i] = n
	}
	return RateDecision{
		Allowed:    f[0] == 1,
		Limit:      limit,
		Remaining:  max(f[1], 0),
		RetryAfter: time.Duration(max(f[2], 0)) * time.Microsecond,
		ResetAfter: time.Duration(max(f[3], 0)) * time.Microsecond,
	}, nil
}

// micros formats d in whole microseconds, for script arguments.
func micros(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) }
