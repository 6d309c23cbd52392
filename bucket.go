package redisson

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

const bucketKind = "bucket"

// Bucket is one value of type T stored in Redis, wire-compatible with
// Redisson's RBucket: the key is the bucket's name and holds the value
// encoded with the bucket's codec (Options.Codec unless WithCodec says
// otherwise).
//
// A missing bucket reads as (zero, false, nil). A stored value that the
// codec cannot decode into T is an error matching ErrCodec that names the
// bucket and the codec, never a zero value. A key holding another Redis type
// (a hash, a list) is ErrWrongType, and every write leaves it unchanged.
//
// A Bucket is safe for concurrent use and holds no state of its own; it may
// be copied.
type Bucket[T any] struct {
	base
	cached bool // WithClientSideCaching
}

// GetBucket returns the bucket called name, holding values of type T. It
// does no I/O. opts may give the bucket its own codec (WithCodec); a nil
// option or a nil codec keeps the client's default; WithClientSideCaching
// serves Get from a cache Redis keeps fresh (see its guarantees). An empty
// name makes every method return ErrEmptyName.
//
// Methods cannot have type parameters in Go, so this factory is a function
// rather than a method of Client.
func GetBucket[T any](c *Client, name string, opts ...ObjectOption) *Bucket[T] {
	return &Bucket[T]{base: newBase(c, bucketKind, name, c.objectCodec(opts)), cached: objectOptionsOf(opts).sideCache}
}

// write marks a write of the bucket for its client-side cache, if it has
// one; the returned function ends it.
func (b *Bucket[T]) write() func() {
	if !b.cached {
		return func() {}
	}
	return cacheWrite(b.c.clientCache(), b.name)
}

// Name returns the bucket's name, its Redis key.
func (b *Bucket[T]) Name() string { return b.name }

// Codec returns the codec the bucket encodes its values with.
func (b *Bucket[T]) Codec() Codec { return b.codec }

// decode turns a reply (a bulk string or nil) into (value, present).
func (b *Bucket[T]) decode(v any, err error) (T, bool, error) { return decodeReply[T](&b.base, v, err) }

// Get returns the bucket's value and true, or the zero value and false when
// the bucket does not exist. It returns ErrCodec when the stored bytes do not
// decode into T; ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed,
// or a Redis error otherwise.
func (b *Bucket[T]) Get(ctx context.Context) (T, bool, error) {
	if b.cached && !b.c.observed && b.check() == nil {
		if v, ok, hit := cacheHit[T](b.c, b.name, ""); hit {
			return v, ok, nil // the hit path: no operation record to keep
		}
	}
	return b.get(ctx)
}

// get is Get through Redis or, with an Observer, the cache.
func (b *Bucket[T]) get(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	if b.cached {
		if tc := b.c.clientCache(); tc != nil {
			return cachedGet[T](ctx, &b.base, tc, "")
		}
	}
	b.c.trip(ctx, 1)
	v, err := b.c.rdb.Get(ctx, b.name).Result()
	return b.decode(v, err)
}

// Set stores v with no expiry (an expiry the bucket had is removed). It
// returns ErrNilValue for a nil pointer or interface (use Delete), ErrCodec
// when v does not encode; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (b *Bucket[T]) Set(ctx context.Context, v T) (err error) {
	ctx, rec := b.begin(ctx, opBucketSet)
	defer func() { rec.end(err, OutcomeOK) }()
	_, err = b.set(ctx, v, "set", false, 0)
	return err
}

// SetWithTTL stores v to expire after ttl (rounded up to a millisecond). It
// returns ErrNegativeDuration for ttl <= 0; otherwise the errors of Set.
func (b *Bucket[T]) SetWithTTL(ctx context.Context, v T, ttl time.Duration) (err error) {
	ctx, rec := b.begin(ctx, opBucketSet)
	defer func() { rec.end(err, OutcomeOK) }()
	_, err = b.set(ctx, v, "set", true, ttl)
	return err
}

// SetIfAbsent stores v with no expiry when the bucket does not exist, and
// reports whether it did (Redisson's setIfAbsent, formerly trySet). It
// returns the errors of Set.
func (b *Bucket[T]) SetIfAbsent(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec := b.begin(ctx, opBucketSetIfAbsent)
	defer func() { rec.end(err, OutcomeOK) }()
	return b.set(ctx, v, "nx", false, 0)
}

// SetIfAbsentWithTTL is SetIfAbsent with an expiry; it returns
// ErrNegativeDuration for ttl <= 0.
func (b *Bucket[T]) SetIfAbsentWithTTL(ctx context.Context, v T, ttl time.Duration) (_ bool, err error) {
	ctx, rec := b.begin(ctx, opBucketSetIfAbsent)
	defer func() { rec.end(err, OutcomeOK) }()
	return b.set(ctx, v, "nx", true, ttl)
}

// SetIfExists replaces the value when the bucket exists, and reports whether
// it did. Like Redisson's setIfExists (SET XX), the new value has no expiry.
// It returns the errors of Set.
func (b *Bucket[T]) SetIfExists(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec := b.begin(ctx, opBucketSetIfExists)
	defer func() { rec.end(err, OutcomeOK) }()
	return b.set(ctx, v, "xx", false, 0)
}

