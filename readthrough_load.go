package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The loader's side of a read-through map: running Load under the lease,
// ending the lease with load_finish, and the {name}:load channel's hook that
// wakes the waiters of a key.

// loadResult is what the loader's goroutine hands back.
type loadResult[V any] struct {
	v   V
	err error
}

// load runs the loader under the lease this caller took, stores a found
// value if the key is still absent, and ends the lease (waking the
// waiters) whatever happened.
func (rt *readThrough[K, V]) load(ctx context.Context, m missed[K, V], lease, marker, token string) (V, bool, error) {
	var zero V
	lctx, cancel := context.WithTimeout(ctx, rt.opts.LoadTimeout)
	defer cancel()
	octx, rec := rt.c.begin(lctx, rt.kind, rt.name, opCacheLoad)
	res := make(chan loadResult[V], 1)
	if !rt.c.handles.spawn(func(context.Context) { res <- rt.call(octx, m.key) }) {
		rt.finish(ctx, lease, marker, token, m.h, false)
		rec.end(ErrClientClosed, OutcomeOK)
		return zero, false, ErrClientClosed
	}
	var r loadResult[V]
	select {
	case r = <-res:
	case <-lctx.Done():
		r.err = lctx.Err()
	}
	notFound := errors.Is(r.err, ErrKeyNotFound)
	if s := rt.stats; s != nil {
		s.loads.Add(1)
		if r.err != nil && !notFound {
			s.loadErrors.Add(1)
		}
	}
	v, ok, err := r.v, r.err == nil, r.err
	switch {
	case notFound:
		v, ok, err = zero, false, nil
	case err != nil:
		err = objectErrorf(rt.kind, rt.name, "load: %w", err)
	default:
		v, err = m.store(ctx, v)
	}
	rec.end(err, OutcomeOK)
	rt.finish(ctx, lease, marker, token, m.h, notFound && rt.opts.NotFoundTTL > 0)
	if err != nil {
		return zero, false, err
	}
	return v, ok, nil
}

// call runs the loader, turning a panic into ErrLoaderPanicked.
func (rt *readThrough[K, V]) call(ctx context.Context, key K) (r loadResult[V]) {
	defer func() {
		if p := recover(); p != nil {
			r.err = fmt.Errorf("%w: %v", ErrLoaderPanicked, p)
		}
	}()
	r.v, r.err = rt.opts.Load(ctx, key)
	return r
}

// finish ends the lease (if still this caller's), remembers an absence,
// and wakes the waiters, with a bounded clean-up context of its own: the
// caller's may have ended, and the waiters must not wait out the lease.
func (rt *readThrough[K, V]) finish(ctx context.Context, lease, marker, token string, h [16]byte, remember bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	ttl := "0"
	if remember {
		ttl = strconv.FormatInt(max(rt.opts.NotFoundTTL.Milliseconds(), 1), 10)
	}
	_ = rt.c.scripts.run(ctx, scriptLoadFinish, []string{lease, marker, rt.channel},
		token, ttl, rt.c.pubsub.publishArg(ctx), string(h[:])).Err()
}

// subscribe joins the map's load channel once (a failure is tried again by
// the next load; meanwhile waiters look again every 50ms).
func (rt *readThrough[K, V]) subscribe(ctx context.Context) {
	rt.subMu.Lock()
	defer rt.subMu.Unlock()
	if rt.sub != nil || rt.done {
		return
	}
	sharded, err := rt.c.pubsub.objectsSharded(ctx)
	if err != nil {
		return
	}
	sub, err := rt.c.pubsub.listen(ctx, chanKey{name: rt.channel, sharded: sharded}, &listener{hook: rt})
	if err != nil {
		return
	}
	rt.sub = sub
	sub.ready(ctx, time.Second)
}

// close leaves the load channel (LocalCachedMap.Close).
func (rt *readThrough[K, V]) close() {
	rt.subMu.Lock()
	sub := rt.sub
	rt.sub, rt.done = nil, true
	rt.subMu.Unlock()
	if sub != nil {
		sub.close()
	}
}

// wait registers the waiter of the key hashed h (one per key: the flight)
// and reports whether a message can wake it.
func (rt *readThrough[K, V]) wait(h [16]byte) (<-chan struct{}, bool) {
	ch := make(chan struct{})
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.waiters[h] = ch
	return ch, rt.subscribed
}

func (rt *readThrough[K, V]) unwait(h [16]byte, ch <-chan struct{}) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if w, ok := rt.waiters[h]; ok && (<-chan struct{})(w) == ch {
		delete(rt.waiters, h)
	}
}

// message wakes the waiter of the key a load ended for.
func (rt *readThrough[K, V]) message(payload string) {
	if len(payload) != 16 {
		return
	}
	h := [16]byte([]byte(payload))
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if ch, ok := rt.waiters[h]; ok {
		delete(rt.waiters, h)
		close(ch)
	}
}

// lost and resumed wake every waiter: a message may have been missed.
func (rt *readThrough[K, V]) lost()    { rt.wakeAll(false) }
func (rt *readThrough[K, V]) resumed() { rt.wakeAll(true) }

func (rt *readThrough[K, V]) wakeAll(subscribed bool) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.subscribed = subscribed
	for h, ch := range rt.waiters {
		delete(rt.waiters, h)
		close(ch)
	}
}

