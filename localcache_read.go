package redisson

import (
	"context"
	"fmt"
	"time"
)

// LocalCachedMap's reads of single keys and of several, with their
// read-through (ReadThrough) and the per-read report (GetWithInfo).

// ReadInfo says where a LocalCachedMap read's value came from
// (GetWithInfo).
type ReadInfo struct {
	// Found reports whether the key had a value (Get's bool).
	Found bool
	// Cached reports whether the value was served from the local cache.
	Cached bool
	// Stale reports that the value was served from the local cache while
	// the connection carrying the map's invalidations was lost
	// (LocalCacheOptions.ServeStaleFor): writes made since the loss, and in
	// the moments before it was detected, may be missing from it.
	Stale bool
	// StaleFor is, with Stale, how long ago the loss was detected.
	StaleFor time.Duration
}

// Get returns the value at key and true, or the zero value and false when
// key is absent: from the local cache when it holds key, otherwise with one
// HGET, caching the value read. Absent keys are not cached; with a
// ReadThrough (WithReadThrough) an absent key is loaded, once across every
// instance of the map, and the loaded value stored and cached. It returns
// the errors of Map.Get, ErrInvalidOption and ErrHandleClosed, and with a
// ReadThrough the loader's error (wrapped) and ErrLoaderPanicked.
func (lc *LocalCachedMap[K, V]) Get(ctx context.Context, key K) (V, bool, error) {
	v, info, err := lc.GetWithInfo(ctx, key)
	return v, info.Found, err
}

// GetWithInfo is Get reporting where the value came from, and whether it
// may be stale (see ReadInfo and LocalCacheOptions.ServeStaleFor). It
// returns the errors of Get.
func (lc *LocalCachedMap[K, V]) GetWithInfo(ctx context.Context, key K) (V, ReadInfo, error) {
	var zero V
	n, err := lc.ready(ctx)
	if err != nil {
		return zero, ReadInfo{}, err
	}
	cacheable := lc.cacheable(key)
	if cacheable {
		if v, ok, since := n.get(key); ok {
			info := ReadInfo{Found: true, Cached: true}
			if since != 0 {
				info.Stale, info.StaleFor = true, time.Duration(time.Now().UnixNano()-since)
			} else if lc.rt != nil && lc.rt.opts.RefreshAfter > 0 {
				lc.maybeRefresh(n, key)
			}
			return v, info, nil
		}
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		if isNil(key) {
			return zero, ReadInfo{}, objectErrorf(localCacheKind, lc.m.name, "%w: key", ErrNilValue)
		}
		return zero, ReadInfo{}, nil
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return zero, ReadInfo{}, err
	}
	h := keyHash(k)
	read := func(ctx context.Context) (V, bool, error) {
		t := n.read(h)
		v, err := lc.m.c.rdb.HGet(ctx, lc.m.name, string(k)).Result()
		val, ok, err := lc.value(v, err)
		if ok && cacheable {
			n.loaded(t, key, h, val)
		}
		return val, ok, err
	}
	var val V
	var ok bool
	if lc.rt == nil {
		val, ok, err = read(ctx)
	} else { // the callers of one key in this process share one read and, if absent, one load
		val, ok, err = lc.rt.get(ctx, missed[K, V]{key: key, k: k, h: h, read: read,
			store: func(ctx context.Context, v V) (V, error) { return lc.putAbsent(ctx, n, key, k, h, v) }})
	}
	if err != nil || !ok {
		return zero, ReadInfo{}, err
	}
	return val, ReadInfo{Found: true}, nil
}

// putAbsent stores a loaded value v at key if key is still absent, telling
// the other instances, and returns the value key has then.
func (lc *LocalCachedMap[K, V]) putAbsent(ctx context.Context, n *near[K, V], key K, k []byte, h [16]byte, v V) (V, error) {
	val, err := lc.m.encode(v)
	if err != nil {
		return v, err
	}
	msg := lc.invalidateMsg(h)
	if lc.opts.SyncStrategy == SyncUpdate {
		msg = lc.updateMsg(k, val)
	}
	cacheable := lc.cacheable(key)
	var t ticket
	if cacheable {
		t = n.writing(key, h)
	}
	reply, err := lc.m.c.scripts.run(ctx, scriptLocalPut, []string{lc.m.name, lc.topic, lc.log},
		k, val, msg, lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx), "absent").Result()
	prev, had, err := lc.value(reply, err)
	if cacheable {
		n.written(t, key, h, v, err == nil && !had)
	}
	switch {
	case err != nil:
		return v, err
	case had:
		return prev, nil
	}
	return v, nil
}

// GetAll returns the entries of keys that are present, the cached ones
// from the local cache and the others with one HMGET (caching them). No
// keys is no call and an empty map. With a ReadThrough the keys still
// absent are loaded (with LoadAll when set, else one by one), as Get loads
// one. It returns the errors of Get.
func (lc *LocalCachedMap[K, V]) GetAll(ctx context.Context, keys ...K) (map[K]V, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(keys))
	type miss struct {
		key K
		k   []byte
		h   [16]byte
		t   ticket
	}
	var misses []miss
	var fields []string
	for _, key := range keys {
		if !lc.cacheable(key) {
			return nil, lc.m.codecErr(fmt.Sprintf("key %v is not comparable", key))
		}
		if v, ok := n.lookup(key); ok {
			out[key] = v
			continue
		}
		k, err := lc.m.encodeKey(key)
		if err != nil {
			return nil, err
		}
		if lc.opts.StoreMode == StoreLocalCacheOnly {
			continue
		}
		h := keyHash(k)
		misses = append(misses, miss{key: key, k: k, h: h, t: n.read(h)})
		fields = append(fields, string(k))
	}
	if len(fields) == 0 {
		return out, nil
	}
	vals, err := lc.m.c.rdb.HMGet(ctx, lc.m.name, fields...).Result()
	if err != nil {
		return nil, lc.wrap(err)
	}
	var absent []K
	for i, raw := range vals {
		val, ok, err := lc.value(raw, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			out[misses[i].key] = val
			n.loaded(misses[i].t, misses[i].key, misses[i].h, val)
		} else if lc.rt != nil {
			absent = append(absent, misses[i].key)
		}
	}
	if len(absent) > 0 {
		if err := lc.loadAll(ctx, n, absent, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// loadAll loads the keys GetAll found absent into out: with LoadAll, the
// keys this instance takes the lease of in one call, the others as Get
// does; without it, each as Get does.
func (lc *LocalCachedMap[K, V]) loadAll(ctx context.Context, n *near[K, V], keys []K, out map[K]V) error {
	rest := keys
	if lc.rt.opts.LoadAll != nil {
		var err error
		rest, err = lc.rt.bulk(ctx, keys, out, lc.m.encodeKey,
			func(ctx context.Context, key K, k []byte, h [16]byte, v V) (V, error) {
				return lc.putAbsent(ctx, n, key, k, h, v)
			})
		if err != nil {
			return err
		}
	}
	for _, key := range rest {
		v, ok, err := lc.Get(ctx, key)
		if err != nil {
			return err
		}
		if ok {
			out[key] = v
		}
	}
	return nil
}

// CacheStats returns this handle's counts since it was created (hits,
// misses, loads, evictions, invalidations received, stale serves) and the
// size of its local cache. It does no I/O.
func (lc *LocalCachedMap[K, V]) CacheStats() CacheStats {
	return lc.stats.snapshot()
}
