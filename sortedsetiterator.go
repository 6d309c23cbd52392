package redisson

import (
	"context"
	"iter"
	"strconv"
)

// Iterator returns an iterator over the sorted set's members and scores
// that reads them with ZSCAN, about batch members per round trip, so that
// a large sorted set is never read at once. It does no I/O. The order is
// ZSCAN's, not by score (small sorted sets come in one page, in score
// order); read in score order, page by page, with RangeByRank or
// RangeByScore and RangeOptions.Offset. As with ZSCAN, a member present for
// the whole iteration is yielded at least once, possibly more than once
// when Redis rehashes the set meanwhile. A batch below 1 makes Err return
// ErrInvalidBatch; the other errors are those of RangeByRank.
func (z *SortedSet[T]) Iterator(batch int) *SortedSetIterator[T] {
	return &SortedSetIterator[T]{z: z, batch: batch}
}

// SortedSetIterator iterates a SortedSet's members; see
// SortedSet.Iterator. A SortedSetIterator is for one goroutine at a time;
// All may be ranged over more than once, each time a new scan.
type SortedSetIterator[T any] struct {
	z     *SortedSet[T]
	batch int
	err   error
}

// All yields each member with its score, reading them batch by batch with
// ctx. It stops at the first error, which Err then returns; a ctx that
// ends stops it with ctx's error.
func (it *SortedSetIterator[T]) All(ctx context.Context) iter.Seq2[T, float64] {
	return func(yield func(T, float64) bool) {
		o := &it.z.o
		scan := func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
			return o.c.rdb.ZScan(ctx, o.name, cursor, "", count).Result()
		}
		it.err = o.pager(opZSetScan, it.batch).scan(ctx, scan, func(page []string) (bool, error) {
			for i := 0; i+1 < len(page); i += 2 {
				v, err := decodeValue[T](o.codec, o.object, []byte(page[i]))
				if err != nil {
					return false, err
				}
				score, err := strconv.ParseFloat(page[i+1], 64)
				if err != nil {
					return false, o.errorf("%w: score %q", ErrUnexpectedReply, page[i+1])
				}
				if !yield(v, score) {
					return false, nil
				}
			}
			return true, nil
		})
	}
}

// Err returns the error that ended the last iteration, or nil.
func (it *SortedSetIterator[T]) Err() error { return it.err }
