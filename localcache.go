package redisson

import (
	"context"
	"crypto/rand"
	"errors"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const localCacheKind = "local cached map"

// LocalCachedMap is a Map whose reads are served from an in-process cache
// after the first read: Redisson's RLocalCachedMap, wire-compatible with
// it. The entries live in the Redis hash at the map's name, as for Map; the
// instances of the map (in this process, other Go processes and Java
// Redisson clients) tell each other about writes on the channel
// {name}:topic with Redisson's messages: an invalidation (key hashes,
// HighwayHash-128 of the encoded keys), an update (keys and values, with
// SyncUpdate) or a clear. With ReconnectLoad writes also log the changed
// key hashes in the zset redisson__cache_updates_log:{name}; ClearLocalCache
// counts acknowledgements in <name>:clear:<request id> for a minute at most.
//
// Guarantees. A value is cached only if no invalidation, clear or local
// write of its key arrived while it was read, and nothing is served from
// the cache while the subscription to {name}:topic is not confirmed (before
// the first confirmation, and, with ReconnectClear or ReconnectLoad, from
// the moment a loss of the connection carrying it is detected until the
// cache was cleared or reloaded after the new confirmation). What remains:
// a read on this instance may return the old value after another
// instance's write has returned and before its message arrived here (the
// invalidation in flight: well under a millisecond on a local network, see
// the README), and after the connection died but before this client noticed
// (at once for a closed connection; up to Options.PubSubHealthCheck for one
// that silently stopped answering). On Redis Cluster the channel is
// sharded when object channels are (Options.PubSubMode). A failover that
// loses acknowledged writes loses them for the local caches too only if
// the invalidations were lost with them: the reconnection clears the cache.
//
// Not handled, unlike Redisson: an expiry of the hash set with EXPIRE
// (Redisson clears its caches on the keyspace notification) leaves the local
// copies until they are written or expire locally; the transaction keys
// {name}:disabled-keys and {name}:disabled-caches are not read.
//
// Complexity: a local hit is one lookup, allocation-free for any V
// (lock-free in otter's cache, used by EvictionNone and EvictionLFU; under
// golang-lru's mutex with EvictionLRU, since a read moves the entry);
// a miss is one HGET (and caches the decoded value); a write is one script
// call. Cached values are shared: do not modify a slice, map or pointer
// inside a value a read returned.
//
// A LocalCachedMap is safe for concurrent use. It owns one goroutine (for
// acknowledgements and reloads), started by its first call and stopped by
// Close or Client.Close.
type LocalCachedMap[K comparable, V any] struct {
	m       *Map[K, V]
	opts    LocalCacheOptions
	badOpts error
	id      [16]byte
	topic   string
	log     string
	anyKey  bool               // K is an interface: a key's dynamic type may not be comparable
	rt      *readThrough[K, V] // WithReadThrough; nil without
	w       *mapWriter[K, V]   // WithWriteThrough, WithWriteBehind; nil without
	refresh refreshes[K]       // ReadThrough.RefreshAfter: keys being reloaded
	stats   cacheCounters

	n       atomic.Pointer[near[K, V]] // set by the first call
	started atomic.Bool                // subscribed (or the attempt given up on: closed)
	closed  atomic.Bool

	mu   sync.Mutex // guards sub and the start of the goroutine
	sub  *channelSub
	stop chan struct{}
	done chan struct{} // closed when the goroutine returned; nil before it starts

	// State of the subscription, guarded by the near cache's mu.
	subscribed bool      // confirmed and not lost since
	pending    bool      // ReconnectLoad: a reload is due before the cache serves again
	lostAt     time.Time // ReconnectLoad: when the first loss not yet reloaded was seen
	losses     uint64

	work chan func() // acknowledgements and reloads for the goroutine
}

// GetLocalCachedMap returns the local cached map called name, from keys of
// type K to values of type V. It does no I/O: the first call subscribes to
// the map's channel. opts may give the map its own codec (WithCodec) and a
// loader for the keys it misses (WithReadThrough). An empty name makes
// every method return ErrEmptyName, options out of range ErrInvalidOption.
func GetLocalCachedMap[K comparable, V any](c *Client, name string, o LocalCacheOptions, opts ...ObjectOption) *LocalCachedMap[K, V] {
	// Its errors and operations name a map, as before Map had a kind; its
	// codec errors and bad names the local cached map.
	b := newBase(c, localCacheKind, name, c.objectCodec(opts),
		suffixName(name, "topic"), prefixName("redisson__cache_updates_log", name))
	b.kind, b.opKind = mapKind, mapKind
	m := &Map[K, V]{base: b}
	lc := &LocalCachedMap[K, V]{
		m:      m,
		opts:   o,
		topic:  suffixName(name, "topic"),
		log:    prefixName("redisson__cache_updates_log", name),
		anyKey: reflect.TypeFor[K]().Kind() == reflect.Interface,
		stop:   make(chan struct{}),
		work:   make(chan func(), 64),
	}
	if err := o.check(); err != nil {
		lc.badOpts = objectErr(localCacheKind, name, err)
	}
	rt, err := readThroughOf[K, V](c, localCacheKind, name, name, "", opts)
	switch {
	case err != nil && lc.badOpts == nil:
		lc.badOpts = err
	case rt != nil && o.StoreMode == StoreLocalCacheOnly && lc.badOpts == nil:
		lc.badOpts = objectErr(localCacheKind, name, invalidOption(ErrInvalidOption, "ReadThrough", "set",
			"none with StoreLocalCacheOnly"))
	case rt != nil:
		rt.stats = &lc.stats
		lc.rt = rt
	}
	if lc.badOpts == nil {
		if lc.w, err = writerOf[K, V](c, localCacheKind, name, &lc.stats, opts); err != nil {
			lc.badOpts = err
		}
	}
	lc.stats.size = lc.CachedSize
	_, _ = rand.Read(lc.id[:])
	return lc
}

// Name returns the map's name, the Redis key of its hash.
func (lc *LocalCachedMap[K, V]) Name() string { return lc.m.name }

// Codec returns the codec the map encodes its keys and values with.
func (lc *LocalCachedMap[K, V]) Codec() Codec { return lc.m.codec }

func (lc *LocalCachedMap[K, V]) wrap(err error) error {
	return objectErr(localCacheKind, lc.m.name, err)
}

// ready is every call's precondition (the map's check, then the handle's
// own); it returns the local cache, starting the handle (cache, goroutine,
// subscription) on first use.
func (lc *LocalCachedMap[K, V]) ready(ctx context.Context) (*near[K, V], error) {
	if err := lc.m.check(); err != nil {
		return nil, err
	}
	if lc.badOpts != nil {
		return nil, lc.badOpts
	}
	if lc.closed.Load() {
		return nil, lc.closedErr()
	}
	if lc.started.Load() {
		return lc.n.Load(), nil
	}
	return lc.start(ctx)
}

func (lc *LocalCachedMap[K, V]) closedErr() error {
	return objectErrorf(localCacheKind, lc.m.name, "%w", ErrHandleClosed)
}

func (lc *LocalCachedMap[K, V]) start(ctx context.Context) (*near[K, V], error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.closed.Load() {
		return nil, lc.closedErr()
	}
	n := lc.n.Load()
	if n == nil {
		n = newNear[K, V](lc.opts, &lc.stats)
		n.stamp = lc.rt != nil && lc.rt.opts.RefreshAfter > 0
		done := make(chan struct{})
		if !lc.m.c.handles.spawn(func(context.Context) { lc.run(n, done) }) {
			n.cache.stop()
			return nil, ErrClientClosed
		}
		lc.done = done
		lc.n.Store(n)
		lc.m.c.caches.add(&lc.stats)
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		// The cache is the map: it serves from the start.
		n.mu.Lock()
		lc.subscribed = true
		n.live.Store(true)
		n.mu.Unlock()
	}
	sharded, err := lc.m.c.pubsub.objectsSharded(ctx)
	if err != nil {
		return n, nil // uncached until a later call subscribes
	}
	sub, err := lc.m.c.pubsub.listen(ctx, chanKey{name: lc.topic, sharded: sharded}, &listener{hook: lc})
	if err != nil {
		return n, nil
	}
	lc.sub = sub
	lc.started.Store(true)
	return n, nil
}

// run is the handle's goroutine: it carries out the work the channel hook
// queues (acknowledgements of clear requests, reloads) until Close or
// Client.Close.
func (lc *LocalCachedMap[K, V]) run(n *near[K, V], done chan struct{}) {
	defer close(done)
	defer n.cache.stop()
	for {
		select {
		case <-lc.stop:
			return
		case <-lc.m.c.closing:
			return
		case f := <-lc.work:
			f()
		}
	}
}

// Close ends the handle (Redisson's destroy): it unsubscribes from the
// map's channel, empties the local cache and waits for the handle's
// goroutine. The map in Redis is unchanged. With WithWriteBehind it first
// writes the queue out, for WriteBehind.CloseTimeout at most, and returns
// an error wrapping ErrWriteBehindUnflushed (saying how many keys the
// Writer did not get) when that was not enough. Every later call returns
// ErrHandleClosed. Close is safe to call more than once.
func (lc *LocalCachedMap[K, V]) Close() error {
	lc.mu.Lock()
	if lc.closed.Swap(true) {
		lc.mu.Unlock()
		return nil
	}
	lc.mu.Unlock()
	werr := lc.w.close() // the writes already made reach the Writer; new ones get ErrHandleClosed
	lc.mu.Lock()
	sub, done := lc.sub, lc.done
	lc.sub = nil
	close(lc.stop)
	lc.mu.Unlock()
	if sub != nil {
		sub.close()
	}
	if lc.rt != nil {
		lc.rt.close()
	}
	if done != nil {
		<-done
	}
	if n := lc.n.Load(); n != nil {
		n.mu.Lock()
		n.live.Store(false)
		n.staleSince.Store(0)
		n.clearLocked()
		n.mu.Unlock()
		lc.m.c.caches.retire(&lc.stats)
	}
	return werr
}

// cacheable reports whether key can be a Go map key (an interface K may
// hold a slice).
func (lc *LocalCachedMap[K, V]) cacheable(key K) bool {
	return !lc.anyKey || comparableKey(key)
}

// comparableKey is apart from cacheable so that a key of a non-interface
// type does not escape to the heap on every read.
func comparableKey[K any](key K) bool { return reflect.ValueOf(&key).Elem().Comparable() }

// ContainsKey reports whether key is present: true at once when the local
// cache holds it, otherwise one HEXISTS. It returns the errors of Get.
func (lc *LocalCachedMap[K, V]) ContainsKey(ctx context.Context, key K) (bool, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return false, err
	}
	if lc.cacheable(key) {
		if _, ok := n.lookup(key); ok {
			return true, nil
		}
	}
	k, err := lc.m.encodeKey(key)
	if err != nil || lc.opts.StoreMode == StoreLocalCacheOnly {
		return false, err
	}
	ok, err := lc.m.c.rdb.HExists(ctx, lc.m.name, string(k)).Result()
	return ok, lc.wrap(err)
}

