package redisson

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// TxMapCache is a MapCache inside a Transaction (Redisson's
// RTransaction.getMapCache): the same hash, entry encoding and companion
// keys as GetMapCache's. Get, GetForUpdate and ContainsKey read the entry
// as MapCache.Get does (an expired entry reads as absent, judged on the
// Redis server's clock; the read counts as an access and deletes an
// expired entry it meets), or this transaction's own writes; Put,
// PutWithTTL, FastPut, Remove and FastRemove take the key's transaction
// lock ("{<map>}:<key id>:lock", as a TxMap's, which is how Redisson's
// transactional map cache names it) at the key's first write and are
// applied by Commit with MapCache.Put's and MapCache.Remove's own writes
// (the zsets, the options' max size, the entry events). A TTL or max idle
// counts from the commit: inside the transaction the written value stays.
// It is safe for concurrent use (its calls take turns with the
// transaction's) and holds no state of its own.
type TxMapCache[K comparable, V any] struct {
	mc *MapCache[K, V]
	tx *Transaction
}

// The Redis types of a MapCache's keys, in mapCacheKeys' order ('*': a
// channel).
var txMapCacheTypes = [...]string{"hash", "zset", "zset", "zset", "hash", "*", "*", "*", "*"}

// GetTxMapCache returns the map cache called name inside transaction tx,
// from keys of type K to values of type V. It does no I/O. opts may give
// it its own codec (WithCodec). An empty name makes every method return
// ErrEmptyName; a loader or Writer (WithReadThrough, WithWriteThrough,
// WithWriteBehind) ErrInvalidOption. Writing a TxMap and a TxMapCache of
// one name in one transaction is ErrWrongType, from the second's first
// write: their entries are encoded differently.
func GetTxMapCache[K comparable, V any](tx *Transaction, name string, opts ...ObjectOption) *TxMapCache[K, V] {
	keys := mapCacheKeys(name)
	m := newMap[K, V](tx.c, mapCacheKind, name, opts, keys...)
	m.opKind = transactionKind
	if o := objectOptionsOf(opts); m.badName == nil && (o.loader != nil || o.writer != nil) {
		m.badName = fmt.Errorf("%w: a map cache in a transaction takes no loader or Writer", ErrInvalidOption)
	}
	return &TxMapCache[K, V]{mc: &MapCache[K, V]{m: m, keys: keys}, tx: tx}
}

// Name returns the map cache's name, the Redis key of its hash.
func (m *TxMapCache[K, V]) Name() string { return m.mc.m.name }

// Get returns the value at key in this transaction: the one it wrote, or
// else the live one in Redis (read without a lock, as MapCache.Get: an
// expired entry is absent). It returns ErrNilValue or ErrCodec for a key
// that does not encode or bytes that do not decode, ErrTransactionDone
// after Commit or Rollback, ErrEmptyName, ErrInvalidOption, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (m *TxMapCache[K, V]) Get(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.get(ctx, key, false)
}

// GetForUpdate is Get after taking the key's transaction lock, as
// TxMap.GetForUpdate: no other transaction can change the key until this
// one ends. It returns Get's errors, and ErrTransactionTimeout, ctx.Err()
// (wrapped) or ErrCrossSlot as TxMap.GetForUpdate does.
func (m *TxMapCache[K, V]) GetForUpdate(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.get(ctx, key, true)
}

// ContainsKey reports whether key has a live entry in this transaction.
// It returns Get's errors.
func (m *TxMapCache[K, V]) ContainsKey(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	k, err := m.mc.m.encodeKey(key)
	if err != nil {
		return false, err
	}
	if err := m.tx.enter(ctx); err != nil {
		return false, err
	}
	defer m.tx.leave()
	_, ok, err := m.read(ctx, k)
	return ok, err
}

func (m *TxMapCache[K, V]) get(ctx context.Context, key K, lock bool) (V, bool, error) {
	var zero V
	k, err := m.mc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	if err := m.tx.enter(ctx); err != nil {
		return zero, false, err
	}
	defer m.tx.leave()
	if lock {
		if err := m.tx.lock(ctx, txKeyLock(m.mc.m.name, k), m.mc.keys...); err != nil {
			return zero, false, err
		}
	}
	return m.decode(m.read(ctx, k))
}

// read returns the encoded value at field k as this transaction will leave
// it: its own write, or else the live entry in Redis (mapcache_get). The
// turn is held.
func (m *TxMapCache[K, V]) read(ctx context.Context, k []byte) ([]byte, bool, error) {
	if v, ok := m.tx.buf.lookup(m.mc.m.name, string(k)); ok {
		return v.b, v.present, nil
	}
	m.tx.c.trip(ctx, 1)
	r, err := m.mc.run(ctx, scriptMapCacheGet, k, "value").Result()
	if errors.Is(err, redis.Nil) || (err == nil && r == nil) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, m.mc.m.wrap(err)
	}
	s, ok := r.(string)
	if !ok {
		return nil, false, m.mc.unexpected(r)
	}
	raw, ok := mapCacheValue([]byte(s))
	if !ok {
		return nil, false, &codecError{object: m.mc.m.object, codec: m.mc.m.codec.Name(), op: "decode",
			err: fmt.Errorf("entry of %d bytes is shorter than its header says", len(s))}
	}
	return raw, true, nil
}

