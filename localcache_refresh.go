package redisson

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// LocalCachedMap's stale-while-revalidate (ReadThrough.RefreshAfter): a hit
// on an entry cached RefreshAfter ago or more starts one background reload
// of its key, under the key's load lease.

// refreshes is a handle's keys being refreshed in this process.
type refreshes[K comparable] struct {
	mu   sync.Mutex
	keys map[K]struct{}
}

// start runs refresh(ctx) for key on loop, unless a refresh of key runs
// in this process already; key counts as refreshing until refresh returns.
func (r *refreshes[K]) start(loop *lazyLoop, key K, refresh func(ctx context.Context)) {
	r.mu.Lock()
	if _, busy := r.keys[key]; busy {
		r.mu.Unlock()
		return
	}
	if r.keys == nil {
		r.keys = map[K]struct{}{}
	}
	r.keys[key] = struct{}{}
	r.mu.Unlock()
	done := func() {
		r.mu.Lock()
		delete(r.keys, key)
		r.mu.Unlock()
	}
	if !loop.spawn(func(ctx context.Context) {
		defer done()
		refresh(ctx)
	}) {
		done()
	}
}

// bornOf returns when key's entry was cached (unix ns), if it is.
func (n *near[K, V]) bornOf(key K) (int64, bool) {
	e, ok := n.cache.get(key)
	if !ok {
		return 0, false
	}
	return e.born, true
}

// maybeRefresh starts the background refresh of key if its entry is older
// than RefreshAfter and no refresh of it runs in this process.
func (lc *LocalCachedMap[K, V]) maybeRefresh(n *near[K, V], key K) {
	born, ok := n.bornOf(key)
	if !ok || time.Now().UnixNano()-born < int64(lc.rt.opts.RefreshAfter) {
		return
	}
	lc.refresh.start(lc.m.c.handles, key, func(ctx context.Context) { lc.revalidate(ctx, n, key) })
}

// revalidate is one refresh: take the key's lease (or leave it to the
// instance holding it), read the present value, load, and replace the
// value only if it is still the one read. It ends with the Client (ctx)
// or after LoadTimeout.
func (lc *LocalCachedMap[K, V]) revalidate(ctx context.Context, n *near[K, V], key K) {
	lc.rt.revalidate(ctx, lc.m, localCacheKind, lc.m.name, key, func(ctx context.Context, k []byte, h [16]byte, before string, v V, notFound bool) error {
		if notFound {
			_, err := lc.fastRemove(ctx, []K{key})
			return err
		}
		return lc.replace(ctx, n, key, k, h, before, v)
	})
}

// replace stores v at key if its value is still before, telling the
// other instances, and caches it here.
func (lc *LocalCachedMap[K, V]) replace(ctx context.Context, n *near[K, V], key K, k []byte, h [16]byte, before string, v V) error {
	val, err := lc.m.encode(v)
	if err != nil {
		return err
	}
	msg := lc.invalidateMsg(h)
	if lc.opts.SyncStrategy == SyncUpdate {
		msg = lc.updateMsg(k, val)
	}
	t := n.writing(key, h)
	reply, err := lc.m.c.scripts.run(ctx, scriptLocalPut, []string{lc.m.name, lc.topic, lc.log},
		k, val, msg, lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx), "replace", before).Result()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	old, _ := reply.(string)
	n.written(t, key, h, v, err == nil && reply != nil && old == before)
	return lc.wrap(err)
}
