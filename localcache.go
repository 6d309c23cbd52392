package redisson

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const localCacheKind = "local cached map"

// EvictionPolicy chooses which entries a LocalCachedMap's local cache drops
// when it holds CacheSize entries (Redisson's LocalCachedMapOptions
// EvictionPolicy).
type EvictionPolicy int

const (
	// EvictionNone evicts nothing: with a CacheSize, values are no longer
	// added once the cache is full (the cached ones stay until invalidated
	// or expired). It is the default, as in Redisson.
	EvictionNone EvictionPolicy = iota
	// EvictionLRU drops the least recently read entry
	// (github.com/hashicorp/golang-lru/v2).
	EvictionLRU
	// EvictionLFU drops by frequency of use: otter's W-TinyLFU
	// (github.com/maypok86/otter/v2), which admits a new entry only if it is
	// likely to be read more often than the one it would evict.
	EvictionLFU
)

// SyncStrategy chooses what a LocalCachedMap's write tells the map's other
// instances (Redisson's SyncStrategy).
type SyncStrategy int

const (
	// SyncInvalidate publishes the written keys' hashes: the other instances
	// drop their copies and read the new values from Redis when next asked.
	// It is the default, as in Redisson.
	SyncInvalidate SyncStrategy = iota
	// SyncUpdate publishes the written keys and values: the other instances
	// cache the new values at once. Removals still invalidate.
	SyncUpdate
	// SyncNone publishes nothing: other instances keep serving what they
	// cached until it expires locally (TimeToLive, MaxIdle).
	SyncNone
)

// ReconnectionStrategy chooses what a LocalCachedMap does with its local
// cache when messages may have been missed: its pub/sub connection failed
// or was replaced (Redisson's ReconnectionStrategy).
type ReconnectionStrategy int

const (
	// ReconnectClear clears the local cache when the loss is detected and
	// serves nothing from it until the subscription is confirmed again. It
	// is the default (Redisson's default is NONE).
	ReconnectClear ReconnectionStrategy = iota
	// ReconnectLoad keeps the local cache but serves nothing from it until,
	// after the subscription is confirmed again, the keys written meanwhile
	// (Redisson's updates log, redisson__cache_updates_log:{name}) have been
	// dropped; after an outage longer than the log's 10 minutes, or when the
	// log cannot be read, it clears the cache instead. Writes of a map with
	// this strategy add to the log, as Redisson's do.
	ReconnectLoad
	// ReconnectNone does nothing: after a loss the local cache may serve
	// values other instances changed meanwhile, until they are written
	// again or expire locally (Redisson's NONE).
	ReconnectNone
)

// StoreMode chooses where a LocalCachedMap keeps its entries (Redisson's
// StoreMode).
type StoreMode int

const (
	// StoreLocalCacheRedis keeps every entry in Redis and caches what this
	// instance reads or writes. It is the default.
	StoreLocalCacheRedis StoreMode = iota
	// StoreLocalCacheOnly keeps entries only in the local caches of the
	// instances: writes publish the change (with SyncUpdate, the value) to
	// the other instances and nothing is stored in Redis; reads never go to
	// Redis.
	StoreLocalCacheOnly
)

// updateLogWindow is how far back the updates log reaches (Redisson's
// default cacheUpdateLogTime): older entries are trimmed on a reconnect.
const updateLogWindow = 10 * time.Minute

// clearAckWait bounds how long ClearLocalCache waits for acknowledgements.
const clearAckWait = 10 * time.Second

