package redisson

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// RemoveRangeByRank removes the members from rank start to rank stop, both
// included, lowest score first (one ZREMRANGEBYRANK), and returns how many
// it removed; as in Redis a negative rank counts from the highest (-1). It
// returns the errors of Size.
func (z *SortedSet[T]) RemoveRangeByRank(ctx context.Context, start, stop int64) (_ int64, err error) {
	ctx, rec, err := z.o.open(ctx, opZSetRemoveRange)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.ZRemRangeByRank(ctx, z.o.name, start, stop).Result()
	return n, z.o.wrap(err)
}

// RemoveRangeByScore removes the members whose score is in r (one
// ZREMRANGEBYSCORE) and returns how many it removed. It returns the errors
// of Count.
func (z *SortedSet[T]) RemoveRangeByScore(ctx context.Context, r ScoreRange) (_ int64, err error) {
	ctx, rec := z.o.begin(ctx, opZSetRemoveRange)
	defer func() { rec.end(err, OutcomeOK) }()
	min, max, err := z.bounds(r)
	if err != nil {
		return 0, err
	}
	z.o.c.trip(ctx, 1)
	n, err := z.o.c.rdb.ZRemRangeByScore(ctx, z.o.name, min, max).Result()
	return n, z.o.wrap(err)
}

// PollFirst removes and returns up to n members of the lowest scores,
// lowest first (one ZPOPMIN, atomic; Redisson's pollFirst(count)); n == 0
// is no call. When the removed bytes do not decode they are removed all the
// same and the error matches ErrCodec. It returns ErrNegativeCount for
// n < 0, and the errors of Size.
func (z *SortedSet[T]) PollFirst(ctx context.Context, n int64) ([]ScoredEntry[T], error) {
	return z.poll(ctx, n, z.o.c.rdb.ZPopMin)
}

// PollLast removes and returns up to n members of the highest scores,
// highest first (one ZPOPMAX). It returns the errors of PollFirst.
func (z *SortedSet[T]) PollLast(ctx context.Context, n int64) ([]ScoredEntry[T], error) {
	return z.poll(ctx, n, z.o.c.rdb.ZPopMax)
}

