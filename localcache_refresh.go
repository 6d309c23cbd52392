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
	r := &lc.refresh
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
	if !lc.m.c.handles.spawn(func(ctx context.Context) {
		defer done()
		lc.revalidate(ctx, n, key)
	}) {
		done()
	}
}

// revalidate is one refresh: take the key's lease (or leave it to the
// instance holding it), read the present value, load, and replace the
// value only if it is still the one read. It ends with the Client (ctx)
// or after LoadTimeout.
func (lc *LocalCachedMap[K, V]) revalidate(ctx context.Context, n *near[K, V], key K) {
	rt := lc.rt
	ctx, cancel := context.WithTimeout(ctx, rt.opts.LoadTimeout)
	defer cancel()
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return
	}
	h := keyHash(k)
	lease, marker := rt.keysOf(h)
	token := lc.m.c.ID() + ":" + lc.m.c.newRequest()
	rdb := lc.m.c.rdb
	if took, err := rdb.SetNX(ctx, lease, token, rt.opts.LoadTimeout).Result(); err != nil || !took {
		return // another instance refreshes or loads it
	}
	before, err := rdb.HGet(ctx, lc.m.name, string(k)).Result()
	if err != nil { // absent now (a miss will load it) or Redis failed
		rt.finish(ctx, lease, marker, token, h, false)
		return
	}
	octx, rec := lc.m.c.begin(ctx, localCacheKind, lc.m.name, opCacheLoad)
	r := rt.call(octx, key)
	notFound := errors.Is(r.err, ErrKeyNotFound)
	lc.stats.loads.Add(1)
	lc.stats.refreshes.Add(1)
	if r.err != nil && !notFound {
		lc.stats.loadErrors.Add(1)
		rec.end(r.err, OutcomeOK)
		return // the lease stays until LoadTimeout: a failing source is asked once per LoadTimeout
	}
	if notFound {
		_, err = lc.fastRemove(ctx, []K{key})
	} else {
		err = lc.replace(ctx, n, key, k, h, before, r.v)
	}
	rec.end(err, OutcomeOK)
	rt.finish(ctx, lease, marker, token, h, false)
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
