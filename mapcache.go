package redisson

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// MapCache is a Map whose entries may each expire, wire-compatible with
// Redisson's RMapCache: Java and Go clients of one name see one map with one
// set of expiries, and hear each other's entry events.
//
// Keys (all in the slot of {name}, so it works on Redis Cluster):
//   - name: hash of encoded key -> entry, an entry being an 8-byte
//     little-endian double (max idle in ms, 0 = none), an 8-byte
//     little-endian length and the encoded value, as Redisson packs it;
//   - redisson__timeout__set:{name}: zset of keys with a TTL, scored by their
//     expiry time (ms);
//   - redisson__idle__set:{name}: zset of keys with a max idle, scored by
//     their last access plus max idle (ms), moved on every read;
//   - redisson__map_cache__last_access__set:{name}: zset of access times
//     (LRU) or counts (LFU), kept only once SetMaxSize set a limit;
//   - {name}:redisson_options: hash of max-size, mode and has-listeners.
//
// None of them gets a Redis TTL; entries expire by their scores, measured
// against the Redis server's clock (Java Redisson writes scores from its own
// clock: clocks apart by d move Java's expiries by d).
//
// Guarantees. An expired entry is never returned, whether or not it has
// been deleted yet: every read checks the expiry inside its script. Expired
// entries are deleted lazily by the calls that meet them (Get, ContainsKey,
// Put..., Remove) and in the background by the client's eviction pass,
// which visits each MapCache this client has used every second (a map
// where it found nothing half as often each time, down to every 30s), in
// bounded batches (at most 2 x 100 entries per script call, about a
// millisecond of Redis), and publishes each deleted entry as expired. Size
// counts entries not yet deleted, as Redisson's does. Each call is one
// script run atomically on the master of the name's slot; a failover may
// lose the writes the old master had not replicated, as for any Redis data.
//
// Complexity: Get, Put and the other single-key calls are one round trip
// and O(log n) (zset updates), plus, with a max size, the evictions they
// cause; ReadAll is O(n) in one script; the iterator O(batch) per page;
// Size O(1).
//
// A MapCache is safe for concurrent use. Its events (OnCreated, OnUpdated,
// OnRemoved, OnExpired) travel through the client's shared pub/sub
// connection.
type MapCache[K comparable, V any] struct {
	m    *Map[K, V] // the codec, key encoding, decoding and errors
	keys []string   // the KEYS of every script (see prelude_mapcache.lua)
	used atomic.Bool
	load mapCacheLoad[K, V]  // WithReadThrough (mapcache_load.go)
	w    mapCacheWrite[K, V] // WithWriteThrough, WithWriteBehind (mapcache_write.go)
}

// The positions of a MapCache's keys and channels in its keys slice.
const (
	mcHash = iota
	mcTimeout
	mcIdle
	mcLastAccess
	mcOptions
	mcCreated
	mcUpdated
	mcRemoved
	mcExpired
)

// mapCacheKeys returns the keys and channels of the MapCache called name,
// in script order.
func mapCacheKeys(name string) []string {
	return []string{
		name,
		prefixName("redisson__timeout__set", name),
		prefixName("redisson__idle__set", name),
		prefixName("redisson__map_cache__last_access__set", name),
		suffixName(name, "redisson_options"),
		prefixName("redisson_map_cache_created", name),
		prefixName("redisson_map_cache_updated", name),
		prefixName("redisson_map_cache_removed", name),
		prefixName("redisson_map_cache_expired", name),
	}
}

// GetMapCache returns the map cache called name, from keys of type K to
// values of type V. It does no I/O. opts may give it its own codec
// (WithCodec), as for GetMap, and a loader (WithReadThrough). An empty name makes every method return
// ErrEmptyName.
func GetMapCache[K comparable, V any](c *Client, name string, opts ...ObjectOption) *MapCache[K, V] {
	keys := mapCacheKeys(name)
	mc := &MapCache[K, V]{
		m:    newMap[K, V](c, mapCacheKind, name, opts, keys...),
		keys: keys,
	}
	mc.load = mapCacheLoadOf[K, V](c, name, keys[mcTimeout], opts)
	mc.w = mapCacheWriteOf[K, V](c, name, opts)
	return mc
}

