package redisson

import (
	"context"
)

// MapCache's read-through (WithReadThrough): Get loads a missing key once
// across every instance, storing the loaded value with ReadThrough's TTL
// and MaxIdle; with RefreshAfter it reads the entry's time to live too
// (mapcache_refresh.go).

// mapCacheLoad is a MapCache's loader, shared by the client's handles of
// the name (its counts are the loader's own).
type mapCacheLoad[K comparable, V any] struct {
	rt  *readThrough[K, V] // nil without WithReadThrough
	err error              // the loader's options are wrong: Get returns it
}

// mapCacheLoadOf returns the loader of the MapCache called name given opts:
// the client's one for the name and types if it has one (see
// WithReadThrough), else a new one it keeps.
func mapCacheLoadOf[K comparable, V any](c *Client, name, timeoutKey string, opts []ObjectOption) mapCacheLoad[K, V] {
	rt, err := readThroughOf[K, V](c, mapCacheKind, name, name, timeoutKey, opts)
	if rt != nil {
		if got, loaded := c.mapLoaders.LoadOrStore(name+"\x00"+rt.types(), rt); loaded {
			rt = got.(*readThrough[K, V])
		}
	}
	return mapCacheLoad[K, V]{rt: rt, err: err}
}

// get reads key (encoded k) with mapcache_get and, with a loader, loads it
// when absent.
func (mc *MapCache[K, V]) get(ctx context.Context, key K, k []byte) (V, bool, error) {
	read := func(ctx context.Context) (V, bool, error) {
		return mc.reply(mc.run(ctx, scriptMapCacheGet, k, "value").Result())
	}
	rt := mc.load.rt
	if rt == nil {
		return read(ctx)
	}
	stats := rt.stats
	if !rt.registered.Swap(true) {
		mc.m.c.caches.add(stats)
	}
	// The callers of one key in this process share one read and, if
	// absent, one load.
	first := true
	if rt.opts.RefreshAfter > 0 {
		read = func(ctx context.Context) (V, bool, error) { return mc.readFresh(ctx, key, k) }
	}
	return rt.get(ctx, missed[K, V]{key: key, k: k, h: keyHash(k),
		read: func(ctx context.Context) (V, bool, error) {
			v, ok, err := read(ctx)
			if first && err == nil { // the flight's first read: a hit or a miss
				first = false
				if ok {
					stats.hits.Add(1)
				} else {
					stats.misses.Add(1)
				}
			}
			return v, ok, err
		},
		store: func(ctx context.Context, v V) (V, error) {
			old, had, err := mc.PutIfAbsentWithTTL(ctx, key, v, rt.opts.TTL, rt.opts.MaxIdle)
			if had && err == nil {
				return old, nil
			}
			return v, err
		}})
}

// CacheStats returns the read-through counts of the map cache's name on its
// client (its handles share them, see WithReadThrough): Hits and Misses
// count the reads of Get that found the key in Redis or not (concurrent
// Gets of one key share one read), Loads and LoadErrors the loader's runs.
// All are zero without WithReadThrough. With a Writer, Writes,
// WriteErrors, WritesDropped and WriteQueue are its counts.
func (mc *MapCache[K, V]) CacheStats() CacheStats {
	var s CacheStats
	if mc.load.rt != nil {
		s = mc.load.rt.stats.snapshot()
	}
	if w := mc.w.w; w != nil {
		s.add(w.stats.snapshot())
	}
	return s
}