// LocalCacheOptions configures a LocalCachedMap, with Redisson's names. The
// zero value is an unbounded cache with no expiry, SyncInvalidate,
// ReconnectClear and StoreLocalCacheRedis.
type LocalCacheOptions struct {
	// CacheSize bounds the number of locally cached entries; 0 is no bound.
	CacheSize int
	// EvictionPolicy chooses the entries dropped at CacheSize (default
	// EvictionNone).
	EvictionPolicy EvictionPolicy
	// TimeToLive drops a locally cached entry this long after it was cached
	// (0: never). It does not expire the entry in Redis.
	TimeToLive time.Duration
	// MaxIdle drops a locally cached entry not read for this long (0:
	// never).
	MaxIdle time.Duration
	// SyncStrategy chooses what writes tell the other instances (default
	// SyncInvalidate).
	SyncStrategy SyncStrategy
	// ReconnectionStrategy chooses what happens to the local cache when
	// messages may have been missed (default ReconnectClear).
	ReconnectionStrategy ReconnectionStrategy
	// StoreMode chooses where entries live (default StoreLocalCacheRedis).
	StoreMode StoreMode
}

func (o LocalCacheOptions) check() error {
	switch {
	case o.CacheSize < 0:
		return fmt.Errorf("%w: CacheSize %d", ErrInvalidOption, o.CacheSize)
	case o.TimeToLive < 0 || o.MaxIdle < 0:
		return fmt.Errorf("%w: TimeToLive %v, MaxIdle %v", ErrInvalidOption, o.TimeToLive, o.MaxIdle)
	case o.EvictionPolicy < EvictionNone || o.EvictionPolicy > EvictionLFU:
		return fmt.Errorf("%w: EvictionPolicy %d", ErrInvalidOption, o.EvictionPolicy)
	case o.SyncStrategy < SyncInvalidate || o.SyncStrategy > SyncNone:
		return fmt.Errorf("%w: SyncStrategy %d", ErrInvalidOption, o.SyncStrategy)
	case o.ReconnectionStrategy < ReconnectClear || o.ReconnectionStrategy > ReconnectNone:
		return fmt.Errorf("%w: ReconnectionStrategy %d", ErrInvalidOption, o.ReconnectionStrategy)
	case o.StoreMode < StoreLocalCacheRedis || o.StoreMode > StoreLocalCacheOnly:
		return fmt.Errorf("%w: StoreMode %d", ErrInvalidOption, o.StoreMode)
	}
	return nil
}

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
// Complexity: a local hit is a lock-free lookup, allocation-free for any V;
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
	anyKey  bool // K is an interface: a key's dynamic type may not be comparable

	n       atomic.Pointer[near[K, V]] // set by the first call
	started atomic.Bool                // subscribed (or the attempt given up on: closed)
	closed  atomic.Bool

	mu   sync.Mutex // guards sub and the start of the goroutine
	sub  *subscription
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
// the map's channel. opts may give the map its own codec (WithCodec). An
// empty name makes every method return ErrEmptyName, options out of range
// ErrInvalidOption.
func GetLocalCachedMap[K comparable, V any](c *Client, name string, o LocalCacheOptions, opts ...ObjectOption) *LocalCachedMap[K, V] {
	m := &Map[K, V]{
		c:      c,
		name:   name,
		object: fmt.Sprintf("%s %q", localCacheKind, name),
		codec:  c.objectCodec(opts),
		badName: c.nameError(localCacheKind, name,
			suffixName(name, "topic"), prefixName("redisson__cache_updates_log", name)),
	}
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

// begin is every call's precondition; it returns the local cache, starting
// the handle (cache, goroutine, subscription) on first use.
func (lc *LocalCachedMap[K, V]) begin(ctx context.Context) (*near[K, V], error) {
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
		n = newNear[K, V](lc.opts)
		done := make(chan struct{})
		if !lc.m.c.goOwned(func() { lc.run(n, done) }) {
			n.cache.stop()
			return nil, ErrClientClosed
		}
		lc.done = done
		lc.n.Store(n)
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
// goroutine. The map in Redis is unchanged. Every later call returns
// ErrHandleClosed. Close is safe to call more than once.
func (lc *LocalCachedMap[K, V]) Close() error {
	lc.mu.Lock()
	if lc.closed.Swap(true) {
		lc.mu.Unlock()
		return nil
	}
	sub, done := lc.sub, lc.done
	lc.sub = nil
	close(lc.stop)
	lc.mu.Unlock()
	if sub != nil {
		sub.close()
	}
	if done != nil {
		<-done
	}
	if n := lc.n.Load(); n != nil {
		n.mu.Lock()
		n.live.Store(false)
		n.clearLocked()
		n.mu.Unlock()
	}
	return nil
}

// cacheable reports whether key can be a Go map key (an interface K may
// hold a slice).
func (lc *LocalCachedMap[K, V]) cacheable(key K) bool {
	return !lc.anyKey || reflect.ValueOf(&key).Elem().Comparable()
}

// Get returns the value at key and true, or the zero value and false when
// key is absent: from the local cache when it holds key, otherwise with one
// HGET, caching the value read. Absent keys are not cached. It returns the
// errors of Map.Get, ErrInvalidOption and ErrHandleClosed.
func (lc *LocalCachedMap[K, V]) Get(ctx context.Context, key K) (V, bool, error) {
	var zero V
	n, err := lc.begin(ctx)
	if err != nil {
		return zero, false, err
	}
	cacheable := lc.cacheable(key)
	if cacheable {
		if v, ok := n.lookup(key); ok {
			return v, true, nil
		}
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		if isNil(key) {
			return zero, false, objectErrorf(localCacheKind, lc.m.name, "%w: key", ErrNilValue)
		}
		return zero, false, nil
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	h := keyHash(k)
	t := n.read(h)
	v, err := lc.m.c.rdb.HGet(ctx, lc.m.name, string(k)).Result()
	val, ok, err := lc.value(v, err)
	if err != nil || !ok {
		return zero, false, err
	}
	if cacheable {
		n.loaded(t, key, h, val)
	}
	return val, true, nil
}

// GetAll returns the entries of keys that are present, the cached ones
// from the local cache and the others with one HMGET (caching them). No
// keys is no call and an empty map. It returns the errors of Get.
func (lc *LocalCachedMap[K, V]) GetAll(ctx context.Context, keys ...K) (map[K]V, error) {
	n, err := lc.begin(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(keys))
	type miss struct {
		key K
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
		misses = append(misses, miss{key: key, h: h, t: n.read(h)})
		fields = append(fields, string(k))
	}
	if len(fields) == 0 {
		return out, nil
	}
	vals, err := lc.m.c.rdb.HMGet(ctx, lc.m.name, fields...).Result()
	if err != nil {
		return nil, lc.wrap(err)
	}
	for i, raw := range vals {
		val, ok, err := lc.value(raw, nil)
		if err != nil {
			return nil, err
		}
		if ok {
			out[misses[i].key] = val
			n.loaded(misses[i].t, misses[i].key, misses[i].h, val)
		}
	}
	return out, nil
}

// ContainsKey reports whether key is present: true at once when the local
// cache holds it, otherwise one HEXISTS. It returns the errors of Get.
func (lc *LocalCachedMap[K, V]) ContainsKey(ctx context.Context, key K) (bool, error) {
	n, err := lc.begin(ctx)
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
	n, err := lc.begin(ctx)
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
	n, err := lc.begin(ctx)
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

// Put stores v at key and returns the previous value and true, or the zero
// value and false when key was absent, in one script call that also
// publishes the change to the other instances (as SyncStrategy says). This
// instance caches v unless another write or read of key overlapped. It
// returns the errors of Map.Put, ErrInvalidOption and ErrHandleClosed.
func (lc *LocalCachedMap[K, V]) Put(ctx context.Context, key K, v V) (V, bool, error) {
	prev, had, _, err := lc.write(ctx, key, v, false)
	return prev, had, err
}

// FastPut stores v at key without reading the previous value and reports
// whether key was new (Redisson's fastPut). It returns the errors of Put.
func (lc *LocalCachedMap[K, V]) FastPut(ctx context.Context, key K, v V) (bool, error) {
	_, _, isNew, err := lc.write(ctx, key, v, true)
	return isNew, err
}

func (lc *LocalCachedMap[K, V]) write(ctx context.Context, key K, v V, fast bool) (prev V, had, isNew bool, err error) {
	n, err := lc.begin(ctx)
	if err != nil {
		return prev, false, false, err
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return prev, false, false, err
	}
	val, err := lc.m.encode(v)
	if err != nil {
		return prev, false, false, err
	}
	h := keyHash(k)
	msg := lc.invalidateMsg(h)
	if lc.opts.SyncStrategy == SyncUpdate {
		msg = lc.updateMsg(k, val)
	}
	cacheable := lc.cacheable(key)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		if !cacheable {
			return prev, false, false, lc.m.codecErr(fmt.Sprintf("key %v is not comparable", key))
		}
		prev, had = n.store(key, h, v)
		return prev, had, !had, lc.wrap(lc.publish(ctx, msg))
	}
	var t ticket
	if cacheable {
		t = n.writing(key, h)
	}
	arg := "put"
	if fast {
		arg = "fast"
	}
	reply, err := lc.m.c.scripts.run(ctx, scriptLocalPut, []string{lc.m.name, lc.topic, lc.log},
		k, val, msg, lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx), arg).Result()
	if fast {
		count, _ := reply.(int64)
		isNew = count == 1
		err = lc.wrap(err)
	} else {
		prev, had, err = lc.value(reply, err)
	}
	if cacheable {
		// When the previous bytes did not decode (ErrCodec), v was stored
		// all the same.
		n.written(t, key, h, v, err == nil || errors.Is(err, ErrCodec))
	}
	return prev, had, isNew, err
}

// Remove deletes key and returns its value and true, or the zero value and
// false when it was absent, telling the other instances to drop it. It
// returns the errors of Get.
func (lc *LocalCachedMap[K, V]) Remove(ctx context.Context, key K) (V, bool, error) {
	var zero V
	n, err := lc.begin(ctx)
	if err != nil {
		return zero, false, err
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	h := keyHash(k)
	cacheable := lc.cacheable(key)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		prev, had := n.remove(key, h)
		return prev, had, lc.wrap(lc.publish(ctx, lc.invalidateMsg(h)))
	}
	var t ticket
	if cacheable {
		t = n.writing(key, h)
	}
	reply, rerr := lc.m.c.scripts.run(ctx, scriptLocalRemove, []string{lc.m.name, lc.topic, lc.log},
		k, lc.invalidateMsg(h), lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx)).Result()
	prev, had, err := lc.value(reply, rerr)
	if cacheable {
		n.written(t, key, h, zero, false)
	}
	return prev, had, lc.wrap(err)
}

// FastRemove deletes keys without reading them and returns how many were
// present (Redisson's fastRemove), telling the other instances in one
// message. No keys is no call and 0. It returns the errors of Map.FastRemove,
// ErrInvalidOption and ErrHandleClosed.
func (lc *LocalCachedMap[K, V]) FastRemove(ctx context.Context, keys ...K) (int64, error) {
	n, err := lc.begin(ctx)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	var zero V
	hashes := make([][16]byte, len(keys))
	args := []any{nil, lc.mode(), lc.nowMS(), lc.publishArg(ctx)}
	for i, key := range keys {
		k, err := lc.m.encodeKey(key)
		if err != nil {
			return 0, err
		}
		hashes[i] = keyHash(k)
		args = append(args, k, lc.logMember(hashes[i]))
	}
	args[0] = lc.invalidateMsg(hashes...)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		var count int64
		for i, key := range keys {
			if _, had := n.remove(key, hashes[i]); had {
				count++
			}
		}
		return count, lc.wrap(lc.publish(ctx, args[0].([]byte)))
	}
	tickets := lc.writingAll(n, keys, hashes)
	count, err := lc.m.c.scripts.run(ctx, scriptLocalFastRemove, []string{lc.m.name, lc.topic, lc.log}, args...).Int64()
	for i, key := range keys {
		if tickets[i] != nil {
			n.written(*tickets[i], key, hashes[i], zero, false)
		}
	}
	return count, lc.wrap(err)
}

