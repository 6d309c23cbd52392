package redisson

import (
	"context"
	"iter"

	"github.com/redis/go-redis/v9"
)

const setKind = "set"

// Set is an unordered set of values of type T stored in a Redis set,
// wire-compatible with Redisson's RSet: the set is at the Set's name and
// each member is the value encoded with the Set's codec (Options.Codec
// unless WithCodec says otherwise). Two values are the same member when
// they encode to the same bytes: with MsgpackCodec an int64 5 (a Java
// Long) and an int32 5 (a Java Integer) are two members, as in Redisson.
//
// Keys: one, the set at name (docs/keys.md). Redis drops it with its last
// member. The calls over several sets (Union, Intersection, Difference and
// their Store forms) need, on Redis Cluster, every set in one hash slot:
// name them with a common hash tag, as Redisson users do ("{cart}:a",
// "{cart}:b"); sets in different slots are ErrCrossSlot, sent nowhere.
//
// Complexity: Add, Remove, Contains, Size, RandomMember and Pop are O(1)
// per member (one command each); Members and the set algebra are O(N) in
// the members read, in one command; Iterator pages with SSCAN.
//
// Guarantees: every call is one atomic command or script. Under a
// failover, asynchronous replication can lose acknowledged writes
// (docs/guarantees.md); Add and Remove are idempotent, so a resent call
// changes nothing more (its reply may then say false).
//
// Nil pointers are ErrNilValue; a member that does not decode is ErrCodec
// naming the set and the codec; a key holding another Redis type is
// ErrWrongType and every write leaves it unchanged.
//
// A Set is safe for concurrent use and holds no state of its own.
type Set[T any] struct {
	o collection
}

// GetSet returns the set called name, of members of type T. It does no
// I/O. opts may give the set its own codec (WithCodec); a nil option or a
// nil codec keeps the client's default. An empty name makes every method
// return ErrEmptyName.
func GetSet[T any](c *Client, name string, opts ...ObjectOption) *Set[T] {
	return &Set[T]{o: newCollection(c, setKind, name, opts)}
}

// Name returns the set's name, its Redis key.
func (s *Set[T]) Name() string { return s.o.name }

// Codec returns the codec the set encodes its members with.
func (s *Set[T]) Codec() Codec { return s.o.codec }

// Add adds v (one SADD) and reports whether it was new. It returns
// ErrNilValue for a nil pointer, ErrCodec when v does not encode;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (s *Set[T]) Add(ctx context.Context, v T) (bool, error) {
	n, err := s.AddAll(ctx, v)
	return n == 1, err
}

// AddAll adds vs in one SADD and returns how many were new; no members is
// no call and 0. If one member does not encode nothing is added. It returns
// the errors of Add.
func (s *Set[T]) AddAll(ctx context.Context, vs ...T) (int64, error) {
	return s.members(ctx, opSetAdd, vs, s.o.c.rdb.SAdd)
}

// Remove removes v (one SREM) and reports whether it was there. It returns
// the errors of Add.
func (s *Set[T]) Remove(ctx context.Context, v T) (bool, error) {
	n, err := s.RemoveAll(ctx, v)
	return n == 1, err
}

// RemoveAll removes vs in one SREM and returns how many were there; no
// members is no call and 0. It returns the errors of Add.
func (s *Set[T]) RemoveAll(ctx context.Context, vs ...T) (int64, error) {
	return s.members(ctx, opSetRemove, vs, s.o.c.rdb.SRem)
}

func (s *Set[T]) members(ctx context.Context, op string, vs []T, cmd func(context.Context, string, ...any) *redis.IntCmd) (_ int64, err error) {
	ctx, rec, err := s.o.open(ctx, op)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	args, err := encodeAll(&s.o, vs)
	if err != nil || len(args) == 0 {
		return 0, err
	}
	s.o.c.trip(ctx, 1)
	n, err := cmd(ctx, s.o.name, args...).Result()
	return n, s.o.wrap(err)
}

// Contains reports whether v is a member (one SISMEMBER). It returns the
// errors of Add.
func (s *Set[T]) Contains(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetContains)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := s.o.encode(v)
	if err != nil {
		return false, err
	}
	s.o.c.trip(ctx, 1)
	ok, err := s.o.c.rdb.SIsMember(ctx, s.o.name, b).Result()
	return ok, s.o.wrap(err)
}

// Size returns the number of members (0 when the set does not exist; one
// SCARD). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (s *Set[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.o.open(ctx, opSetSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	s.o.c.trip(ctx, 1)
	n, err := s.o.c.rdb.SCard(ctx, s.o.name).Result()
	return n, s.o.wrap(err)
}

