package redisson

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

const sortedSetKind = "sorted set"

// SortedSet is a set of values of type T ordered by a float64 score,
// stored in a Redis sorted set and wire-compatible with Redisson's
// RScoredSortedSet: the zset is at the SortedSet's name, each member is the
// value encoded with the SortedSet's codec (Options.Codec unless WithCodec
// says otherwise) and each score a plain Redis double, sent as Redisson
// sends it (Java's Double.toString: "1.5", "2.0"). Members with equal
// scores are ordered by their encoded bytes, as Redis orders them.
//
// Keys: one, the zset at name (docs/keys.md). Redis drops it with its last
// member.
//
// Complexity: Add, AddIfAbsent, AddScore, Remove, Rank and Score are
// O(log N) (one command each); the range calls O(log N + M) for M members
// read; PollFirst and PollLast O(n log N) in one ZPOPMIN/ZPOPMAX; Iterator
// pages with ZSCAN.
//
// Guarantees: every call is one atomic command. Under a failover,
// asynchronous replication can lose acknowledged writes
// (docs/guarantees.md); a resent AddScore adds twice and a resent Poll
// removes twice (go-redis resends a call whose reply was lost).
//
// A NaN score, delta or bound is ErrInvalidScore (Redis has no NaN
// score); nil pointers are ErrNilValue; a member that does not decode is
// ErrCodec naming the sorted set and the codec; a key holding another Redis
// type is ErrWrongType and every write leaves it unchanged.
//
// A SortedSet is safe for concurrent use and holds no state of its own.
type SortedSet[T any] struct {
	o collection
}

// ScoredEntry is one member of a SortedSet with its score.
type ScoredEntry[T any] struct {
	Value T
	Score float64
}

// ScoreRange is an interval of scores: from Min to Max, each bound included
// unless MinExclusive or MaxExclusive says otherwise. Min and Max may be
// infinite (math.Inf); a NaN bound is ErrInvalidScore.
type ScoreRange struct {
	Min, Max                   float64
	MinExclusive, MaxExclusive bool
}

// RangeOptions shapes a range read by score: Reverse reads from the highest
// score down (ZREVRANGEBYSCORE); Offset skips that many members of the
// range first and Count, when above 0, reads at most that many (LIMIT).
// A negative Offset or Count is ErrNegativeCount. The zero value reads the
// whole range, lowest score first.
type RangeOptions struct {
	Reverse bool
	Offset  int64
	Count   int64
}

// GetSortedSet returns the sorted set called name, of members of type T
// (Redisson's getScoredSortedSet). It does no I/O. opts may give the sorted
// set its own codec (WithCodec); a nil option or a nil codec keeps the
// client's default. An empty name makes every method return ErrEmptyName.
func GetSortedSet[T any](c *Client, name string, opts ...ObjectOption) *SortedSet[T] {
	return &SortedSet[T]{o: newCollection(c, sortedSetKind, name, opts)}
}

// Name returns the sorted set's name, its Redis key.
func (z *SortedSet[T]) Name() string { return z.o.name }

// Codec returns the codec the sorted set encodes its members with.
func (z *SortedSet[T]) Codec() Codec { return z.o.codec }

// Add sets v's score, adding v when absent (one ZADD), and reports whether
// v was added. It returns ErrInvalidScore for a NaN score, ErrNilValue for
// a nil pointer, ErrCodec when v does not encode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error
// otherwise.
func (z *SortedSet[T]) Add(ctx context.Context, score float64, v T) (bool, error) {
	n, err := z.add(ctx, false, []ScoredEntry[T]{{v, score}})
	return n == 1, err
}

// AddIfAbsent adds v with score when v is absent (one ZADD NX) and reports
// whether it did; a present member keeps its score. It returns the errors
// of Add.
func (z *SortedSet[T]) AddIfAbsent(ctx context.Context, score float64, v T) (bool, error) {
	n, err := z.add(ctx, true, []ScoredEntry[T]{{v, score}})
	return n == 1, err
}

// AddAll sets the scores of entries, adding the absent ones, in one ZADD
// (Redisson's addAll) and returns how many were added; no entries is no
// call and 0. If one entry is bad nothing is written. It returns the errors
// of Add.
func (z *SortedSet[T]) AddAll(ctx context.Context, entries ...ScoredEntry[T]) (int64, error) {
	return z.add(ctx, false, entries)
}

func (z *SortedSet[T]) add(ctx context.Context, nx bool, entries []ScoredEntry[T]) (_ int64, err error) {
	ctx, rec, err := z.o.open(ctx, opZSetAdd)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	args := make([]any, 0, 3+2*len(entries))
	args = append(args, "zadd", z.o.name)
	if nx {
		args = append(args, "nx")
	}
	for _, e := range entries {
		score, err := z.o.scoreArg(e.Score)
		if err != nil {
			return 0, err
		}
		b, err := z.o.encode(e.Value)
		if err != nil {
			return 0, err
		}
		args = append(args, score, b)
	}
	if len(entries) == 0 {
		return 0, nil
	}
	cmd := redis.NewIntCmd(ctx, args...)
	z.o.c.trip(ctx, 1)
	_ = z.o.c.rdb.Process(ctx, cmd)
	n, err := cmd.Result()
	return n, z.o.wrap(err)
}

