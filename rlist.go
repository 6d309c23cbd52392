package redisson

import (
	"context"
	"errors"
	"iter"
	"math"

	"github.com/redis/go-redis/v9"
)

const listKind = "list"

// List is an ordered sequence of values of type T stored in a Redis list,
// wire-compatible with Redisson's RList: the list is at the List's name
// and each element is the value encoded with the List's codec
// (Options.Codec unless WithCodec says otherwise), so that a Java client
// reading the same name sees the same elements in the same order.
//
// Keys: one, the list at name (docs/keys.md). Redis drops it with its last
// element.
//
// Complexity: Add, AddAll, Size and Remove's first match are what the Redis
// command costs (RPUSH O(1) per element, LLEN O(1), LREM O(N)); Get, Set
// and Range O(N) in the distance from the nearer end; Insert and RemoveAt
// O(min(index, size-index)) elements moved, in one script. Every call is
// one round trip; All pages with LRANGE and never holds the whole list.
//
// Guarantees: every call is atomic on the server. Under a failover,
// Redis's asynchronous replication can lose writes the old master had
// acknowledged (docs/guarantees.md); a resent Add adds twice (go-redis
// resends a call whose reply was lost).
//
// Nil pointers are ErrNilValue, as Redisson stores no nulls; an index
// outside the list, or above 2^31-1 (a position no list reaches in practice,
// and one some servers cut to 32 bits), is ErrIndexOutOfRange; an element that does not decode
// is ErrCodec naming the list and the codec, never a zero value; a key
// holding another Redis type is ErrWrongType and every write leaves it
// unchanged.
//
// A List is safe for concurrent use and holds no state of its own.
type List[T any] struct {
	o collection
}

// GetList returns the list called name, of elements of type T. It does no
// I/O. opts may give the list its own codec (WithCodec); a nil option or a
// nil codec keeps the client's default. An empty name makes every method
// return ErrEmptyName.
func GetList[T any](c *Client, name string, opts ...ObjectOption) *List[T] {
	return &List[T]{o: newCollection(c, listKind, name, opts)}
}

// Name returns the list's name, its Redis key.
func (l *List[T]) Name() string { return l.o.name }

// Codec returns the codec the list encodes its elements with.
func (l *List[T]) Codec() Codec { return l.o.codec }

// maxListIndex is the largest index a List sends to Redis. Redis 7.2 and
// later (and Valkey) cut LSET's index to a C int, so LSET 4294967295 on a
// three-element list replaces the last element and LSET 2^40 the first, with
// no error; an index up to 2^31-1 reaches every server as sent. A list that
// long would hold at least 2^31 elements (tens of GiB), so the bound only
// turns a silent overwrite into ErrIndexOutOfRange.
const maxListIndex = math.MaxInt32

// checkIndex is the precondition of the calls that take an index: it is
// ErrIndexOutOfRange for a negative index or one above maxListIndex, which
// no Redis list can reach in practice and some servers would misread.
func (l *List[T]) checkIndex(index int64) error {
	if err := l.o.check(); err != nil {
		return err
	}
	if index < 0 || index > maxListIndex {
		return l.o.errorf("%w: %d", ErrIndexOutOfRange, index)
	}
	return nil
}

// Add appends v (one RPUSH, Redisson's add) and returns the list's new
// size. It returns ErrNilValue for a nil pointer, ErrCodec when v does not
// encode; ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error otherwise.
func (l *List[T]) Add(ctx context.Context, v T) (int64, error) {
	return l.AddAll(ctx, v)
}

// AddAll appends vs in their order in one RPUSH (Redisson's addAll) and
// returns the list's new size; no elements is one LLEN. If one element does
// not encode nothing is added. It returns the errors of Add.
func (l *List[T]) AddAll(ctx context.Context, vs ...T) (_ int64, err error) {
	ctx, rec, err := l.o.open(ctx, opListAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	args, err := encodeAll(&l.o, vs)
	if err != nil {
		return 0, err
	}
	if len(args) == 0 {
		l.o.c.trip(ctx, 1)
		n, err := l.o.c.rdb.LLen(ctx, l.o.name).Result()
		return n, l.o.wrap(err)
	}
	l.o.c.trip(ctx, 1)
	n, err := l.o.c.rdb.RPush(ctx, l.o.name, args...).Result()
	return n, l.o.wrap(err)
}

// Insert puts v at index, shifting the elements from index on one place
// up (Redisson's add(index, element)); index == Size appends. It is one
// script, atomic. It returns ErrIndexOutOfRange for a negative index or one
// above the size, and the errors of Add.
func (l *List[T]) Insert(ctx context.Context, index int64, v T) (err error) {
	ctx, rec := l.o.begin(ctx, opListInsert)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := l.checkIndex(index); err != nil {
		return err
	}
	b, err := l.o.encode(v)
	if err != nil {
		return err
	}
	err = l.o.c.scripts.run(ctx, scriptListInsert, []string{l.o.name}, index, b).Err()
	return l.o.scriptErr(err)
}

// Get returns the element at index (one LINDEX). It returns
// ErrIndexOutOfRange for a negative index or one not below the size (a
// missing list has size 0), ErrCodec when the element does not decode;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (l *List[T]) Get(ctx context.Context, index int64) (_ T, err error) {
	ctx, rec := l.o.begin(ctx, opListGet)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err := l.checkIndex(index); err != nil {
		return zero, err
	}
	l.o.c.trip(ctx, 1)
	return l.element(index)(l.o.c.rdb.LIndex(ctx, l.o.name, index).Result())
}