// PutAll stores every entry of entries in one script call that publishes
// one message naming them all. An empty map is no call. It returns the
// errors of Put.
func (lc *LocalCachedMap[K, V]) PutAll(ctx context.Context, entries map[K]V) error {
	n, err := lc.begin(ctx)
	if err != nil || len(entries) == 0 {
		return err
	}
	keys := make([]K, 0, len(entries))
	hashes := make([][16]byte, 0, len(entries))
	args := []any{nil, lc.mode(), lc.nowMS(), lc.publishArg(ctx)}
	var update []byte
	if lc.opts.SyncStrategy == SyncUpdate {
		update = lc.msgHead(2)
	}
	for key, v := range entries {
		k, err := lc.m.encodeKey(key)
		if err != nil {
			return err
		}
		val, err := lc.m.encode(v)
		if err != nil {
			return err
		}
		h := keyHash(k)
		keys, hashes = append(keys, key), append(hashes, h)
		args = append(args, k, val, lc.logMember(h))
		if update != nil {
			update = appendUpdate(update, k, val)
		}
	}
	if update != nil {
		args[0] = update
	} else {
		args[0] = lc.invalidateMsg(hashes...)
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		for i, key := range keys {
			if !lc.cacheable(key) {
				return lc.m.codecErr(fmt.Sprintf("key %v is not comparable", key))
			}
			n.store(key, hashes[i], entries[key])
		}
		return lc.wrap(lc.publish(ctx, args[0].([]byte)))
	}
	tickets := lc.writingAll(n, keys, hashes)
	err = lc.m.c.scripts.run(ctx, scriptLocalPutAll, []string{lc.m.name, lc.topic, lc.log}, args...).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	for i, key := range keys {
		if tickets[i] != nil {
			n.written(*tickets[i], key, hashes[i], entries[key], err == nil)
		}
	}
	return lc.wrap(err)
}

