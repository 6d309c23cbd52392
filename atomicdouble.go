package redisson

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

const atomicDoubleKind = "atomicdouble"

// AtomicDouble is a distributed float64, wire-compatible with Redisson's
// RAtomicDouble: the key is the name and holds the value as decimal text
// (no codec), written as Redisson writes it (the plain form of Java's
// shortest text: 1.5 is "1.5", 10 is "10.0", 1e20 is
// "100000000000000000000") and changed with INCRBYFLOAT, after which it
// holds Redis's own formatting ("11", "11.1"). A missing key reads as 0.
//
// NaN and the infinities cannot be stored (ErrInvalidNumber), nor can an
// addition whose result would be infinite. A key of another Redis type, or a
// string that is no finite number, makes every call return an error
// matching ErrWrongType and leaves the key unchanged.
//
// Every call that changes the value takes effect once per call, even when
// go-redis resends it after a lost reply, and reports its first result, as
// AtomicLong's do: the call writes a marker
// redisson_ad_call:{name}:<client uuid>:<n> with its result, which the
// client deletes once the call has returned (it expires after RetryWindow
// otherwise).
//
// An AtomicDouble is safe for concurrent use and holds no state of its own.
type AtomicDouble struct {
	base
	callPre string // call marker prefix: redisson_ad_call:{name}:<client uuid>:
	cached  bool   // WithClientSideCaching
}

// cachedDouble is an AtomicDouble's value in the client-side cache: a type
// of its own, so that a cached Bucket of the same name never serves it.
type cachedDouble float64

// GetAtomicDouble returns the atomic double called name. It does no I/O;
// an empty name makes every method return ErrEmptyName.
// WithClientSideCaching serves Get from a cache Redis keeps fresh (see its
// guarantees); other options are ignored.
func (c *Client) GetAtomicDouble(name string, opts ...ObjectOption) *AtomicDouble {
	callPre := prefixName("redisson_ad_call", name) + ":" + c.id + ":"
	return &AtomicDouble{base: newBase(c, atomicDoubleKind, name, nil, callPre), callPre: callPre,
		cached: objectOptionsOf(opts).sideCache}
}

// write marks a write of the value for the client-side cache, if the
// atomic double has one; the returned function ends it.
func (a *AtomicDouble) write() func() { return cacheWrite(a.c.cacheFor(a.cached), a.name) }

// marker returns a fresh call marker key.
func (a *AtomicDouble) marker() string { return a.callPre + a.c.newRequest() }

// Name returns the atomic double's name, its Redis key.
func (a *AtomicDouble) Name() string { return a.name }

// wrap replaces the base's: a stored string that is no number is
// ErrWrongType, a result that would be infinite ErrInvalidNumber.
func (a *AtomicDouble) wrap(err error) error { return floatKeyErr(atomicDoubleKind, a.name, err) }

// floatKeyErr is objectErr for a key holding decimal text (AtomicDouble,
// DoubleAdder's counters).
func floatKeyErr(kind, name string, err error) error {
	switch {
	case err == nil || errors.Is(err, ErrClientClosed):
		return err
	case strings.Contains(err.Error(), "not a valid float"):
		return &objectError{kind: kind, name: name, cause: &wrongTypeError{err: err}}
	case strings.Contains(err.Error(), "NaN or Infinity"):
		return objectErrorf(kind, name, "%w: the result would be infinite: %w", ErrInvalidNumber, err)
	}
	return objectErr(kind, name, err)
}

// number checks v, a value to store or add.
func (a *AtomicDouble) number(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return a.errorf("%w: %v", ErrInvalidNumber, v)
	}
	return nil
}

// Get returns the value, 0 when the key does not exist. It returns
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error.
func (a *AtomicDouble) Get(ctx context.Context) (float64, error) {
	if a.cached && !a.c.observed && a.check() == nil {
		if v, _, hit := cacheHit[cachedDouble](a.c, a.name, ""); hit {
			return float64(v), nil // the hit path: no operation record to keep
		}
	}
	return a.get(ctx)
}

// get is Get through Redis or, with an Observer, the cache.
func (a *AtomicDouble) get(ctx context.Context) (_ float64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if a.cached {
		if tc := a.c.clientCache(); tc != nil {
			v, _, err := cachedRead(ctx, &a.base, tc, "", func(reply any) (cachedDouble, bool, error) {
				s, ok := reply.(string)
				if !ok {
					return 0, false, nil // missing: 0
				}
				f, err := a.parse(s, nil)
				return cachedDouble(f), err == nil, err
			})
			return float64(v), err
		}
	}
	a.c.trip(ctx, 1)
	v, err := a.c.rdb.Get(ctx, a.name).Result()
	return a.parse(v, err)
}