// SetIfExistsWithTTL is SetIfExists with an expiry; it returns
// ErrNegativeDuration for ttl <= 0.
func (b *Bucket[T]) SetIfExistsWithTTL(ctx context.Context, v T, ttl time.Duration) (_ bool, err error) {
	ctx, rec := b.begin(ctx, opBucketSetIfExists)
	defer func() { rec.end(err, OutcomeOK) }()
	return b.set(ctx, v, "xx", true, ttl)
}

// GetAndSet stores v with no expiry and returns the previous value and true,
// or the zero value and false when the bucket did not exist. When the
// previous bytes do not decode into T, v is stored all the same and the error
// matches ErrCodec. It returns the errors of Set.
func (b *Bucket[T]) GetAndSet(ctx context.Context, v T) (_ T, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketGetAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	val, err := encodeNonNil(b.codec, b.object, v)
	if err != nil {
		var zero T
		return zero, false, err
	}
	defer b.write()()
	old, err := b.c.scripts.run(ctx, scriptBucketSet, []string{b.name}, val, "0", "get").Result()
	return b.decode(old, err)
}

// set runs bucket_set in mode, with ttl when withTTL, after the shared
// checks.
func (b *Bucket[T]) set(ctx context.Context, v T, mode string, withTTL bool, ttl time.Duration) (bool, error) {
	if err := b.check(); err != nil {
		return false, err
	}
	args, err := b.setArgs(v, mode, withTTL, ttl)
	if err != nil {
		return false, err
	}
	defer b.write()()
	n, err := b.c.scripts.run(ctx, scriptBucketSet, []string{b.name}, args...).Int64()
	return n == 1, b.wrap(err)
}

// setArgs returns bucket_set's ARGV storing v in mode, with ttl when
// withTTL (ErrNegativeDuration for ttl <= 0); Set and a Batch's Set share
// it.
func (b *Bucket[T]) setArgs(v T, mode string, withTTL bool, ttl time.Duration) ([]any, error) {
	ttlArg := "0"
	if withTTL {
		if ttl <= 0 {
			return nil, objectErrorf(bucketKind, b.name, "%w: ttl %v must be positive", ErrNegativeDuration, ttl)
		}
		ttlArg = strconv.FormatInt(ceilMillis(ttl), 10)
	}
	val, err := encodeNonNil(b.codec, b.object, v)
	if err != nil {
		return nil, err
	}
	return []any{val, ttlArg, mode}, nil
}

// ceilMillis returns d (> 0) in milliseconds, rounded up, without the
// overflow of adding a millisecond first near the largest Duration.
func ceilMillis(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// GetAndDelete deletes the bucket and returns its value and true, or the
// zero value and false when it did not exist. When the bytes do not decode
// into T the bucket is deleted all the same and the error matches ErrCodec.
// It returns ErrEmptyName, ErrInvalidName, ErrWrongType (leaving the key),
// ErrClientClosed, or a Redis error.
func (b *Bucket[T]) GetAndDelete(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketGetAndDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	defer b.write()()
	b.c.trip(ctx, 1)
	v, err := b.c.rdb.GetDel(ctx, b.name).Result()
	return b.decode(v, err)
}

// CompareAndSet replaces the value with update when the stored bytes equal
// the encoding of expect, in one atomic step on the server, and reports
// whether it did. A missing bucket matches nothing (use SetIfAbsent). Like
// Redisson's compareAndSet, the new value has no expiry. Comparing bytes
// means two values equal in Go but encoded differently (a struct with a map
// field, whose key order msgpack does not fix) do not match. It returns the
// errors of Set.
func (b *Bucket[T]) CompareAndSet(ctx context.Context, expect, update T) (_ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketCompareAndSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	e, err := encodeNonNil(b.codec, b.object, expect)
	if err != nil {
		return false, err
	}
	u, err := encodeNonNil(b.codec, b.object, update)
	if err != nil {
		return false, err
	}
	defer b.write()()
	n, err := b.c.scripts.run(ctx, scriptBucketCAS, []string{b.name}, e, u).Int64()
	return n == 1, b.wrap(err)
}

// TTL returns the bucket's remaining time to live and true, 0 and true when
// it exists without expiry, or 0 and false when it does not exist. It
// returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error.
func (b *Bucket[T]) TTL(ctx context.Context) (_ time.Duration, _ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketTTL)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, false, err
	}
	return keyTTL(ctx, b.c.rdb, bucketKind, b.name)
}

// keyTTL reads PTTL of key: (ttl, true), (0, true) without expiry, (0,
// false) when missing.
func keyTTL(ctx context.Context, rdb redis.UniversalClient, kind, key string) (time.Duration, bool, error) {
	ms, err := rdb.Do(ctx, "pttl", key).Int64()
	switch {
	case err != nil:
		return 0, false, objectErr(kind, key, err)
	case ms == -2:
		return 0, false, nil
	case ms < 0:
		return 0, true, nil
	case ms > math.MaxInt64/int64(time.Millisecond): // past the largest Duration
		return time.Duration(math.MaxInt64), true, nil
	}
	return time.Duration(ms) * time.Millisecond, true, nil
}

// Delete deletes the bucket (whatever type its key holds, like Redisson) and
// reports whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (b *Bucket[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := b.open(ctx, opBucketDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	defer b.write()()
	b.c.trip(ctx, 1)
	n, err := b.c.rdb.Del(ctx, b.name).Result()
	return n == 1, b.wrap(err)
}
