package redisson

import (
	"context"
	"iter"
)

// The Map's iterator: HSCAN pages, never the whole hash in memory.

// Iterator returns an iterator over the map's entries that reads them with
// HSCAN, about batch entries per round trip, so that a large map is never
// read at once. It does no I/O:
//
//	it := m.Iterator(100)
//	for k, v := range it.All(ctx) {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
//
// As with HSCAN, an entry present for the whole iteration is yielded at
// least once, possibly more than once when Redis rehashes the hash
// meanwhile; entries added or removed meanwhile may or may not be yielded. A
// batch below 1 makes Err return ErrInvalidBatch; the other errors are those
// of ReadAll.
func (m *Map[K, V]) Iterator(batch int) *MapIterator[K, V] {
	return &MapIterator[K, V]{m: m, batch: batch, page: func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
		return m.c.rdb.HScan(ctx, m.name, cursor, "", count).Result()
	}}
}

// MapIterator iterates a Map's entries; see Map.Iterator. A MapIterator is
// for one goroutine at a time; All may be ranged over more than once, each
// time a new scan.
type MapIterator[K comparable, V any] struct {
	m     *Map[K, V]
	batch int
	err   error
	// page reads one page from cursor: field, value, field, value, ...
	// and the next cursor (HSCAN for a Map; a MapCache's leaves out its
	// expired entries).
	page func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error)
}

// All yields the entries, reading them batch by batch with ctx. It stops at
// the first error, which Err then returns; a ctx that ends stops it with
// ctx's error.
func (it *MapIterator[K, V]) All(ctx context.Context) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		it.err = it.scan(ctx, yield)
	}
}

// Err returns the error that ended the last iteration, or nil.
func (it *MapIterator[K, V]) Err() error { return it.err }

func (it *MapIterator[K, V]) scan(ctx context.Context, yield func(K, V) bool) error {
	m := it.m
	return m.pager(opMapScan, it.batch).scan(ctx, it.page, func(kv []string) (bool, error) {
		for i := 0; i+1 < len(kv); i += 2 {
			k, v, err := m.entry(kv[i], kv[i+1])
			if err != nil {
				return false, err
			}
			if !yield(k, v) {
				return false, nil
			}
		}
		return true, nil
	})
}