// element returns the reading of LINDEX index's reply (Get's and a
// Batch's): a missing element is ErrIndexOutOfRange.
func (l *List[T]) element(index int64) func(s string, err error) (T, error) {
	return func(s string, err error) (T, error) {
		v, ok, err := decodeOne[T](&l.o.base, s, err)
		if err == nil && !ok {
			return v, l.o.errorf("%w: %d", ErrIndexOutOfRange, index)
		}
		return v, err
	}
}

// Set replaces the element at index with v and returns the previous one
// (Redisson's set), in one script. When the previous bytes do not decode,
// v is stored all the same and the error matches ErrCodec. It returns
// ErrIndexOutOfRange for a negative index or one not below the size, and
// the errors of Add.
func (l *List[T]) Set(ctx context.Context, index int64, v T) (_ T, err error) {
	ctx, rec := l.o.begin(ctx, opListSet)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err := l.checkIndex(index); err != nil {
		return zero, err
	}
	b, err := l.o.encode(v)
	if err != nil {
		return zero, err
	}
	s, err := l.o.c.scripts.run(ctx, scriptListSet, []string{l.o.name}, index, b).Text()
	if err != nil {
		return zero, l.o.scriptErr(err)
	}
	return decodeValue[T](l.o.codec, l.o.object, []byte(s))
}

