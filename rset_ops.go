package redisson

import (
	"context"
)

// The Set's calls over several sets: union, intersection and difference,
// read (SUNION, SINTER, SDIFF) or stored in a destination set (set_store).
// Redis compares members as bytes, so the sets should share a codec: the
// result is decoded (and stored) with the codec of the set the call is
// made on.

// Union returns the members of s and others together (one SUNION,
// Redisson's readUnion). On Redis Cluster every set must be in s's hash
// slot (name them with one hash tag) or the call is ErrCrossSlot, sent
// nowhere. A missing set is an empty one. It returns ErrNilValue for a nil
// set among others, the errors of each set's Name (ErrEmptyName,
// ErrInvalidName), and those of Members.
func (s *Set[T]) Union(ctx context.Context, others ...*Set[T]) (_ []T, err error) {
	ctx, rec := s.o.begin(ctx, opSetUnion)
	defer func() { rec.end(err, OutcomeOK) }()
	keys, err := s.keys(nil, others)
	if err != nil {
		return nil, err
	}
	s.o.c.trip(ctx, 1)
	return s.decoded(s.o.c.rdb.SUnion(ctx, keys...).Result())
}

// Intersection returns the members of s that are in every one of others
// (one SINTER, Redisson's readIntersection). It returns the errors of
// Union.
func (s *Set[T]) Intersection(ctx context.Context, others ...*Set[T]) (_ []T, err error) {
	ctx, rec := s.o.begin(ctx, opSetIntersection)
	defer func() { rec.end(err, OutcomeOK) }()
	keys, err := s.keys(nil, others)
	if err != nil {
		return nil, err
	}
	s.o.c.trip(ctx, 1)
	return s.decoded(s.o.c.rdb.SInter(ctx, keys...).Result())
}

// Difference returns the members of s that are in none of others (one
// SDIFF, Redisson's readDiff). It returns the errors of Union.
func (s *Set[T]) Difference(ctx context.Context, others ...*Set[T]) (_ []T, err error) {
	ctx, rec := s.o.begin(ctx, opSetDifference)
	defer func() { rec.end(err, OutcomeOK) }()
	keys, err := s.keys(nil, others)
	if err != nil {
		return nil, err
	}
	s.o.c.trip(ctx, 1)
	return s.decoded(s.o.c.rdb.SDiff(ctx, keys...).Result())
}

// UnionStore replaces dest's members with those of s and others together
// and returns dest's new size (SUNIONSTORE, in one script that first
// refuses a dest of another type, which SUNIONSTORE would overwrite). dest
// may be s or one of others. Redisson's s.union(names) is
// UnionStore(ctx, s, others...) without s among the sources: there,
// others[0].UnionStore(ctx, s, others[1:]...). It returns the errors of
// Union, for dest too.
func (s *Set[T]) UnionStore(ctx context.Context, dest *Set[T], others ...*Set[T]) (int64, error) {
	return s.store(ctx, opSetUnionStore, "sunionstore", dest, others)
}

// IntersectionStore replaces dest's members with the members of s that are
// in every one of others and returns dest's new size (SINTERSTORE, as
// UnionStore). It returns the errors of UnionStore.
func (s *Set[T]) IntersectionStore(ctx context.Context, dest *Set[T], others ...*Set[T]) (int64, error) {
	return s.store(ctx, opSetIntersectionStore, "sinterstore", dest, others)
}

// DifferenceStore replaces dest's members with the members of s that are in
// none of others and returns dest's new size (SDIFFSTORE, as UnionStore).
// It returns the errors of UnionStore.
func (s *Set[T]) DifferenceStore(ctx context.Context, dest *Set[T], others ...*Set[T]) (int64, error) {
	return s.store(ctx, opSetDifferenceStore, "sdiffstore", dest, others)
}

func (s *Set[T]) store(ctx context.Context, op, cmd string, dest *Set[T], others []*Set[T]) (_ int64, err error) {
	ctx, rec := s.o.begin(ctx, op)
	defer func() { rec.end(err, OutcomeOK) }()
	if dest == nil {
		if err := s.o.check(); err != nil {
			return 0, err
		}
		return 0, s.o.errorf("%w: destination set", ErrNilValue)
	}
	keys, err := s.keys(dest, others)
	if err != nil {
		return 0, err
	}
	n, err := s.o.c.scripts.run(ctx, scriptSetStore, keys, cmd).Int64()
	return n, dest.o.wrap(err)
}

// keys returns the keys of a multi-set call: dest's first when there is
// one, then s's, then others'; every set checked, and all in one slot.
func (s *Set[T]) keys(dest *Set[T], others []*Set[T]) ([]string, error) {
	sets := make([]*Set[T], 0, len(others)+2)
	if dest != nil {
		sets = append(sets, dest)
	}
	sets = append(sets, s)
	sets = append(sets, others...)
	keys := make([]string, len(sets))
	for i, x := range sets {
		if x == nil {
			if err := s.o.check(); err != nil {
				return nil, err
			}
			return nil, s.o.errorf("%w: set %d of the call", ErrNilValue, i)
		}
		if err := x.o.check(); err != nil {
			return nil, err
		}
		keys[i] = x.o.name
	}
	slot := s.o.c.slot(s.o.name)
	for _, k := range keys {
		if s.o.c.slot(k) != slot {
			return nil, s.o.errorf("%w: %q and %q (name the sets with one {hash tag})", ErrCrossSlot, s.o.name, k)
		}
	}
	return keys, nil
}
