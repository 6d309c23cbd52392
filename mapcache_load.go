package redisson

import (
	"context"
	"sync/atomic"
)

// MapCache's read-through (WithReadThrough): Get loads a missing key once
// across every instance, storing the loaded value with ReadThrough's TTL
// and MaxIdle.

// mapCacheLoad is a MapCache's loader and its counts.
type mapCacheLoad[K comparable, V any] struct {
	rt         *readThrough[K, V] // nil without WithReadThrough
	err        error              // the loader's options are wrong: Get returns it
	stats      cacheCounters
	registered atomic.Bool // stats are in the client's Stats.Cache
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
	if !mc.load.registered.Swap(true) {
		mc.m.c.caches.add(&mc.load.stats)
	}
	// The callers of one key in this process share one read and, if
	// absent, one load.
	first := true
	return rt.get(ctx, missed[K, V]{key: key, k: k, h: keyHash(k),
		read: func(ctx context.Context) (V, bool, error) {
			v, ok, err := read(ctx)
			if first && err == nil { // the flight's first read: a hit or a miss
				first = false
				if ok {
					mc.load.stats.hits.Add(1)
				} else {
					mc.load.stats.misses.Add(1)
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

// CacheStats returns the map cache's read-through counts since it was
// created: Hits and Misses count the reads of Get that found the key in
// Redis or not (concurrent Gets of one key share one read), Loads and LoadErrors the loader's runs (all zero without
// WithReadThrough).
func (mc *MapCache[K, V]) CacheStats() CacheStats {
	return mc.load.stats.snapshot()
}