func (lc *LocalCachedMap[K, V]) writingAll(n *near[K, V], keys []K, hashes [][16]byte) []*ticket {
	tickets := make([]*ticket, len(keys))
	for i, key := range keys {
		if lc.cacheable(key) {
			t := n.writing(key, hashes[i])
			tickets[i] = &t
		}
	}
	return tickets
}

// Delete deletes the map in Redis (and its updates log) and tells every
// instance to clear its local cache (Redisson's clear and delete, one
// script call); it reports whether the map existed. It returns
// ErrEmptyName, ErrInvalidName, ErrInvalidOption, ErrClientClosed,
// ErrHandleClosed, or a Redis error.
func (lc *LocalCachedMap[K, V]) Delete(ctx context.Context) (bool, error) {
	n, err := lc.begin(ctx)
	if err != nil {
		return false, err
	}
	var req [16]byte
	_, _ = rand.Read(req[:])
	msg := append(append(lc.msgHead(0), req[:]...), 0)
	n.clear()
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		return true, lc.wrap(lc.publish(ctx, msg))
	}
	existed, err := lc.m.c.scripts.run(ctx, scriptLocalDelete, []string{lc.m.name, lc.topic, lc.log},
		msg, lc.publishArg(ctx)).Int64()
	n.clear()
	return existed == 1, lc.wrap(err)
}

