package redisson

import (
	"context"
	"iter"
	"strconv"
	"sync/atomic"
	"time"
)

// setCacheKind names a SetCache in its errors and events; an Observer sees
// set_cache.
const setCacheKind = "set cache"

// SetCache is a set of values of type T whose members may each expire,
// wire-compatible with Redisson's RSetCache: Java and Go clients of one
// name see one set with one set of expiries.
//
// Keys: one, a zset at name (docs/keys.md) whose members are the values
// encoded with the cache's codec, each scored by its expiry time in ms; a
// member without TTL is scored 92231924252552169 (Redis stores
// 92231924252552176), as Redisson writes it. The zset gets no Redis TTL.
// Two values are the same member when they encode to the same bytes, as in
// Set.
//
// Guarantees. An expired member is never returned or counted, whether or
// not it has been deleted yet: every read compares the scores with the
// Redis server's clock inside its script (Java Redisson compares them with
// its own clock: clocks apart by d move Java's view of an expiry by d).
// Expired members are deleted in the background by the client's eviction
// pass, the one MapCache uses: it visits each SetCache this client has used
// every second (one where it found nothing half as often each time, down to
// every 30s), deleting at most 100 members per script call. Each call is one
// command or script, atomic on the master of the name's slot; a failover
// may lose the writes the old master had not replicated, as for any Redis
// data.
//
// Complexity: Add, Remove and Contains are one round trip and O(log n);
// Size is O(log n); ReadAll O(n) in one script; the iterator O(batch) per
// page.
//
// Nil pointers are ErrNilValue; a member that does not decode is ErrCodec
// naming the cache and the codec; a key holding another Redis type is
// ErrWrongType and every write leaves it unchanged.
//
// A SetCache is safe for concurrent use.
type SetCache[T any] struct {
	o    collection
	keys []string
	used atomic.Bool
}

// GetSetCache returns the set cache called name, of members of type T. It
// does no I/O. opts may give it its own codec (WithCodec), as for GetSet.
// An empty name makes every method return ErrEmptyName.
func GetSetCache[T any](c *Client, name string, opts ...ObjectOption) *SetCache[T] {
	o := newCollection(c, setCacheKind, name, opts)
	o.opKind = "set_cache"
	return &SetCache[T]{o: o, keys: []string{name}}
}

// Name returns the set cache's name, the Redis key of its zset.
func (s *SetCache[T]) Name() string { return s.o.name }

// Codec returns the codec the set cache encodes its members with.
func (s *SetCache[T]) Codec() Codec { return s.o.codec }

// register registers the cache with the client's eviction pass, once.
func (s *SetCache[T]) register() {
	if !s.used.Swap(true) {
		s.o.c.mapCaches.addTarget(setCacheKind, scriptSetCacheEvict, s.o.name, s.keys)
	}
}

// run runs a SetCache script as one round trip, after registering the
// cache with the client's eviction pass.
func (s *SetCache[T]) run(ctx context.Context, sc *script, args ...any) (any, error) {
	c := s.o.c
	s.register()
	v, err := c.scripts.run(ctx, sc, s.keys, args...).Result()
	return v, s.o.wrap(err)
}

// Add adds v without expiry and reports whether it was new (absent, or
// present but expired); a live v loses any TTL it had. It is one round
// trip (Redisson's RSetCache.add). It returns ErrNilValue for a nil
// pointer, ErrCodec when v does not encode; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (s *SetCache[T]) Add(ctx context.Context, v T) (bool, error) {
	return s.AddWithTTL(ctx, v, 0)
}

// AddWithTTL adds v to expire ttl from now (zero: no expiry) and reports
// whether it was new, as Add does; a v already live gets the new expiry.
// ttl is rounded up to whole milliseconds. It returns ErrNegativeDuration
// for a negative ttl (Redis unchanged), and the errors of Add.
func (s *SetCache[T]) AddWithTTL(ctx context.Context, v T, ttl time.Duration) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if ttl < 0 {
		return false, s.o.errorf("%w: ttl %v", ErrNegativeDuration, ttl)
	}
	b, err := s.o.encode(v)
	if err != nil {
		return false, err
	}
	ms := int64((ttl + time.Millisecond - 1) / time.Millisecond)
	r, err := s.run(ctx, scriptSetCacheAdd, ms, b)
	if err != nil {
		return false, err
	}
	return r == int64(1), nil
}

// Contains reports whether v is a live member (one script, Redisson's
// contains). It returns the errors of Add.
func (s *SetCache[T]) Contains(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheContains)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := s.o.encode(v)
	if err != nil {
		return false, err
	}
	r, err := s.run(ctx, scriptSetCacheContains, b)
	return r == int64(1), err
}