// Members returns every member in one SMEMBERS (Redisson's readAll), in no
// particular order. It reads the whole set at once: iterate large sets with
// Iterator instead. It returns ErrCodec when a member does not decode, and
// the errors of Size.
func (s *Set[T]) Members(ctx context.Context) (_ []T, err error) {
	ctx, rec, err := s.o.open(ctx, opSetMembers)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	s.o.c.trip(ctx, 1)
	return s.decoded(s.o.c.rdb.SMembers(ctx, s.o.name).Result())
}

func (s *Set[T]) decoded(ss []string, err error) ([]T, error) {
	if err != nil {
		return nil, s.o.wrap(err)
	}
	return decodeAll[T](&s.o, ss)
}

// RandomMember returns a random member and true, leaving it in the set
// (one SRANDMEMBER, Redisson's random), or the zero value and false when
// the set is empty. It returns the errors of Members.
func (s *Set[T]) RandomMember(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetRandom)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	s.o.c.trip(ctx, 1)
	v, err := s.o.c.rdb.SRandMember(ctx, s.o.name).Result()
	return decodeOne[T](&s.o.base, v, err)
}

// RandomMembers returns up to n distinct random members, leaving them in
// the set (one SRANDMEMBER n, Redisson's random(count)); n == 0 is no call.
// It returns ErrNegativeCount for n < 0, and the errors of Members.
func (s *Set[T]) RandomMembers(ctx context.Context, n int64) ([]T, error) {
	return s.some(ctx, opSetRandom, n, s.o.c.rdb.SRandMemberN)
}

// Pop removes a random member and returns it and true (one SPOP,
// Redisson's removeRandom), or the zero value and false when the set is
// empty. When the removed bytes do not decode the member is removed all
// the same and the error matches ErrCodec. It returns the errors of
// Members.
func (s *Set[T]) Pop(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetPop)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	s.o.c.trip(ctx, 1)
	v, err := s.o.c.rdb.SPop(ctx, s.o.name).Result()
	return decodeOne[T](&s.o.base, v, err)
}

// PopN removes up to n random members and returns them (one SPOP n,
// Redisson's removeRandom(amount)); n == 0 is no call. It returns the
// errors of RandomMembers.
func (s *Set[T]) PopN(ctx context.Context, n int64) ([]T, error) {
	return s.some(ctx, opSetPop, n, s.o.c.rdb.SPopN)
}

func (s *Set[T]) some(ctx context.Context, op string, n int64, cmd func(context.Context, string, int64) *redis.StringSliceCmd) (_ []T, err error) {
	ctx, rec, err := s.o.open(ctx, op)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if err := s.o.checkCount(n); err != nil || n == 0 {
		return nil, err
	}
	s.o.c.trip(ctx, 1)
	return s.decoded(cmd(ctx, s.o.name, n).Result())
}

// Delete deletes the set (whatever type its key holds, like Redisson) and
// reports whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (s *Set[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := s.o.open(ctx, opSetDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	s.o.c.trip(ctx, 1)
	n, err := s.o.c.rdb.Del(ctx, s.o.name).Result()
	return n == 1, s.o.wrap(err)
}

// Iterator returns an iterator over the set's members that reads them with
// SSCAN, about batch members per round trip, so that a large set is never
// read at once. It does no I/O:
//
//	it := s.Iterator(100)
//	for v := range it.All(ctx) {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
//
// As with SSCAN, a member present for the whole iteration is yielded at
// least once, possibly more than once when Redis rehashes the set
// meanwhile; members added or removed meanwhile may or may not be yielded.
// A batch below 1 makes Err return ErrInvalidBatch; the other errors are
// those of Members.
func (s *Set[T]) Iterator(batch int) *SetIterator[T] {
	return &SetIterator[T]{s: s, batch: batch}
}

// SetIterator iterates a Set's members; see Set.Iterator. A SetIterator is
// for one goroutine at a time; All may be ranged over more than once, each
// time a new scan.
type SetIterator[T any] struct {
	s     *Set[T]
	batch int
	err   error
}

// All yields the members, reading them batch by batch with ctx. It stops
// at the first error, which Err then returns; a ctx that ends stops it
// with ctx's error.
func (it *SetIterator[T]) All(ctx context.Context) iter.Seq[T] {
	return func(yield func(T) bool) {
		o := &it.s.o
		scan := func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
			return o.c.rdb.SScan(ctx, o.name, cursor, "", count).Result()
		}
		it.err = o.pager(opSetScan, it.batch).scan(ctx, scan, func(page []string) (bool, error) {
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
func (it *SetIterator[T]) Err() error { return it.err }