// ClearLocalCache empties the local cache of every instance of the map,
// this one at once (Redisson's clearLocalCache): it publishes a clear
// request and waits until as many instances acknowledged as Redis counted
// receivers, less this one, or 10 seconds passed (a receiver that never
// acknowledges, such as a PSUBSCRIBE client, makes it wait that long, as in
// Redisson). It returns the context's error if ctx ends first, and
// ErrEmptyName, ErrInvalidName, ErrInvalidOption, ErrClientClosed,
// ErrHandleClosed, or a Redis error.
func (lc *LocalCachedMap[K, V]) ClearLocalCache(ctx context.Context) error {
	n, err := lc.begin(ctx)
	if err != nil {
		return err
	}
	n.clear()
	var req [16]byte
	_, _ = rand.Read(req[:])
	counter := lc.m.name + ":clear:" + hex.EncodeToString(req[:])
	if err := lc.m.c.rdb.Set(ctx, counter, 0, time.Minute).Err(); err != nil {
		return lc.wrap(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		lc.m.c.rdb.Del(ctx, counter)
	}()
	receivers, err := lc.publishCount(ctx, append(append(lc.msgHead(0), req[:]...), 1))
	if err != nil {
		return lc.wrap(err)
	}
	n.mu.Lock()
	if lc.subscribed {
		receivers-- // this client's own subscription
	}
	n.mu.Unlock()
	deadline := time.Now().Add(clearAckWait)
	for wait := time.Millisecond; receivers > 0 && time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
		acks, err := lc.m.c.rdb.Get(ctx, counter).Int64()
		if err == nil && acks >= receivers {
			return nil
		}
		select {
		case <-ctx.Done():
			return objectErrorf(localCacheKind, lc.m.name, "clear local cache: %w", ctx.Err())
		case <-lc.m.c.closing:
			return ErrClientClosed
		case <-time.After(wait):
		}
	}
	return nil
}