// Remove removes v (one ZREM, as Redisson's remove) and reports whether it
// was there, live or expired. It returns the errors of Add.
func (s *SetCache[T]) Remove(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := s.o.encode(v)
	if err != nil {
		return false, err
	}
	s.o.c.trip(ctx, 1)
	n, err := s.o.c.rdb.ZRem(ctx, s.o.name, b).Result()
	return n == 1, s.o.wrap(err)
}

// Size returns the number of live members (one script; 0 when the cache
// does not exist). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (s *SetCache[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	r, err := s.run(ctx, scriptSetCacheSize)
	if err != nil {
		return 0, err
	}
	n, ok := r.(int64)
	if !ok {
		return 0, s.o.errorf("%w: reply %T", ErrUnexpectedReply, r)
	}
	return n, nil
}

// ReadAll returns every live member in one script, the earliest expiry
// first (Redisson's readAll). It reads the whole set at once: iterate large
// sets with Iterator instead. It returns ErrCodec when a member does not
// decode, and the errors of Size.
func (s *SetCache[T]) ReadAll(ctx context.Context) (_ []T, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheReadAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	r, err := s.run(ctx, scriptSetCacheReadAll)
	if err != nil {
		return nil, err
	}
	ss, err := s.strings(r)
	if err != nil {
		return nil, err
	}
	return decodeAll[T](&s.o, ss)
}

// strings reads a script's array of bulk strings.
func (s *SetCache[T]) strings(r any) ([]string, error) {
	a, ok := r.([]any)
	if !ok {
		return nil, s.o.errorf("%w: reply %T", ErrUnexpectedReply, r)
	}
	out := make([]string, len(a))
	for i, e := range a {
		if out[i], ok = e.(string); !ok {
			return nil, s.o.errorf("%w: element %T", ErrUnexpectedReply, e)
		}
	}
	return out, nil
}

// Delete deletes the set cache (whatever type its key holds, like
// Redisson) and reports whether it existed. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (s *SetCache[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetCacheDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	s.o.c.trip(ctx, 1)
	n, err := s.o.c.rdb.Del(ctx, s.o.name).Result()
	return n == 1, s.o.wrap(err)
}

// Iterator returns an iterator over the live members that reads them with
// ZSCAN inside a script, about batch members per round trip, so that a
// large set is never read at once. It does no I/O until ranged over. A
// member live for the whole iteration is yielded at least once (more than
// once when Redis rehashes the zset meanwhile); expired members are
// skipped, members added or removed meanwhile may or may not be yielded. A
// batch below 1 makes Err return ErrInvalidBatch; the other errors are
// those of ReadAll.
func (s *SetCache[T]) Iterator(batch int) *SetCacheIterator[T] {
	return &SetCacheIterator[T]{s: s, batch: batch}
}

// SetCacheIterator iterates a SetCache's live members; see
// SetCache.Iterator. It is for one goroutine at a time; All may be ranged
// over more than once, each time a new scan.
type SetCacheIterator[T any] struct {
	s     *SetCache[T]
	batch int
	err   error
}

// page reads one page of live members from cursor.
func (s *SetCache[T]) page(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	o := &s.o
	s.register()
	r, err := o.c.scripts.run(ctx, scriptSetCacheScan, s.keys, strconv.FormatUint(cursor, 10), count).Slice()
	if err != nil {
		return nil, 0, err
	}
	if len(r) != 2 {
		return nil, 0, o.errorf("%w: reply of %d elements", ErrUnexpectedReply, len(r))
	}
	cur, _ := r[0].(string)
	next, perr := strconv.ParseUint(cur, 10, 64)
	if perr != nil {
		return nil, 0, o.errorf("%w: cursor %v", ErrUnexpectedReply, r[0])
	}
	page, err := s.strings(r[1])
	return page, next, err
}

// All yields the live members, reading them batch by batch with ctx. It
// stops at the first error, which Err then returns; a ctx that ends stops
// it with ctx's error.
func (it *SetCacheIterator[T]) All(ctx context.Context) iter.Seq[T] {
	return func(yield func(T) bool) {
		o := &it.s.o
		it.err = o.pager(opSetCacheScan, it.batch).scan(ctx, it.s.page, func(page []string) (bool, error) {
			for _, m := range page {
				v, err := decodeValue[T](o.codec, o.object, []byte(m))
				if err != nil {
					return false, err
				}
				if !yield(v) {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// Err returns the error that ended the last iteration, or nil.
func (it *SetCacheIterator[T]) Err() error { return it.err }
