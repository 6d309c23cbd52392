package redisson

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// MapCache's stale-while-revalidate (ReadThrough.RefreshAfter): a read that
// finds an entry whose time to live in Redis is down to TTL - RefreshAfter
// or less returns it and starts one background reload of its key, under
// the key's load lease. The entries stay Redisson's: the age is read from
// the expiry every instance sees (the timeout zset), nothing is added.

// readFresh reads key (encoded k) with its time to live, and starts its
// refresh when the entry is due.
func (mc *MapCache[K, V]) readFresh(ctx context.Context, key K, k []byte) (V, bool, error) {
	var zero V
	r, err := mc.run(ctx, scriptMapCacheGet, k, "ttl").Result()
	if errors.Is(err, redis.Nil) || (err == nil && r == nil) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, mc.m.wrap(err)
	}
	pair, ok := r.([]any)
	if !ok || len(pair) != 2 {
		return zero, false, mc.unexpected(r)
	}
	entry, ok1 := pair[0].(string)
	ttl, ok2 := pair[1].(int64)
	if !ok1 || !ok2 {
		return zero, false, mc.unexpected(r)
	}
	v, err := mc.value(entry)
	if err != nil {
		return zero, false, err
	}
	rt := mc.load.rt
	if ttl >= 0 && ttl <= (rt.opts.TTL-rt.opts.RefreshAfter).Milliseconds() {
		mc.maybeRefresh(key)
	}
	return v, true, nil
}

// maybeRefresh starts the background refresh of key unless one runs in
// this process.
func (mc *MapCache[K, V]) maybeRefresh(key K) {
	mc.load.rt.refresh.start(mc.m.c.handles, key, func(ctx context.Context) { mc.revalidate(ctx, key) })
}

// revalidate is one refresh: take the key's lease (or leave it to the
// instance holding it), read the present entry, load, and replace the
// entry only if it is still the one read. It ends with the Client (ctx) or
// after LoadTimeout.
func (mc *MapCache[K, V]) revalidate(ctx context.Context, key K) {
	mc.load.rt.revalidate(ctx, mc.m, mapCacheKind, mc.keys[0], key, func(ctx context.Context, k []byte, _ [16]byte, before string, v V, notFound bool) error {
		if notFound { // not found: the entry is left to expire
			return nil
		}
		return mc.replace(ctx, k, before, v)
	})
}

// replace stores v at k, with the loader's TTL and MaxIdle, if the live
// entry is still before.
func (mc *MapCache[K, V]) replace(ctx context.Context, k []byte, before string, v V) error {
	rt := mc.load.rt
	val, err := mc.m.encode(v)
	if err != nil {
		return err
	}
	ttl, _ := mc.millis("ttl", rt.opts.TTL)
	idle, _ := mc.millis("max idle", rt.opts.MaxIdle)
	r, err := mc.run(ctx, scriptMapCachePut, "same", k, mapCacheEntry(idle, val), ttl, idle, before).Slice()
	if err != nil {
		return mc.m.wrap(err)
	}
	if len(r) != 2 {
		return fmt.Errorf("%w: mapcache_put replied %v", ErrUnexpectedReply, r)
	}
	return nil
}
