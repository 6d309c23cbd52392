package redisson

import (
	"errors"
	"strings"
)

// Errors returned by the objects of this package. Compare with errors.Is: the
// returned errors often wrap one of these with the object's name or the Redis
// reply that caused them.
var (
	// ErrClientClosed is returned by every call made after Client.Close.
	ErrClientClosed = errors.New("redisson: client closed")

	// ErrEmptyName is returned by every call on an object whose name is empty.
	ErrEmptyName = errors.New("redisson: empty object name")

	// ErrInvalidName is returned by every call on an object whose name
	// cannot work on the client's topology (on Redis Cluster, a name with
	// '{' but no complete hash tag would put the object's keys in different
	// slots).
	ErrInvalidName = errors.New("redisson: invalid object name")

	// ErrNegativeDuration is returned when a wait, lease or timeout is negative.
	ErrNegativeDuration = errors.New("redisson: negative duration")

	// ErrInvalidOption is returned by New for an Options value out of range.
	ErrInvalidOption = errors.New("redisson: invalid option")

	// ErrNotHeld is returned by Unlock (and the other release calls) when the
	// caller's owner does not hold the lock: it never acquired it, already
	// released it, or its lease ran out.
	ErrNotHeld = errors.New("redisson: lock not held by this owner")

	// ErrLeaseLost is the cause reported by a lock handle's Err and Context when
	// the hold ended without Unlock: the key expired, was deleted, or the watchdog
	// could not renew it before the lease ran out. Unlock after such a loss
	// returns an error that matches both ErrLeaseLost and ErrNotHeld.
	ErrLeaseLost = errors.New("redisson: lock lease lost")

	// ErrWrongType is returned when the key behind an object holds a Redis value
	// of another type (a string where a lock hash is expected, for example).
	// Redis is left unchanged.
	ErrWrongType = errors.New("redisson: key holds a value of the wrong type")

	// ErrUnexpectedReply is returned when a script or command answers with a
	// reply this package does not understand. It indicates a bug or a foreign
	// writer at the same key.
	ErrUnexpectedReply = errors.New("redisson: unexpected reply from redis")

	// ErrNotReplicated is returned by a lock acquisition that fewer
	// replicas acknowledged than Options.ReplicaAck asks for; the
	// acquisition was undone.
	ErrNotReplicated = errors.New("redisson: acquisition not acknowledged by enough replicas")

	// ErrInvalidRate is returned by rate limiters for a rate, limit, burst,
	// interval or period that is zero or negative, or a keep-alive shorter
	// than the interval.
	ErrInvalidRate = errors.New("redisson: invalid rate limit")

	// ErrPermitsExceedRate is returned when one request asks a rate limiter
	// for more permits than its rate (or burst) could ever grant at once.
	ErrPermitsExceedRate = errors.New("redisson: permits requested exceed the rate")

	// ErrNotInitialized is returned by calls on an object that must be
	// configured first (a RateLimiter before TrySetRate/SetRate, a
	// BloomFilter before TryInit).
	ErrNotInitialized = errors.New("redisson: object not initialized")
)

// leaseLostError matches both ErrLeaseLost and ErrNotHeld.
type leaseLostError struct{ name string }

func (e *leaseLostError) Error() string {
	return "redisson: lock " + e.name + ": lease lost, lock not held by this owner"
}

func (e *leaseLostError) Is(target error) bool {
	return target == ErrLeaseLost || target == ErrNotHeld
}

// wrongTypeError keeps the Redis reply and matches ErrWrongType.
type wrongTypeError struct {
	name string
	err  error
}

func (e *wrongTypeError) Error() string {
	return "redisson: " + e.name + ": key holds a value of the wrong type: " + e.err.Error()
}

func (e *wrongTypeError) Is(target error) bool { return target == ErrWrongType }

func (e *wrongTypeError) Unwrap() error { return e.err }

// classify turns a WRONGTYPE reply into an error matching ErrWrongType and
// returns every other error unchanged.
func classify(name string, err error) error {
	if err != nil && strings.Contains(err.Error(), "WRONGTYPE") {
		return &wrongTypeError{name: name, err: err}
	}
	return err
}
