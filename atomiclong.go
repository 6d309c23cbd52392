package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

const atomicKind = "atomiclong"

// AtomicLong is a distributed int64, wire-compatible with Redisson's
// RAtomicLong: the key is the name and holds the value as a decimal string
// (no codec), changed with INCRBY and small scripts. A missing key reads as
// 0.
//
// A key of another Redis type, or a string that is not a decimal int64,
// makes every call return an error matching ErrWrongType and leaves the key
// unchanged. An addition that would overflow int64 is a Redis error ("value
// is not an integer or out of range", wrapped) and changes nothing.
//
// Every call that changes the value takes effect once per call, even when
// go-redis resends it after a lost reply, and reports its first result:
// the call writes a marker redisson_al_call:{name}:<client uuid>:<n> with its
// result, which a resend finds; the client deletes it once the call has
// returned (it expires after RetryWindow otherwise). The value itself stays
// Redisson's decimal string at the name.
//
// An AtomicLong is safe for concurrent use and holds no state of its own.
type AtomicLong struct {
	base
	callPre string // call marker prefix: redisson_al_call:{name}:<client uuid>:
	cached  bool   // WithClientSideCaching
}

// cachedLong is an AtomicLong's value in the client-side cache: a type of
// its own, so that a cached Bucket of the same name never serves it.
type cachedLong int64

// GetAtomicLong returns the atomic long called name. It does no I/O; an
// empty name makes every method return ErrEmptyName. WithClientSideCaching
// serves Get from a cache Redis keeps fresh (see its guarantees); other
// options are ignored.
func (c *Client) GetAtomicLong(name string, opts ...ObjectOption) *AtomicLong {
	callPre := prefixName("redisson_al_call", name) + ":" + c.id + ":"
	return &AtomicLong{base: newBase(c, atomicKind, name, nil, callPre), callPre: callPre,
		cached: objectOptionsOf(opts).sideCache}
}

// write marks a write of the value for the client-side cache, if the
// atomic long has one; the returned function ends it.
func (a *AtomicLong) write() func() { return cacheWrite(a.c.cacheFor(a.cached), a.name) }

// marker returns a fresh call marker key.
func (a *AtomicLong) marker() string { return a.callPre + a.c.newRequest() }

// Name returns the atomic long's name, its Redis key.
func (a *AtomicLong) Name() string { return a.name }

// wrap replaces the base's: the state is one integer key (intKeyErr), and
// an overflow is the sum's, not a count's.
func (a *AtomicLong) wrap(err error) error {
	if err != nil && overflows(err) { // not the semaphore's ErrInvalidPermits
		return objectErrorf(atomicKind, a.name, "the sum would overflow int64: %w", err)
	}
	return intKeyErr(atomicKind, a.name, err)
}

// Get returns the value, 0 when the key does not exist. It returns
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error.
func (a *AtomicLong) Get(ctx context.Context) (int64, error) {
	if a.cached && !a.c.observed && a.check() == nil {
		if v, _, hit := cacheHit[cachedLong](a.c, a.name, ""); hit {
			return int64(v), nil // the hit path: no operation record to keep
		}
	}
	return a.get(ctx)
}

// get is Get through Redis or, with an Observer, the cache.
func (a *AtomicLong) get(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if a.cached {
		if tc := a.c.clientCache(); tc != nil {
			v, _, err := cachedRead(ctx, &a.base, tc, "", func(reply any) (cachedLong, bool, error) {
				if reply == nil {
					return 0, false, nil
				}
				s, _ := reply.(string)
				n, err := strconv.ParseInt(s, 10, 64)
				if err != nil {
					return 0, false, a.wrap(fmt.Errorf("value %q is not an integer", s))
				}
				return cachedLong(n), true, nil
			})
			return int64(v), err
		}
	}
	return readIntKey(ctx, a.c, atomicKind, a.name)
}