// FastSet replaces the element at index with v without reading the
// previous one (one LSET, Redisson's fastSet). It returns the errors of Set.
func (l *List[T]) FastSet(ctx context.Context, index int64, v T) (err error) {
	ctx, rec := l.o.begin(ctx, opListFastSet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := l.checkIndex(index); err != nil {
		return err
	}
	b, err := l.o.encode(v)
	if err != nil {
		return err
	}
	l.o.c.trip(ctx, 1)
	err = l.o.c.rdb.LSet(ctx, l.o.name, index, b).Err()
	if err != nil && (err.Error() == "ERR index out of range" || err.Error() == "ERR no such key") {
		return l.o.errorf("%w: %d", ErrIndexOutOfRange, index)
	}
	return l.o.wrap(err)
}

// Remove removes the first element equal to v (equal encoded bytes; one
// LREM count 1, Redisson's remove(Object)) and reports whether there was
// one. It returns the errors of Add.
func (l *List[T]) Remove(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec, err := l.o.open(ctx, opListRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := l.o.encode(v)
	if err != nil {
		return false, err
	}
	l.o.c.trip(ctx, 1)
	n, err := l.o.c.rdb.LRem(ctx, l.o.name, 1, b).Result()
	return n == 1, l.o.wrap(err)
}

// RemoveAt removes the element at index and returns it, shifting the
// elements after it one place down (Redisson's remove(int index)), in one
// script, atomic. When the removed bytes do not decode the element is
// removed all the same and the error matches ErrCodec. It returns the
// errors of Get.
func (l *List[T]) RemoveAt(ctx context.Context, index int64) (_ T, err error) {
	ctx, rec := l.o.begin(ctx, opListRemoveAt)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err := l.checkIndex(index); err != nil {
		return zero, err
	}
	s, err := l.o.c.scripts.run(ctx, scriptListRemoveAt, []string{l.o.name}, index).Text()
	if err != nil {
		return zero, l.o.scriptErr(err)
	}
	return decodeValue[T](l.o.codec, l.o.object, []byte(s))
}

// IndexOf returns the index of the first element equal to v (one LPOS), or
// -1 when there is none. It returns the errors of Add.
func (l *List[T]) IndexOf(ctx context.Context, v T) (_ int64, err error) {
	ctx, rec, err := l.o.open(ctx, opListIndexOf)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	b, err := l.o.encode(v)
	if err != nil {
		return 0, err
	}
	l.o.c.trip(ctx, 1)
	i, err := l.o.c.rdb.LPos(ctx, l.o.name, b, redis.LPosArgs{}).Result()
	if errors.Is(err, redis.Nil) {
		return -1, nil
	}
	return i, l.o.wrap(err)
}

// Contains reports whether an element equal to v is in the list (one
// LPOS). It returns the errors of Add.
func (l *List[T]) Contains(ctx context.Context, v T) (bool, error) {
	i, err := l.IndexOf(ctx, v)
	return i >= 0 && err == nil, err
}

// Size returns the number of elements (0 when the list does not exist; one
// LLEN). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (l *List[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := l.o.open(ctx, opListSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	l.o.c.trip(ctx, 1)
	n, err := l.o.c.rdb.LLen(ctx, l.o.name).Result()
	return n, l.o.wrap(err)
}

// Range returns the elements from index from to index to, both included
// (one LRANGE, Redisson's range); as in Redis, a negative index counts from
// the end (-1 is the last element) and indexes past the end are clipped,
// so Range(ctx, 0, -1) is the whole list. It returns ErrCodec when an
// element does not decode, and the errors of Size.
func (l *List[T]) Range(ctx context.Context, from, to int64) (_ []T, err error) {
	ctx, rec, err := l.o.open(ctx, opListRange)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	l.o.c.trip(ctx, 1)
	ss, err := l.o.c.rdb.LRange(ctx, l.o.name, from, to).Result()
	if err != nil {
		return nil, l.o.wrap(err)
	}
	return decodeAll[T](&l.o, ss)
}

// ReadAll returns every element in one LRANGE (Redisson's readAll). It
// reads the whole list at once: iterate large lists with Iterator instead.
// It returns the errors of Range.
func (l *List[T]) ReadAll(ctx context.Context) ([]T, error) { return l.Range(ctx, 0, -1) }

// Trim keeps the elements from index from to index to, both included, and
// removes the others (one LTRIM, Redisson's trim); indexes as in Range. It
// returns the errors of Size.
func (l *List[T]) Trim(ctx context.Context, from, to int64) (err error) {
	ctx, rec, err := l.o.open(ctx, opListTrim)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	l.o.c.trip(ctx, 1)
	return l.o.wrap(l.o.c.rdb.LTrim(ctx, l.o.name, from, to).Err())
}

// Delete deletes the list (whatever type its key holds, like Redisson) and
// reports whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (l *List[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := l.o.open(ctx, opListDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	l.o.c.trip(ctx, 1)
	n, err := l.o.c.rdb.Del(ctx, l.o.name).Result()
	return n == 1, l.o.wrap(err)
}

// Iterator returns an iterator over the list's elements, front to back,
// that reads them with LRANGE, batch elements per round trip, so that a
// large list is never read at once. It does no I/O:
//
//	it := l.Iterator(100)
//	for i, v := range it.All(ctx) {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
//
// The pages are read by index: elements inserted or removed before the
// current page meanwhile shift the rest, so an element may then be yielded
// twice or skipped; a list left alone is yielded exactly once, in order. A
// batch below 1 makes Err return ErrInvalidBatch; the other errors are
// those of Range.
func (l *List[T]) Iterator(batch int) *ListIterator[T] {
	return &ListIterator[T]{l: l, batch: batch}
}

// ListIterator iterates a List's elements; see List.Iterator. A
// ListIterator is for one goroutine at a time; All may be ranged over more
// than once, each time from the front.
type ListIterator[T any] struct {
	l     *List[T]
	batch int
	err   error
}

// All yields each element with its index, reading them batch by batch with
// ctx. It stops at the first error, which Err then returns; a ctx that ends
// stops it with ctx's error.
func (it *ListIterator[T]) All(ctx context.Context) iter.Seq2[int64, T] {
	return func(yield func(int64, T) bool) {
		it.err = it.page(ctx, yield)
	}
}

// Err returns the error that ended the last iteration, or nil.
func (it *ListIterator[T]) Err() error { return it.err }

func (it *ListIterator[T]) page(ctx context.Context, yield func(int64, T) bool) error {
	o := &it.l.o
	read := func(ctx context.Context, start, stop int64) ([]string, error) {
		return o.c.rdb.LRange(ctx, o.name, start, stop).Result()
	}
	return o.pager(opListScan, it.batch).ranges(ctx, read, func(from int64, page []string) (bool, error) {
		for i, s := range page {
			v, err := decodeValue[T](o.codec, o.object, []byte(s))
			if err != nil {
				return false, err
			}
			if !yield(from+int64(i), v) {
				return false, nil
			}
		}
		return true, nil
	})
}