// AddScore adds delta to v's score, adding v with score delta when absent
// (one ZINCRBY, Redisson's addScore), and returns the new score. It
// returns ErrInvalidScore for a NaN delta (or a sum Redis finds NaN, +Inf
// plus -Inf; nothing changed), and the errors of Add.
func (z *SortedSet[T]) AddScore(ctx context.Context, v T, delta float64) (_ float64, err error) {
	ctx, rec, err := z.o.open(ctx, opZSetAddScore)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if _, err := z.o.scoreArg(delta); err != nil {
		return 0, err
	}
	b, err := z.o.encode(v)
	if err != nil {
		return 0, err
	}
	z.o.c.trip(ctx, 1)
	f, err := z.o.c.rdb.ZIncrBy(ctx, z.o.name, delta, b).Result()
	if err != nil && err.Error() == "ERR resulting score is not a number (NaN)" {
		return 0, z.o.errorf("%w: %v", ErrInvalidScore, err)
	}
	return f, z.o.wrap(err)
}

// member encodes v after the shared checks.
func (z *SortedSet[T]) member(v T) (string, error) {
	if err := z.o.check(); err != nil {
		return "", err
	}
	return z.o.encode(v)
}

// Score returns v's score and true, or 0 and false when v is not a member
// (one ZSCORE, Redisson's getScore). It returns ErrNilValue for a nil
// pointer, ErrCodec when v does not encode; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (z *SortedSet[T]) Score(ctx context.Context, v T) (_ float64, _ bool, err error) {
	ctx, rec := z.o.begin(ctx, opZSetScore)
	defer func() { rec.end(err, OutcomeOK) }()
	b, err := z.member(v)
	if err != nil {
		return 0, false, err
	}
	z.o.c.trip(ctx, 1)
	f, err := z.o.c.rdb.ZScore(ctx, z.o.name, b).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return f, err == nil, z.o.wrap(err)
}

// Contains reports whether v is a member (one ZSCORE, as Redisson). It
// returns the errors of Score.
func (z *SortedSet[T]) Contains(ctx context.Context, v T) (bool, error) {
	_, ok, err := z.Score(ctx, v)
	return ok, err
}

// Rank returns v's 0-based position from the lowest score and true, or 0
// and false when v is not a member (one ZRANK). It returns the errors of
// Score.
func (z *SortedSet[T]) Rank(ctx context.Context, v T) (int64, bool, error) {
	return z.rank(ctx, v, z.o.c.rdb.ZRank)
}

// RevRank returns v's 0-based position from the highest score and true, or
// 0 and false when v is not a member (one ZREVRANK). It returns the errors
// of Score.
func (z *SortedSet[T]) RevRank(ctx context.Context, v T) (int64, bool, error) {
	return z.rank(ctx, v, z.o.c.rdb.ZRevRank)
}

func (z *SortedSet[T]) rank(ctx context.Context, v T, cmd func(context.Context, string, string) *redis.IntCmd) (_ int64, _ bool, err error) {
	ctx, rec := z.o.begin(ctx, opZSetRank)
	defer func() { rec.end(err, OutcomeOK) }()
	b, err := z.member(v)
	if err != nil {
		return 0, false, err
	}
	z.o.c.trip(ctx, 1)
	n, err := cmd(ctx, z.o.name, b).Result()
	if errors.Is(err, redis.Nil) {
		return 0, false, nil
	}
	return n, err == nil, z.o.wrap(err)
}

// Remove removes v (one ZREM) and reports whether it was a member. It
// returns the errors of Score.
func (z *SortedSet[T]) Remove(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec := z.o.begin(ctx, opZSetRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	b, err := z.member(v)
	if err != nil {
		return false, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.ZRem(ctx, z.o.name, b).Result()
	return n == 1, z.o.wrap(err)
}

// Size returns the number of members (0 when the sorted set does not
// exist; one ZCARD). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (z *SortedSet[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := z.o.open(ctx, opZSetSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.ZCard(ctx, z.o.name).Result()
	return n, z.o.wrap(err)
}

// Count returns the number of members whose score is in r (one ZCOUNT). It
// returns ErrInvalidScore for a NaN bound, and the errors of Size.
func (z *SortedSet[T]) Count(ctx context.Context, r ScoreRange) (_ int64, err error) {
	ctx, rec := z.o.begin(ctx, opZSetCount)
	defer func() { rec.end(err, OutcomeOK) }()
	min, max, err := z.bounds(r)
	if err != nil {
		return 0, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.ZCount(ctx, z.o.name, min, max).Result()
	return n, z.o.wrap(err)
}

// bounds checks the object and formats r as ZRANGEBYSCORE's min and max:
// "(" before an exclusive bound.
func (z *SortedSet[T]) bounds(r ScoreRange) (string, string, error) {
	if err := z.o.check(); err != nil {
		return "", "", err
	}
	min, err := z.o.scoreArg(r.Min)
	if err != nil {
		return "", "", err
	}
	max, err := z.o.scoreArg(r.Max)
	if err != nil {
		return "", "", err
	}
	if r.MinExclusive {
		min = "(" + min
	}
	if r.MaxExclusive {
		max = "(" + max
	}
	return min, max, nil
}

// Delete deletes the sorted set (whatever type its key holds, like
// Redisson) and reports whether it existed. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (z *SortedSet[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := z.o.open(ctx, opZSetDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.Del(ctx, z.o.name).Result()
	return n == 1, z.o.wrap(err)
}