// Set sets the value. It returns ErrEmptyName, ErrInvalidName, ErrWrongType
// (for a key of another type or a string that is no integer, left
// unchanged), ErrClientClosed, or a Redis error.
func (a *AtomicLong) Set(ctx context.Context, v int64) (err error) {
	ctx, rec, err := a.open(ctx, opAtomicSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	defer a.write()()
	return a.wrap(a.c.scripts.run(ctx, scriptAtomicSet, []string{a.name, a.marker()}, v, "", a.c.retryWindowArg).Err())
}

// GetAndSet sets the value and returns the previous one (0 when the key did
// not exist). It returns the errors of Get.
func (a *AtomicLong) GetAndSet(ctx context.Context, v int64) (_ int64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicGetAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v2, err := a.c.scripts.run(ctx, scriptAtomicSet, []string{a.name, m}, v, "get", a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parse(v2, err)
}

// AddAndGet adds delta and returns the new value. It returns the errors of
// Get, and a Redis error (value unchanged) when the sum overflows int64.
func (a *AtomicLong) AddAndGet(ctx context.Context, delta int64) (_ int64, err error) {
	ctx, rec := a.begin(ctx, opAtomicAddAndGet)
	defer func() { rec.end(err, OutcomeOK) }()
	return a.addAndGet(ctx, delta)
}

func (a *AtomicLong) addAndGet(ctx context.Context, delta int64) (int64, error) {
	if err := a.check(); err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v, err := a.c.scripts.run(ctx, scriptAtomicAdd, []string{a.name, m}, delta, a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parse(v, err)
}

// GetAndAdd adds delta and returns the previous value. It returns the errors
// of AddAndGet.
func (a *AtomicLong) GetAndAdd(ctx context.Context, delta int64) (_ int64, err error) {
	ctx, rec := a.begin(ctx, opAtomicGetAndAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	n, err := a.addAndGet(ctx, delta)
	if err != nil {
		return 0, err
	}
	return n - delta, nil
}

// IncrementAndGet adds 1 and returns the new value; see AddAndGet.
func (a *AtomicLong) IncrementAndGet(ctx context.Context) (int64, error) {
	return a.AddAndGet(ctx, 1)
}

// DecrementAndGet subtracts 1 and returns the new value; see AddAndGet.
func (a *AtomicLong) DecrementAndGet(ctx context.Context) (int64, error) {
	return a.AddAndGet(ctx, -1)
}

// GetAndIncrement adds 1 and returns the previous value; see AddAndGet.
func (a *AtomicLong) GetAndIncrement(ctx context.Context) (int64, error) {
	return a.GetAndAdd(ctx, 1)
}

// GetAndDecrement subtracts 1 and returns the previous value; see AddAndGet.
func (a *AtomicLong) GetAndDecrement(ctx context.Context) (int64, error) {
	return a.GetAndAdd(ctx, -1)
}

// CompareAndSet sets the value to update when it equals expect (a missing
// key counts as 0, as in Redisson), and reports whether it did. It returns
// the errors of Get.
func (a *AtomicLong) CompareAndSet(ctx context.Context, expect, update int64) (_ bool, err error) {
	ctx, rec, err := a.open(ctx, opAtomicCompareAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	m := a.marker()
	defer a.write()()
	n, err := a.c.scripts.run(ctx, scriptAtomicCAS, []string{a.name, m},
		strconv.FormatInt(expect, 10), update, a.c.retryWindowArg).Int64()
	forgetCallMarker(a.c, m, err)
	return n == 1, a.wrap(err)
}

// GetAndDelete deletes the key and returns the value it held (0 when it did
// not exist). It returns the errors of Get; on ErrWrongType the key is kept.
func (a *AtomicLong) GetAndDelete(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicGetAndDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v, err := a.c.scripts.run(ctx, scriptAtomicGetDel, []string{a.name, m}, a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parse(v, err)
}

// Delete deletes the key (whatever type it holds, like Redisson) and reports
// whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (a *AtomicLong) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	defer a.write()()
	a.c.trip(ctx, 1)
	n, err := a.c.rdb.Del(ctx, a.name).Result()
	return n == 1, a.wrap(err)
}

// parse reads a script's integer-string-or-nil reply.
func (a *AtomicLong) parse(v any, err error) (int64, error) {
	if errors.Is(err, redis.Nil) || (err == nil && v == nil) {
		return 0, nil
	}
	if err != nil {
		return 0, a.wrap(err)
	}
	s, ok := v.(string)
	if !ok {
		return 0, objectErrorf(atomicKind, a.name, "%w: reply %T", ErrUnexpectedReply, v)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, a.wrap(fmt.Errorf("value %q is not an integer", s))
	}
	return n, nil
}