// Name returns the map cache's name, the Redis key of its hash.
func (mc *MapCache[K, V]) Name() string { return mc.m.name }

// Codec returns the codec the map cache encodes its keys and values with.
func (mc *MapCache[K, V]) Codec() Codec { return mc.m.codec }

// run runs a MapCache script with the publish command first, after
// registering the map with the client's eviction pass.
func (mc *MapCache[K, V]) run(ctx context.Context, s *script, args ...any) *redis.Cmd {
	c := mc.m.c
	if !mc.used.Swap(true) {
		c.mapCaches.add(mc.m.name, mc.keys)
	}
	return c.scripts.run(ctx, s, mc.keys, append([]any{c.pubsub.publishArg(ctx)}, args...)...)
}

// mapCacheEntry packs a value as Redisson stores it: max idle (ms, as a
// little-endian double), the value's length (little-endian uint64), the
// value.
func mapCacheEntry(maxIdle int64, val []byte) []byte {
	b := make([]byte, 16+len(val))
	binary.LittleEndian.PutUint64(b, math.Float64bits(float64(maxIdle)))
	binary.LittleEndian.PutUint64(b[8:], uint64(len(val)))
	copy(b[16:], val)
	return b
}

// mapCacheValue unpacks the value of an entry; false for bytes too short
// for their header.
func mapCacheValue(entry []byte) ([]byte, bool) {
	if len(entry) < 16 {
		return nil, false
	}
	n := binary.LittleEndian.Uint64(entry[8:])
	if n > uint64(len(entry)-16) {
		return nil, false
	}
	return entry[16 : 16+n], true
}

// value decodes the value of an entry read from Redis.
func (mc *MapCache[K, V]) value(entry string) (V, error) {
	raw, ok := mapCacheValue([]byte(entry))
	if !ok {
		var zero V
		return zero, &codecError{object: mc.m.object, codec: mc.m.codec.Name(), op: "decode",
			err: fmt.Errorf("entry of %d bytes is shorter than its header says", len(entry))}
	}
	return decodeValue[V](mc.m.codec, mc.m.object, raw)
}

// reply turns a script's entry reply (a bulk string or nil) into (value,
// present).
func (mc *MapCache[K, V]) reply(v any, err error) (V, bool, error) {
	var zero V
	if errors.Is(err, redis.Nil) || (err == nil && v == nil) {
		return zero, false, nil
	}
	if err != nil {
		return zero, false, mc.m.wrap(err)
	}
	s, ok := v.(string)
	if !ok {
		return zero, false, mc.unexpected(v)
	}
	val, err := mc.value(s)
	return val, err == nil, err
}

func (mc *MapCache[K, V]) unexpected(v any) error {
	return objectErrorf(mapCacheKind, mc.m.name, "%w: reply %T", ErrUnexpectedReply, v)
}

// millis is d in whole milliseconds, rounded up (a positive d is at least
// 1ms); a negative d is ErrNegativeDuration.
func (mc *MapCache[K, V]) millis(what string, d time.Duration) (int64, error) {
	if d < 0 {
		return 0, objectErrorf(mapCacheKind, mc.m.name, "%w: %s %v", ErrNegativeDuration, what, d)
	}
	return int64((d + time.Millisecond - 1) / time.Millisecond), nil
}

// Get returns the value at key and true, or the zero value and false when
// key is absent or its entry expired. A read is an access: it moves the
// entry's idle deadline to now plus its max idle (Redisson's RMapCache.get),
// and with a max size its LRU time or LFU count. An expired entry it finds
// is deleted and published as expired. It returns ErrNilValue for a nil
// pointer key, ErrCodec when the key does not encode or the stored value
// does not decode; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (mc *MapCache[K, V]) Get(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheGet)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero V
	if err != nil {
		return zero, false, err
	}
	if mc.load.err != nil {
		return zero, false, mc.load.err
	}
	k, err := mc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	return mc.get(ctx, key, k)
}