// Set sets the value. It returns ErrInvalidNumber for NaN or an infinity,
// ErrEmptyName, ErrInvalidName, ErrWrongType (for a key of another type or a
// string that is no number, left unchanged), ErrClientClosed, or a Redis
// error.
func (a *AtomicDouble) Set(ctx context.Context, v float64) (err error) {
	ctx, rec, err := a.open(ctx, opAtomicDSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err == nil {
		err = a.number(v)
	}
	if err != nil {
		return err
	}
	defer a.write()()
	return a.wrap(a.c.scripts.run(ctx, scriptAtomicDSet, []string{a.name, a.marker()},
		formatJavaDouble(v), "", a.c.retryWindowArg).Err())
}

// GetAndSet sets the value and returns the previous one (0 when the key did
// not exist). It returns the errors of Set.
func (a *AtomicDouble) GetAndSet(ctx context.Context, v float64) (_ float64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDGetAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err == nil {
		err = a.number(v)
	}
	if err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v2, err := a.c.scripts.run(ctx, scriptAtomicDSet, []string{a.name, m}, formatJavaDouble(v), "get", a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parseReply(v2, err)
}

// AddAndGet adds delta and returns the new value. It returns the errors of
// Set, and ErrInvalidNumber (value unchanged) when the sum would be
// infinite.
func (a *AtomicDouble) AddAndGet(ctx context.Context, delta float64) (_ float64, err error) {
	ctx, rec := a.begin(ctx, opAtomicDAddAndGet)
	defer func() { rec.end(err, OutcomeOK) }()
	return a.addAndGet(ctx, delta)
}

func (a *AtomicDouble) addAndGet(ctx context.Context, delta float64) (float64, error) {
	if err := a.check(); err != nil {
		return 0, err
	}
	if err := a.number(delta); err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v, err := a.c.scripts.run(ctx, scriptAtomicDAdd, []string{a.name, m}, formatJavaDouble(delta), a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parseReply(v, err)
}

// GetAndAdd adds delta and returns the previous value (the new one less
// delta, as Redisson computes it). It returns the errors of AddAndGet.
func (a *AtomicDouble) GetAndAdd(ctx context.Context, delta float64) (_ float64, err error) {
	ctx, rec := a.begin(ctx, opAtomicDGetAndAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	n, err := a.addAndGet(ctx, delta)
	if err != nil {
		return 0, err
	}
	return n - delta, nil
}

// IncrementAndGet adds 1 and returns the new value; see AddAndGet.
func (a *AtomicDouble) IncrementAndGet(ctx context.Context) (float64, error) {
	return a.AddAndGet(ctx, 1)
}

// DecrementAndGet subtracts 1 and returns the new value; see AddAndGet.
func (a *AtomicDouble) DecrementAndGet(ctx context.Context) (float64, error) {
	return a.AddAndGet(ctx, -1)
}

// GetAndIncrement adds 1 and returns the previous value; see AddAndGet.
func (a *AtomicDouble) GetAndIncrement(ctx context.Context) (float64, error) {
	return a.GetAndAdd(ctx, 1)
}

// GetAndDecrement subtracts 1 and returns the previous value; see AddAndGet.
func (a *AtomicDouble) GetAndDecrement(ctx context.Context) (float64, error) {
	return a.GetAndAdd(ctx, -1)
}

// CompareAndSet sets the value to update when it equals expect as a number
// (a missing key counts as 0, as in Redisson; "11" equals 11.0), and
// reports whether it did. It returns the errors of Set.
func (a *AtomicDouble) CompareAndSet(ctx context.Context, expect, update float64) (_ bool, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDCompareAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err == nil {
		err = errors.Join(a.number(expect), a.number(update))
	}
	if err != nil {
		return false, err
	}
	m := a.marker()
	defer a.write()()
	n, err := a.c.scripts.run(ctx, scriptAtomicDCAS, []string{a.name, m},
		formatJavaDouble(expect), formatJavaDouble(update), a.c.retryWindowArg).Int64()
	forgetCallMarker(a.c, m, err)
	return n == 1, a.wrap(err)
}

// GetAndDelete deletes the key and returns the value it held (0 when it did
// not exist). It returns the errors of Get; on ErrWrongType the key is kept.
func (a *AtomicDouble) GetAndDelete(ctx context.Context) (_ float64, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDGetAndDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m := a.marker()
	defer a.write()()
	v, err := a.c.scripts.run(ctx, scriptAtomicDGetDel, []string{a.name, m}, a.c.retryWindowArg).Result()
	forgetCallMarker(a.c, m, err)
	return a.parseReply(v, err)
}

// Delete deletes the key (whatever type it holds, like Redisson) and reports
// whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (a *AtomicDouble) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := a.open(ctx, opAtomicDDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	defer a.write()()
	a.c.trip(ctx, 1)
	n, err := a.c.rdb.Del(ctx, a.name).Result()
	return n == 1, a.wrap(err)
}

// parseReply reads a script's string-or-nil reply.
func (a *AtomicDouble) parseReply(v any, err error) (float64, error) {
	if err == nil && v == nil {
		return 0, nil
	}
	if err != nil {
		return a.parse("", err)
	}
	s, ok := v.(string)
	if !ok {
		return 0, a.errorf("%w: reply %T", ErrUnexpectedReply, v)
	}
	return a.parse(s, nil)
}

// parse reads a stored value (redis.Nil is 0).
func (a *AtomicDouble) parse(s string, err error) (float64, error) {
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, a.wrap(err)
	}
	f, ok := parseDecimal(s)
	if !ok {
		return 0, a.wrap(errors.New("value " + strconv.Quote(s) + " is not a valid float"))
	}
	return f, nil
}
