package redisson

import (
	"context"
	"time"
)

// LocalCachedMap's bypass and control calls: reading Redis past the local
// cache, preloading it, writing the Writer's queue out, and the report of
// one instance's cache.

// GetFromRedis returns the value at key as Redis has it now, with one
// HGET, neither reading nor filling the local cache and without loading
// (Redisson's #6065: a read that must not be served a copy). With
// StoreLocalCacheOnly nothing is in Redis: it reports key absent. It
// returns the errors of Get but the loader's.
func (lc *LocalCachedMap[K, V]) GetFromRedis(ctx context.Context, key K) (V, bool, error) {
	var zero V
	if _, err := lc.ready(ctx); err != nil {
		return zero, false, err
	}
	k, err := lc.m.encodeKey(key)
	if err != nil || lc.opts.StoreMode == StoreLocalCacheOnly {
		return zero, false, err
	}
	v, err := lc.m.c.rdb.HGet(ctx, lc.m.name, string(k)).Result()
	return lc.value(v, err)
}

// Preload reads keys into the local cache as GetAll does (one HMGET for
// those not cached; with a ReadThrough the absent ones are loaded), so that
// the next reads of them are local hits. On a handle's first call it first
// waits (5s at most) for the map's subscription to be confirmed: nothing
// is cached before. It returns the errors of GetAll.
func (lc *LocalCachedMap[K, V]) Preload(ctx context.Context, keys ...K) error {
	n, err := lc.ready(ctx)
	if err != nil {
		return err
	}
	lc.awaitLive(ctx, n)
	_, err = lc.GetAll(ctx, keys...)
	return err
}

// awaitLive waits, 5s at most, until the local cache serves (its
// subscription confirmed).
func (lc *LocalCachedMap[K, V]) awaitLive(ctx context.Context, n *near[K, V]) {
	lc.mu.Lock()
	sub := lc.sub
	lc.mu.Unlock()
	if sub == nil || n.live.Load() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	sub.ready(ctx, 5*time.Second)
	for !n.live.Load() && ctx.Err() == nil { // the hook that sets it runs just after
		t := time.NewTimer(time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
}

// PreloadCache reads up to count entries of the map (all of them for a
// count of 0) into the local cache, paging with HSCAN (Redisson's
// preloadCache), and returns how many it cached. An entry written or
// invalidated while it was read is left out, as for any read; so are
// entries the CacheSize has no room for. Nothing is loaded. It waits for
// the subscription as Preload does. It returns
// ErrNegativeCount for a negative count, and the errors of ReadAll.
func (lc *LocalCachedMap[K, V]) PreloadCache(ctx context.Context, count int) (int, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return 0, err
	}
	if count < 0 {
		return 0, objectErrorf(localCacheKind, lc.m.name, "%w: %d", ErrNegativeCount, count)
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		return 0, nil
	}
	lc.awaitLive(ctx, n)
	cached := 0
	var cursor uint64
	for {
		gen, epochs := n.readAny()
		page, next, err := lc.m.c.rdb.HScan(ctx, lc.m.name, cursor, "", 100).Result()
		if err != nil {
			return cached, lc.wrap(err)
		}
		for i := 0; i+1 < len(page); i += 2 {
			key, v, err := lc.m.entry(page[i], page[i+1])
			if err != nil {
				return cached, err
			}
			if !lc.cacheable(key) {
				continue
			}
			h := keyHash([]byte(page[i]))
			n.loaded(ticketOf(gen, &epochs, h), key, h, v)
			if cached++; count > 0 && cached >= count {
				return cached, nil
			}
		}
		if cursor = next; cursor == 0 {
			return cached, nil
		}
	}
}

// Flush writes the queue of the map's write-behind Writer out at once (see
// WithWriteBehind) and returns when it is empty; nothing without one. It
// returns ctx's error when ctx ends first, ErrInvalidOption for a wrong
// Writer, or ErrHandleClosed after Close.
func (lc *LocalCachedMap[K, V]) Flush(ctx context.Context) error {
	if lc.badOpts != nil {
		return lc.badOpts
	}
	if lc.closed.Load() {
		return lc.closedErr()
	}
	return lc.w.flush(ctx)
}

// CacheReport describes one LocalCachedMap instance: its settings and its
// state now (LocalCachedMap.CacheReport).
type CacheReport struct {
	Name           string
	CacheSize      int            // the bound on local entries (0: none)
	EvictionPolicy EvictionPolicy // what is dropped at CacheSize
	TimeToLive     time.Duration  // a local entry's life (0: no limit)
	MaxIdle        time.Duration  // a local entry's life unread (0: no limit)
	SyncStrategy   SyncStrategy
	StoreMode      StoreMode
	Live           bool   // the cache serves: the map's channel is confirmed
	ReadThrough    bool   // WithReadThrough is set
	WriteMode      string // "" (no Writer), "write-through" or "write-behind"
	Stats          CacheStats
}

// CacheReport returns this instance's report: its local cache's settings,
// whether it serves, and its counts (Stats.Size the entries now,
// Stats.WriteQueue the keys waiting for the Writer). It does no I/O.
func (lc *LocalCachedMap[K, V]) CacheReport() CacheReport {
	r := CacheReport{
		Name: lc.m.name, CacheSize: lc.opts.CacheSize, EvictionPolicy: lc.opts.EvictionPolicy,
		TimeToLive: lc.opts.TimeToLive, MaxIdle: lc.opts.MaxIdle, SyncStrategy: lc.opts.SyncStrategy,
		StoreMode: lc.opts.StoreMode, ReadThrough: lc.rt != nil, Stats: lc.stats.snapshot(),
	}
	if n := lc.n.Load(); n != nil {
		r.Live = n.live.Load()
	}
	switch {
	case lc.w == nil:
	case lc.w.q == nil:
		r.WriteMode = "write-through"
	default:
		r.WriteMode = "write-behind"
	}
	return r
}