// The wire side: messages, log members and script arguments.

// msgHead starts a message of type typ (0 clear, 1 invalidate, 2 update)
// from this instance.
func (lc *LocalCachedMap[K, V]) msgHead(typ byte) []byte {
	return append([]byte{typ}, lc.id[:]...)
}

func (lc *LocalCachedMap[K, V]) invalidateMsg(hashes ...[16]byte) []byte {
	b := binary.BigEndian.AppendUint32(lc.msgHead(1), uint32(len(hashes)))
	for _, h := range hashes {
		b = append(b, h[:]...)
	}
	return b
}

func (lc *LocalCachedMap[K, V]) updateMsg(k, val []byte) []byte {
	return appendUpdate(lc.msgHead(2), k, val)
}

func appendUpdate(b, k, val []byte) []byte {
	b = append(binary.BigEndian.AppendUint32(b, uint32(len(k))), k...)
	return append(binary.BigEndian.AppendUint32(b, uint32(len(val))), val...)
}

// logMember is an updates log member: the key hash, ':' and 8 random bytes.
func (lc *LocalCachedMap[K, V]) logMember(h [16]byte) []byte {
	b := append(h[:], ':')
	var r [8]byte
	_, _ = rand.Read(r[:])
	return append(b, r[:]...)
}

// mode is the notify mode of the write scripts.
func (lc *LocalCachedMap[K, V]) mode() string {
	switch {
	case lc.opts.SyncStrategy == SyncNone:
		return "0"
	case lc.opts.ReconnectionStrategy == ReconnectLoad:
		return "2"
	}
	return "1"
}

func (lc *LocalCachedMap[K, V]) nowMS() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

func (lc *LocalCachedMap[K, V]) publishArg(ctx context.Context) any {
	return lc.m.c.pubsub.publishArg(ctx)
}

// publish sends msg on the map's channel (StoreLocalCacheOnly's writes),
// unless SyncStrategy is SyncNone.
func (lc *LocalCachedMap[K, V]) publish(ctx context.Context, msg []byte) error {
	if lc.opts.SyncStrategy == SyncNone {
		return nil
	}
	_, err := lc.publishCount(ctx, msg)
	return err
}

func (lc *LocalCachedMap[K, V]) publishCount(ctx context.Context, msg []byte) (int64, error) {
	if lc.publishArg(ctx) == "spublish" {
		return lc.m.c.rdb.SPublish(ctx, lc.topic, msg).Result()
	}
	return lc.m.c.rdb.Publish(ctx, lc.topic, msg).Result()
}