// bulk loads keys (absent from the map when read) with one LoadAll call:
// it takes the lease of each key it can, loads those together, stores what
// was found, and ends each lease. It returns the keys it did not take
// (written meanwhile, or being loaded by another instance), which the
// caller reads or waits for one by one; a key whose absence is remembered
// is neither loaded nor returned.
func (rt *readThrough[K, V]) bulk(ctx context.Context, keys []K, out map[K]V,
	encode func(K) ([]byte, error), store func(ctx context.Context, key K, k []byte, h [16]byte, v V) (V, error)) ([]K, error) {
	type taken struct {
		key           K
		k             []byte
		h             [16]byte
		lease, marker string
	}
	var mine []taken
	var rest []K
	token := rt.c.ID() + ":" + rt.c.newRequest()
	ms := strconv.FormatInt(rt.opts.LoadTimeout.Milliseconds(), 10)
	end := func(remembered func(K) bool) {
		for _, t := range mine {
			rt.finish(ctx, t.lease, t.marker, token, t.h, rt.opts.NotFoundTTL > 0 && remembered(t.key))
		}
	}
	for _, key := range keys {
		k, err := encode(key)
		if err != nil {
			end(func(K) bool { return false })
			return nil, err
		}
		h := keyHash(k)
		lease, marker := rt.keysOf(h)
		keys := []string{rt.hash, lease, marker}
		if rt.expiry != "" {
			keys = append(keys, rt.expiry)
		}
		reply, err := rt.c.scripts.run(ctx, scriptLoadClaim, keys, k, token, ms).Int64Slice()
		if err != nil || len(reply) == 0 {
			end(func(K) bool { return false })
			if err == nil {
				err = fmt.Errorf("%w: load_claim replied %v", ErrUnexpectedReply, reply)
			}
			return nil, objectErr(rt.kind, rt.name, err)
		}
		switch reply[0] {
		case claimTaken:
			mine = append(mine, taken{key: key, k: k, h: h, lease: lease, marker: marker})
		case claimNotFound:
		default:
			rest = append(rest, key)
		}
	}
	if len(mine) == 0 {
		return rest, nil
	}
	ask := make([]K, len(mine))
	for i, t := range mine {
		ask[i] = t.key
	}
	lctx, cancel := context.WithTimeout(ctx, rt.opts.LoadTimeout)
	octx, rec := rt.c.begin(lctx, rt.kind, rt.name, opCacheLoad)
	res := make(chan loadResult[map[K]V], 1)
	var found map[K]V
	var err error
	if !rt.c.handles.spawn(func(context.Context) { r := loadResult[map[K]V]{}; r.v, r.err = rt.callAll(octx, ask); res <- r }) {
		err = ErrClientClosed
	} else {
		select { // the caller does not wait for a loader past ctx or LoadTimeout
		case r := <-res:
			found, err = r.v, r.err
		case <-lctx.Done():
			err = lctx.Err()
		}
	}
	cancel()
	if s := rt.stats; s != nil {
		s.loads.Add(1)
		if err != nil {
			s.loadErrors.Add(1)
		}
	}
	if err != nil {
		err = objectErrorf(rt.kind, rt.name, "load: %w", err)
		rec.end(err, OutcomeOK)
		end(func(K) bool { return false })
		return nil, err
	}
	for _, t := range mine {
		v, ok := found[t.key]
		if !ok {
			continue
		}
		if v, err = store(ctx, t.key, t.k, t.h, v); err != nil {
			break
		}
		out[t.key] = v
	}
	rec.end(err, OutcomeOK)
	end(func(key K) bool { _, ok := found[key]; return !ok })
	return rest, err
}

// callAll runs LoadAll, turning a panic into ErrLoaderPanicked.
func (rt *readThrough[K, V]) callAll(ctx context.Context, keys []K) (found map[K]V, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v", ErrLoaderPanicked, p)
		}
	}()
	return rt.opts.LoadAll(ctx, keys)
}

// keysOf returns the lease and absence keys of the key hashed h.
func (rt *readThrough[K, V]) keysOf(h [16]byte) (lease, marker string) {
	x := hex.EncodeToString(h[:])
	return suffixName(rt.name, "load:"+x), suffixName(rt.name, "notfound:"+x)
}

// revalidate is one refresh of key, an entry of m whose hash is hash: take
// the key's load lease (or leave it to the instance holding it), read the
// present value, load, and hand both to apply, which replaces the value
// only if it is still the one read (notFound: the loader said
// ErrKeyNotFound). It ends with ctx (the Client's) or after LoadTimeout;
// a failed load keeps the lease until LoadTimeout, so that a failing
// source is asked once per LoadTimeout.
func (rt *readThrough[K, V]) revalidate(ctx context.Context, m *Map[K, V], kind, hash string, key K,
	apply func(ctx context.Context, k []byte, h [16]byte, before string, v V, notFound bool) error) {
	ctx, cancel := context.WithTimeout(ctx, rt.opts.LoadTimeout)
	defer cancel()
	k, err := m.encodeKey(key)
	if err != nil {
		return
	}
	h := keyHash(k)
	lease, marker := rt.keysOf(h)
	token := m.c.ID() + ":" + m.c.newRequest()
	if took, err := m.c.rdb.SetNX(ctx, lease, token, rt.opts.LoadTimeout).Result(); err != nil || !took {
		return // another instance refreshes or loads it
	}
	before, err := m.c.rdb.HGet(ctx, hash, string(k)).Result()
	if err != nil { // absent now (a miss will load it) or Redis failed
		rt.finish(ctx, lease, marker, token, h, false)
		return
	}
	octx, rec := m.c.begin(ctx, kind, m.name, opCacheLoad)
	r := rt.call(octx, key)
	notFound := errors.Is(r.err, ErrKeyNotFound)
	rt.stats.loads.Add(1)
	rt.stats.refreshes.Add(1)
	if r.err != nil && !notFound {
		rt.stats.loadErrors.Add(1)
		rec.end(r.err, OutcomeOK)
		return
	}
	rec.end(apply(ctx, k, h, before, r.v, notFound), OutcomeOK)
	rt.finish(ctx, lease, marker, token, h, false)
}