// ContainsKey reports whether key has an entry that has not expired. It is
// an access, as Get is, and returns the errors of Get.
func (mc *MapCache[K, V]) ContainsKey(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheContainsKey)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	k, err := mc.m.encodeKey(key)
	if err != nil {
		return false, err
	}
	n, err := mc.run(ctx, scriptMapCacheGet, k, "exists").Int64()
	return n == 1, mc.m.wrap(err)
}

// Put stores v at key without expiry (clearing any TTL or max idle the key
// had) and returns the previous live value and true, or the zero value and
// false when key was absent or expired (Redisson's RMapCache.put). It
// returns ErrNilValue for a nil pointer key or value, ErrCodec when either
// does not encode or the previous value does not decode (v is stored all the
// same); ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error otherwise.
func (mc *MapCache[K, V]) Put(ctx context.Context, key K, v V) (V, bool, error) {
	return mc.PutWithTTL(ctx, key, v, 0, 0)
}

// PutWithTTL stores v at key, to expire ttl from now and after maxIdle
// without a read, whichever comes first (zero: no such limit; both zero is
// Put), and returns the previous live value as Put does. It is one round
// trip. Durations are rounded up to whole milliseconds. It returns
// ErrNegativeDuration for a negative ttl or maxIdle (Redis unchanged), and
// the errors of Put.
func (mc *MapCache[K, V]) PutWithTTL(ctx context.Context, key K, v V, ttl, maxIdle time.Duration) (V, bool, error) {
	_, old, err := mc.put(ctx, opMapCachePut, "put", key, v, ttl, maxIdle)
	return mc.reply(old, err)
}

// PutIfAbsent stores v at key, without expiry, when key has no live entry.
// It returns the present value and true (loaded) when key had one, leaving
// it in place (the read counts as an access), or the zero value and false
// when it stored v. It returns the errors of Put.
func (mc *MapCache[K, V]) PutIfAbsent(ctx context.Context, key K, v V) (V, bool, error) {
	return mc.PutIfAbsentWithTTL(ctx, key, v, 0, 0)
}

// PutIfAbsentWithTTL is PutIfAbsent storing v with a ttl and max idle, as
// PutWithTTL does. It returns the errors of PutWithTTL.
func (mc *MapCache[K, V]) PutIfAbsentWithTTL(ctx context.Context, key K, v V, ttl, maxIdle time.Duration) (V, bool, error) {
	_, old, err := mc.put(ctx, opMapCachePutIfAbsent, "absent", key, v, ttl, maxIdle)
	return mc.reply(old, err)
}

// FastPut stores v at key without expiry and reports whether key was new
// (absent or expired), without returning the previous value (Redisson's
// fastPut). It returns the errors of Put.
func (mc *MapCache[K, V]) FastPut(ctx context.Context, key K, v V) (bool, error) {
	return mc.FastPutWithTTL(ctx, key, v, 0, 0)
}

// FastPutWithTTL is FastPut with a ttl and max idle, as PutWithTTL. It
// returns the errors of PutWithTTL.
func (mc *MapCache[K, V]) FastPutWithTTL(ctx context.Context, key K, v V, ttl, maxIdle time.Duration) (bool, error) {
	_, old, err := mc.put(ctx, opMapCacheFastPut, "put", key, v, ttl, maxIdle)
	return old == nil && err == nil, err
}

// FastPutIfAbsent stores v at key, without expiry, when key has no live
// entry, and reports whether it stored it (Redisson's fastPutIfAbsent). It
// returns the errors of Put.
func (mc *MapCache[K, V]) FastPutIfAbsent(ctx context.Context, key K, v V) (bool, error) {
	return mc.FastPutIfAbsentWithTTL(ctx, key, v, 0, 0)
}

