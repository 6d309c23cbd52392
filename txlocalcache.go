package redisson

import "fmt"

// TxLocalCachedMap is a LocalCachedMap inside a Transaction (Redisson's
// RTransaction.getLocalCachedMap): a TxMap on the map's hash, whose Commit
// also tells the map's instances, Go and Java, in the same script: it
// publishes Redisson's invalidation message for the keys written on
// {name}:topic (and adds them to the updates log with ReconnectLoad),
// unless SyncStrategy is SyncNone, and drops them from this instance's
// near cache before Commit returns. Reads (Get, GetForUpdate,
// ContainsKey) go to Redis, as TxMap's, not to the near cache. Redisson
// also stops its instances from caching the keys while its commit runs;
// this commit is one script, so an instance can serve a key's old value
// only until the message reaches it, as after any other write.
//
// It is safe for concurrent use (its calls take turns with the
// transaction's).
type TxLocalCachedMap[K comparable, V any] struct {
	*TxMap[K, V]
}

// GetTxLocalCachedMap returns lc inside transaction tx. It does no I/O. A
// map with StoreLocalCacheOnly (no hash in Redis) or with invalid options
// makes every method return ErrInvalidOption.
func GetTxLocalCachedMap[K comparable, V any](tx *Transaction, lc *LocalCachedMap[K, V]) *TxLocalCachedMap[K, V] {
	mm := *lc.m
	mm.opKind = transactionKind
	switch {
	case lc.badOpts != nil:
		mm.badName = lc.badOpts
	case lc.opts.StoreMode == StoreLocalCacheOnly:
		mm.badName = fmt.Errorf("%w: a map with StoreLocalCacheOnly has no hash in Redis to write in a transaction", ErrInvalidOption)
	}
	var note *txNote
	m := &TxMap[K, V]{m: &mm, tx: tx}
	m.note = func() *txNote {
		if note == nil {
			note = &txNote{topic: lc.topic, log: lc.log, mode: lc.mode(), local: func(h [16]byte) {
				if n := lc.n.Load(); n != nil {
					n.invalidate(h)
				}
			}}
			tx.buf.notes = append(tx.buf.notes, note)
		}
		return note
	}
	return &TxLocalCachedMap[K, V]{m}
}