// Size returns the number of entries in Redis (HLEN), or with
// StoreLocalCacheOnly in the local cache. It returns ErrEmptyName,
// ErrInvalidName, ErrInvalidOption, ErrWrongType, ErrClientClosed,
// ErrHandleClosed, or a Redis error.
func (lc *LocalCachedMap[K, V]) Size(ctx context.Context) (int64, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return 0, err
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		return int64(n.cache.size()), nil
	}
	size, err := lc.m.c.rdb.HLen(ctx, lc.m.name).Result()
	return size, lc.wrap(err)
}

// ReadAll returns every entry with one HGETALL (Redisson's readAllMap),
// without caching them; with StoreLocalCacheOnly, the local cache's. It
// returns the errors of Map.ReadAll, ErrInvalidOption and ErrHandleClosed.
func (lc *LocalCachedMap[K, V]) ReadAll(ctx context.Context) (map[K]V, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return nil, err
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		out := make(map[K]V, n.cache.size())
		n.cache.all(func(e *nearEntry[K, V]) bool {
			out[e.key] = e.val
			return true
		})
		return out, nil
	}
	all, err := lc.m.c.rdb.HGetAll(ctx, lc.m.name).Result()
	if err != nil {
		return nil, lc.wrap(err)
	}
	out := make(map[K]V, len(all))
	for f, s := range all {
		k, v, err := lc.m.entry(f, s)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// value turns a reply (a bulk string or nil) and its error into (value,
// present), naming this map in errors.
func (lc *LocalCachedMap[K, V]) value(reply any, err error) (V, bool, error) {
	if err != nil && !errors.Is(err, redis.Nil) {
		var zero V
		return zero, false, lc.wrap(err)
	}
	if err != nil {
		reply = nil
	}
	return lc.m.value(reply, nil)
}

// CachedSize returns the number of entries in the local cache (an estimate
// while other calls run).
func (lc *LocalCachedMap[K, V]) CachedSize() int {
	if n := lc.n.Load(); n != nil {
		return n.cache.size()
	}
	return 0
}