func (m *TxMapCache[K, V]) decode(raw []byte, ok bool, err error) (V, bool, error) {
	var zero V
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := decodeValue[V](m.mc.m.codec, m.mc.m.object, raw)
	return v, err == nil, err
}

// Put makes Commit store v at key without expiry (clearing any TTL or max
// idle the key had, as MapCache.Put), after taking the key's transaction
// lock, and returns the key's value in this transaction before the call
// (read under the lock) and whether there was one. It returns ErrNilValue
// or ErrCodec for a key or value that does not encode (nothing locked),
// ErrTransactionTimeout, ErrCrossSlot and ctx.Err() as GetForUpdate does,
// ErrTransactionDone, ErrEmptyName, ErrInvalidOption, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (m *TxMapCache[K, V]) Put(ctx context.Context, key K, v V) (V, bool, error) {
	return m.PutWithTTL(ctx, key, v, 0, 0)
}

// PutWithTTL is Put making Commit store v to expire ttl after the commit
// and after maxIdle without a read, whichever comes first (zero: no such
// limit), as MapCache.PutWithTTL. Durations are rounded up to whole
// milliseconds. It returns ErrNegativeDuration for a negative ttl or
// maxIdle (nothing locked or buffered), and Put's errors.
func (m *TxMapCache[K, V]) PutWithTTL(ctx context.Context, key K, v V, ttl, maxIdle time.Duration) (_ V, _ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.decode(m.write(ctx, key, &v, ttl, maxIdle))
}

// FastPut is Put reporting whether key was absent in this transaction
// instead of returning its value (Redisson's fastPut). Put's errors.
func (m *TxMapCache[K, V]) FastPut(ctx context.Context, key K, v V) (_ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	_, ok, err := m.write(ctx, key, &v, 0, 0)
	return !ok && err == nil, err
}

// Remove makes Commit delete key's entry (and its zset members, as
// MapCache.Remove), after taking its transaction lock, and returns its
// value in this transaction before the call and whether there was one.
// Put's errors.
func (m *TxMapCache[K, V]) Remove(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.decode(m.write(ctx, key, nil, 0, 0))
}

// FastRemove is Remove reporting whether key was present in this
// transaction instead of returning its value. Put's errors.
func (m *TxMapCache[K, V]) FastRemove(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.mc.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	_, ok, err := m.write(ctx, key, nil, 0, 0)
	return ok, err
}

// write locks key, reads its value in this transaction and buffers v at
// key with ttl and maxIdle (v nil: its removal) as one of tx_commit's
// mcput or mcdel. It returns the bytes read.
func (m *TxMapCache[K, V]) write(ctx context.Context, key K, v *V, ttl, maxIdle time.Duration) ([]byte, bool, error) {
	ttlMs, err := m.mc.millis("ttl", ttl)
	if err != nil {
		return nil, false, err
	}
	idleMs, err := m.mc.millis("max idle", maxIdle)
	if err != nil {
		return nil, false, err
	}
	k, err := m.mc.m.encodeKey(key)
	if err != nil {
		return nil, false, err
	}
	var val []byte
	if v != nil {
		if val, err = m.mc.m.encode(*v); err != nil {
			return nil, false, err
		}
	}
	if err := m.tx.enter(ctx); err != nil {
		return nil, false, err
	}
	defer m.tx.leave()
	if !m.tx.buf.claim(m.mc.m.name, "mapcache") {
		return nil, false, m.mc.m.errorf("%w: written as a Map in this transaction", ErrWrongType)
	}
	if err := m.tx.lock(ctx, txKeyLock(m.mc.m.name, k), m.mc.keys...); err != nil {
		return nil, false, err
	}
	old, ok, err := m.read(ctx, k)
	if err != nil {
		return nil, false, err
	}
	for i, key := range m.mc.keys {
		if !m.tx.buf.typed(key, txMapCacheTypes[i]) {
			return nil, false, m.mc.m.errorf("%w: %q written as another type in this transaction", ErrWrongType, key)
		}
	}
	if !m.mc.used.Swap(true) {
		m.tx.c.mapCaches.add(m.mc.m.name, m.mc.keys) // its TTLs expire in the background too
	}
	args := make([]any, 0, 12)
	for i, key := range m.mc.keys[1:] {
		args = append(args, m.tx.buf.key(key, txMapCacheTypes[i+1]))
	}
	args = append(args, string(k))
	if v == nil {
		err = m.tx.buffer(&m.mc.m.base, m.mc.m.name, "hash", string(k), txValue{}, "mcdel", args...)
	} else {
		args = append(args, string(mapCacheEntry(idleMs, val)), ttlMs, idleMs)
		err = m.tx.buffer(&m.mc.m.base, m.mc.m.name, "hash", string(k), txValue{val, true}, "mcput", args...)
	}
	return old, ok, err
}