// FastPutIfAbsentWithTTL is FastPutIfAbsent with a ttl and max idle, as
// PutWithTTL. It returns the errors of PutWithTTL.
func (mc *MapCache[K, V]) FastPutIfAbsentWithTTL(ctx context.Context, key K, v V, ttl, maxIdle time.Duration) (bool, error) {
	stored, _, err := mc.put(ctx, opMapCacheFastAbsent, "absent", key, v, ttl, maxIdle)
	return stored, err
}

// put runs mapcache_put and returns whether it stored v and the previous
// live entry (nil when none).
func (mc *MapCache[K, V]) put(ctx context.Context, op, mode string, key K, v V, ttl, maxIdle time.Duration) (_ bool, _ any, err error) {
	ctx, rec, err := mc.m.open(ctx, op)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, nil, err
	}
	ttlMs, err := mc.millis("ttl", ttl)
	if err != nil {
		return false, nil, err
	}
	idleMs, err := mc.millis("max idle", maxIdle)
	if err != nil {
		return false, nil, err
	}
	k, err := mc.m.encodeKey(key)
	if err != nil {
		return false, nil, err
	}
	val, err := mc.m.encode(v)
	if err != nil {
		return false, nil, err
	}
	if mc.w.err != nil {
		return false, nil, mc.w.err
	}
	r, err := mc.run(ctx, scriptMapCachePut, mode, k, mapCacheEntry(idleMs, val), ttlMs, idleMs).Slice()
	if err != nil {
		return false, nil, mc.m.wrap(err)
	}
	if len(r) != 2 {
		return false, nil, mc.unexpected(r)
	}
	stored, _ := r[0].(int64)
	if stored == 1 && mc.w.w != nil {
		err = mc.w.w.wrote(ctx, map[K]V{key: v}, nil, mc.evict)
	}
	return stored == 1, r[1], err
}

// Remove deletes key and returns its live value and true, or the zero value
// and false when it was absent or expired (an expired entry is deleted all
// the same). When the bytes do not decode the entry is removed all the same
// and the error matches ErrCodec. It returns the errors of Get.
func (mc *MapCache[K, V]) Remove(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero V
	if err != nil {
		return zero, false, err
	}
	k, err := mc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	if mc.w.err != nil {
		return zero, false, mc.w.err
	}
	v, had, err := mc.reply(mc.run(ctx, scriptMapCacheRemove, k).Result())
	if (err == nil || errors.Is(err, ErrCodec)) && mc.w.w != nil {
		if werr := mc.w.w.wrote(ctx, nil, []K{key}, mc.evict); werr != nil {
			return v, had, werr
		}
	}
	return v, had, err
}

// Size returns the number of entries in the hash (HLEN), expired ones not
// yet deleted included, as Redisson's RMapCache.size does: use ReadAll or
// the iterator to count live entries only. It returns ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error.
func (mc *MapCache[K, V]) Size(ctx context.Context) (int64, error) {
	return mc.m.Size(ctx)
}

// ReadAll returns every live entry, in one script (Redisson's readAllMap):
// expired entries are left out whether or not they have been deleted yet,
// and each returned entry counts as accessed. It reads the whole hash at
// once: iterate large maps with Iterator instead. It returns ErrCodec when a
// stored key or value does not decode; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (mc *MapCache[K, V]) ReadAll(ctx context.Context) (_ map[K]V, err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheReadAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	r, err := mc.run(ctx, scriptMapCacheReadAll).Slice()
	if err != nil {
		return nil, mc.m.wrap(err)
	}
	kv, err := mc.pairs(r)
	if err != nil {
		return nil, err
	}
	out := make(map[K]V, len(kv)/2)
	for i := 0; i+1 < len(kv); i += 2 {
		k, v, err := mc.m.entry(kv[i], kv[i+1])
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// Delete deletes the map cache, its zsets and options (Redisson's delete;
// listeners stay subscribed), and reports whether any of them existed. It
// returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error.
func (mc *MapCache[K, V]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	mc.m.c.trip(ctx, 1)
	n, err := mc.m.c.rdb.Del(ctx, mc.keys[:mcCreated]...).Result()
	return n > 0, mc.m.wrap(err)
}
