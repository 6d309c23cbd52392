package redisson

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// MapCache's Writer (WithWriteThrough, WithWriteBehind): its writes go to
// the Writer after the map in Redis was written; the handles of one name
// share one Writer and its queue.

// mapCacheWrite is a MapCache's Writer, shared by the client's handles of
// the name (its counts are the Writer's own).
type mapCacheWrite[K comparable, V any] struct {
	w   *mapWriter[K, V] // nil without a Writer
	err error            // the Writer's options are wrong: writes return it
}

// mapCacheWriteOf returns the Writer of the MapCache called name given
// opts: the client's one for the name and types if it has one, else a new
// one it keeps (and closes at Client.Close).
func mapCacheWriteOf[K comparable, V any](c *Client, name string, opts []ObjectOption) mapCacheWrite[K, V] {
	if objectOptionsOf(opts).writer == nil {
		return mapCacheWrite[K, V]{}
	}
	id := name + "\x00" + fmt.Sprintf("%T\x00%T", *new(K), *new(V))
	if got, ok := c.mapWriters.Load(id); ok {
		return mapCacheWrite[K, V]{w: got.(*mapWriter[K, V])}
	}
	stats := &cacheCounters{}
	w, err := writerOf[K, V](c, mapCacheKind, name, stats, opts)
	if err != nil {
		return mapCacheWrite[K, V]{err: err}
	}
	if got, loaded := c.mapWriters.LoadOrStore(id, w); loaded {
		_ = w.close() // another handle's came first: this one never queued anything
		return mapCacheWrite[K, V]{w: got.(*mapWriter[K, V])}
	}
	c.caches.add(stats)
	return mapCacheWrite[K, V]{w: w}
}

// evict removes keys from the map without the Writer (its failure's
// clean-up).
func (mc *MapCache[K, V]) evict(ctx context.Context, keys []K) error {
	for _, key := range keys {
		k, err := mc.m.encodeKey(key)
		if err != nil {
			return err
		}
		if err := mc.run(ctx, scriptMapCacheRemove, k).Err(); err != nil && !errors.Is(err, redis.Nil) {
			return mc.m.wrap(err)
		}
	}
	return nil
}

// Flush writes the write-behind queue of the map cache's Writer out at
// once (see WithWriteBehind) and returns when it is empty; nothing without
// a write-behind Writer. Client.Close writes it out too. It returns
// ctx's error when ctx ends first, ErrInvalidOption for a wrong Writer,
// or ErrHandleClosed after Client.Close.
func (mc *MapCache[K, V]) Flush(ctx context.Context) error {
	if mc.w.err != nil {
		return mc.w.err
	}
	return mc.w.w.flush(ctx)
}
