package redisson

import (
	"context"
	"encoding/base64"
)

// TxMap is a Map inside a Transaction (Redisson's RTransaction.getMap): the
// same hash and encoding as GetMap's. Get and ContainsKey read Redis, or
// this transaction's own writes; Put, FastPut, Remove and FastRemove take
// the key's transaction lock ("{<map>}:<key id>:lock") at the key's first
// write and are applied by Commit. It is safe for concurrent use (its calls
// take turns with the transaction's) and holds no state of its own.
type TxMap[K comparable, V any] struct {
	m    *Map[K, V]
	tx   *Transaction
	note func() *txNote // a LocalCachedMap's (TxLocalCachedMap); nil for a Map
}

// GetTxMap returns the map called name inside transaction tx, from keys of
// type K to values of type V. It does no I/O. opts may give the map its own
// codec (WithCodec). An empty name makes every method return ErrEmptyName.
func GetTxMap[K comparable, V any](tx *Transaction, name string, opts ...ObjectOption) *TxMap[K, V] {
	m := newMap[K, V](tx.c, mapKind, name, opts)
	m.opKind = transactionKind
	return &TxMap[K, V]{m: m, tx: tx}
}

// Name returns the map's name, the Redis key of its hash.
func (m *TxMap[K, V]) Name() string { return m.m.name }

// lockName is the transaction lock of the key encoded as field, as
// Redisson names it: the map's name in a hash tag, the key's id.
func (m *TxMap[K, V]) lockName(field []byte) string { return txKeyLock(m.m.name, field) }

// txKeyLock is the transaction lock of the key encoded as field in the map
// (or map cache) called name: "{<name>}:<key id>:lock".
func txKeyLock(name string, field []byte) string {
	h := keyHash(field)
	return suffixName(name, base64.RawStdEncoding.EncodeToString(h[:])+":lock")
}

// Get returns the value at key in this transaction: the one it wrote, or
// else the one in Redis (read without a lock). It returns ErrNilValue or
// ErrCodec for a key that does not encode or bytes that do not decode,
// ErrTransactionDone after Commit or Rollback, ErrEmptyName,
// ErrWrongType, ErrClientClosed, or a Redis error.
func (m *TxMap[K, V]) Get(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.get(ctx, key, false)
}

// GetForUpdate is Get after taking the key's transaction lock (as a write
// does, waiting for it at most until the transaction's timeout): no other
// transaction can change the key until this one ends, so a value computed
// from it and Put loses no update. It returns Get's errors, and
// ErrTransactionTimeout when the lock was not free in time (the transaction
// is then rolled back), ctx.Err() (wrapped) when ctx ended while waiting,
// or ErrCrossSlot on Cluster (see Transaction).
func (m *TxMap[K, V]) GetForUpdate(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.get(ctx, key, true)
}

// ContainsKey reports whether key is present in this transaction. It
// returns Get's errors.
func (m *TxMap[K, V]) ContainsKey(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxGet)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	k, err := m.m.encodeKey(key)
	if err != nil {
		return false, err
	}
	if err := m.tx.enter(ctx); err != nil {
		return false, err
	}
	defer m.tx.leave()
	_, ok, err := m.tx.read(ctx, &m.m.base, m.m.name, string(k), "hash")
	return ok, err
}

func (m *TxMap[K, V]) get(ctx context.Context, key K, lock bool) (V, bool, error) {
	var zero V
	k, err := m.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	if err := m.tx.enter(ctx); err != nil {
		return zero, false, err
	}
	defer m.tx.leave()
	if lock {
		if err := m.tx.lock(ctx, m.lockName(k), m.m.name); err != nil {
			return zero, false, err
		}
	}
	return m.decode(m.tx.read(ctx, &m.m.base, m.m.name, string(k), "hash"))
}

func (m *TxMap[K, V]) decode(raw []byte, ok bool, err error) (V, bool, error) {
	var zero V
	if err != nil || !ok {
		return zero, false, err
	}
	v, err := decodeValue[V](m.m.codec, m.m.object, raw)
	return v, err == nil, err
}

// Put makes Commit store v at key, after taking the key's transaction
// lock, and returns the key's value in this transaction before the call
// (read under the lock) and whether there was one. It returns ErrNilValue
// or ErrCodec for a key or value that does not encode (nothing locked),
// ErrTransactionTimeout, ErrCrossSlot and ctx.Err() as GetForUpdate does,
// ErrTransactionDone, ErrEmptyName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (m *TxMap[K, V]) Put(ctx context.Context, key K, v V) (_ V, _ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.decode(m.write(ctx, key, &v))
}

// FastPut is Put reporting whether key was absent in this transaction
// instead of returning its value (Redisson's fastPut). Put's errors.
func (m *TxMap[K, V]) FastPut(ctx context.Context, key K, v V) (_ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	_, ok, err := m.write(ctx, key, &v)
	return !ok && err == nil, err
}

// Remove makes Commit delete key, after taking its transaction lock, and
// returns its value in this transaction before the call and whether there
// was one. Put's errors.
func (m *TxMap[K, V]) Remove(ctx context.Context, key K) (_ V, _ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero V
		return zero, false, err
	}
	return m.decode(m.write(ctx, key, nil))
}

// FastRemove is Remove reporting whether key was present in this
// transaction instead of returning its value. Put's errors.
func (m *TxMap[K, V]) FastRemove(ctx context.Context, key K) (_ bool, err error) {
	ctx, rec, err := m.m.open(ctx, opTxWrite)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	_, ok, err := m.write(ctx, key, nil)
	return ok, err
}

// write locks key, reads its bytes in this transaction and buffers v at
// key (nil: its removal). It returns the bytes read.
func (m *TxMap[K, V]) write(ctx context.Context, key K, v *V) ([]byte, bool, error) {
	k, err := m.m.encodeKey(key)
	if err != nil {
		return nil, false, err
	}
	var val []byte
	if v != nil {
		if val, err = m.m.encode(*v); err != nil {
			return nil, false, err
		}
	}
	if err := m.tx.enter(ctx); err != nil {
		return nil, false, err
	}
	defer m.tx.leave()
	if !m.tx.buf.claim(m.m.name, "map") {
		return nil, false, m.m.errorf("%w: written as a MapCache in this transaction", ErrWrongType)
	}
	if err := m.tx.lock(ctx, m.lockName(k), m.m.name); err != nil {
		return nil, false, err
	}
	old, ok, err := m.tx.read(ctx, &m.m.base, m.m.name, string(k), "hash")
	if err != nil {
		return nil, false, err
	}
	if m.note != nil {
		n := m.note()
		n.hashes = append(n.hashes, keyHash(k))
	}
	if v == nil {
		err = m.tx.buffer(&m.m.base, m.m.name, "hash", string(k), txValue{}, "hdel", string(k))
	} else {
		err = m.tx.buffer(&m.m.base, m.m.name, "hash", string(k), txValue{val, true}, "hset", string(k), string(val))
	}
	return old, ok, err
}