func (z *SortedSet[T]) poll(ctx context.Context, n int64, cmd func(context.Context, string, ...int64) *redis.ZSliceCmd) (_ []ScoredEntry[T], err error) {
	ctx, rec, err := z.o.open(ctx, opZSetPoll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if err := z.o.checkCount(n); err != nil || n == 0 {
		return nil, err
	}
	z.o.c.trip(ctx, 1)
	return z.entries(cmd(ctx, z.o.name, n).Result())
}

// entries decodes a reply of members with scores.
func (z *SortedSet[T]) entries(zs []redis.Z, err error) ([]ScoredEntry[T], error) {
	if err != nil {
		return nil, z.o.wrap(err)
	}
	out := make([]ScoredEntry[T], len(zs))
	for i, e := range zs {
		s, _ := e.Member.(string)
		v, err := decodeValue[T](z.o.codec, z.o.object, []byte(s))
		if err != nil {
			return nil, err
		}
		out[i] = ScoredEntry[T]{Value: v, Score: e.Score}
	}
	return out, nil
}

func (z *SortedSet[T]) values(ss []string, err error) ([]T, error) {
	if err != nil {
		return nil, z.o.wrap(err)
	}
	return decodeAll[T](&z.o, ss)
}

// readRange is the one body of the range reads: one operation opZSetRange,
// the read's checks (check), then its one round trip (read).
func readRange[T, R any](ctx context.Context, z *SortedSet[T], check func() error, read func(context.Context) (R, error)) (_ R, err error) {
	ctx, rec := z.o.begin(ctx, opZSetRange)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := check(); err != nil {
		var zero R
		return zero, err
	}
	z.o.c.trip(ctx, 1)
	return read(ctx)
}

// RangeByRank returns the members from rank start to rank stop, both
// included, lowest score first (one ZRANGE, Redisson's valueRange); as in
// Redis a negative rank counts from the highest (-1), so (0, -1) is every
// member. It returns ErrCodec when a member does not decode, and the errors
// of Size.
func (z *SortedSet[T]) RangeByRank(ctx context.Context, start, stop int64) ([]T, error) {
	return readRange(ctx, z, z.o.check, func(ctx context.Context) ([]T, error) {
		return z.values(z.o.c.rdb.ZRange(ctx, z.o.name, start, stop).Result())
	})
}

// RevRangeByRank is RangeByRank counting ranks from the highest score, and
// returning the members highest first (one ZREVRANGE, Redisson's
// valueRangeReversed).
func (z *SortedSet[T]) RevRangeByRank(ctx context.Context, start, stop int64) ([]T, error) {
	return readRange(ctx, z, z.o.check, func(ctx context.Context) ([]T, error) {
		return z.values(z.o.c.rdb.ZRevRange(ctx, z.o.name, start, stop).Result())
	})
}

// EntryRangeByRank is RangeByRank with the scores (one ZRANGE WITHSCORES,
// Redisson's entryRange).
func (z *SortedSet[T]) EntryRangeByRank(ctx context.Context, start, stop int64) ([]ScoredEntry[T], error) {
	return readRange(ctx, z, z.o.check, func(ctx context.Context) ([]ScoredEntry[T], error) {
		return z.entries(z.o.c.rdb.ZRangeWithScores(ctx, z.o.name, start, stop).Result())
	})
}

// EntryRevRangeByRank is RevRangeByRank with the scores (one ZREVRANGE
// WITHSCORES, Redisson's entryRangeReversed).
func (z *SortedSet[T]) EntryRevRangeByRank(ctx context.Context, start, stop int64) ([]ScoredEntry[T], error) {
	return readRange(ctx, z, z.o.check, func(ctx context.Context) ([]ScoredEntry[T], error) {
		return z.entries(z.o.c.rdb.ZRevRangeWithScores(ctx, z.o.name, start, stop).Result())
	})
}

// byScore builds the arguments of a range read by score.
func (z *SortedSet[T]) byScore(r ScoreRange, o RangeOptions) (*redis.ZRangeBy, error) {
	min, max, err := z.bounds(r)
	if err != nil {
		return nil, err
	}
	if err := z.o.checkCount(o.Offset); err != nil {
		return nil, err
	}
	if err := z.o.checkCount(o.Count); err != nil {
		return nil, err
	}
	by := &redis.ZRangeBy{Min: min, Max: max, Offset: o.Offset, Count: o.Count}
	if o.Offset > 0 && o.Count == 0 {
		by.Count = -1 // LIMIT offset -1: the rest of the range
	}
	return by, nil
}

// RangeByScore returns the members whose score is in r, shaped by o (one
// ZRANGEBYSCORE or ZREVRANGEBYSCORE, Redisson's valueRange(min, minInc,
// max, maxInc, offset, count) and valueRangeReversed). It returns
// ErrInvalidScore for a NaN bound, ErrNegativeCount for a negative offset
// or count, ErrCodec when a member does not decode, and the errors of Size.
func (z *SortedSet[T]) RangeByScore(ctx context.Context, r ScoreRange, o RangeOptions) ([]T, error) {
	var by *redis.ZRangeBy
	check := func() (err error) { by, err = z.byScore(r, o); return err }
	return readRange(ctx, z, check, func(ctx context.Context) ([]T, error) {
		if o.Reverse {
			return z.values(z.o.c.rdb.ZRevRangeByScore(ctx, z.o.name, by).Result())
		}
		return z.values(z.o.c.rdb.ZRangeByScore(ctx, z.o.name, by).Result())
	})
}

// EntryRangeByScore is RangeByScore with the scores (WITHSCORES,
// Redisson's entryRange by score).
func (z *SortedSet[T]) EntryRangeByScore(ctx context.Context, r ScoreRange, o RangeOptions) ([]ScoredEntry[T], error) {
	var by *redis.ZRangeBy
	check := func() (err error) { by, err = z.byScore(r, o); return err }
	return readRange(ctx, z, check, func(ctx context.Context) ([]ScoredEntry[T], error) {
		if o.Reverse {
			return z.entries(z.o.c.rdb.ZRevRangeByScoreWithScores(ctx, z.o.name, by).Result())
		}
		return z.entries(z.o.c.rdb.ZRangeByScoreWithScores(ctx, z.o.name, by).Result())
	})
}
