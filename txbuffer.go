package redisson

import (
	"crypto/rand"
	"encoding/binary"
	"slices"
	"strconv"
	"time"
)

// txBuffer is what a Transaction keeps until Commit: its locks, in the
// order taken, and its writes, in the order made, as tx_commit's keys and
// arguments, with the value each written entry will have (read-your-writes).
// The Transaction's turn guards it.
type txBuffer struct {
	done   bool            // committed or rolled back
	locks  []*Lock         // in the order taken
	names  []string        // their names
	byName map[string]bool // names held
	slot   int             // Cluster: the slot of every key so far; -1 before the first
	keys   []string        // data keys, in first-write order
	index  map[string]int  // data key -> 1-based index in keys
	types  []string        // the Redis type each data key must have
	ops    []any           // tx_commit's writes
	vals   map[txEntry]txValue
	notes  []*txNote         // LocalCachedMaps to tell at commit, in first-write order
	kinds  map[string]string // object name -> the kind of object that wrote it ("map", "mapcache")
}

// txNote is what Commit tells one LocalCachedMap's instances: Redisson's
// invalidation message for the keys written (on topic, and in the updates
// log when mode is '2'), and the local invalidation of this instance's
// near cache once committed.
type txNote struct {
	topic, log, mode string
	hashes           [][16]byte
	local            func(h [16]byte) // invalidates this instance's entry
}

// txEntry is a written bucket (field "") or map entry.
type txEntry struct{ key, field string }

// txValue is the value a written entry will have: absent after a delete.
type txValue struct {
	b       []byte
	present bool
}

func (b *txBuffer) init() {
	b.byName = make(map[string]bool)
	b.index = make(map[string]int)
	b.vals = make(map[txEntry]txValue)
	b.kinds = make(map[string]string)
	b.slot = -1
}

func (b *txBuffer) held(name string) bool { return b.byName[name] }

func (b *txBuffer) addLock(name string, l *Lock) {
	b.byName[name] = true
	b.names = append(b.names, name)
	b.locks = append(b.locks, l)
}

// sameSlot checks, on Cluster, that lock name and keys are in the slot of
// the transaction's keys so far (tx_commit is one script call).
func (b *txBuffer) sameSlot(t *Transaction, name string, keys ...string) error {
	if !t.c.topo.isCluster() {
		return nil
	}
	slot := b.slot
	for _, k := range append([]string{name}, keys...) {
		s := hashSlot(k)
		if slot < 0 {
			slot = s
		} else if s != slot {
			return t.errorf("%w: %q (a transaction's keys, its objects' and their locks', must share one {hash tag})", ErrCrossSlot, k)
		}
	}
	b.slot = slot
	return nil
}

// claim reports whether object name is unwritten in this transaction or
// written by an object of the same kind, and records kind for it. A Map and
// a MapCache share Redis type "hash" but not their entries' encoding: one
// transaction writing both on one name would corrupt the MapCache.
func (b *txBuffer) claim(name, kind string) bool {
	if k, ok := b.kinds[name]; ok && k != kind {
		return false
	}
	b.kinds[name] = kind
	return true
}

// typed reports whether data key k is unwritten in this transaction or
// written as Redis type typ.
func (b *txBuffer) typed(k, typ string) bool {
	i, ok := b.index[k]
	return !ok || b.types[i-1] == typ
}

// lookup returns the value entry will have at commit, when the transaction
// wrote it.
func (b *txBuffer) lookup(key, field string) (txValue, bool) {
	v, ok := b.vals[txEntry{key, field}]
	return v, ok
}

// write buffers one write of tx_commit (op on key, of Redis type typ, with
// args) and records the value entry field of key will have. It reports
// false when key was written as another type in this transaction.
func (b *txBuffer) write(key, typ, field string, v txValue, op string, args ...any) bool {
	if i, ok := b.index[key]; ok && b.types[i-1] != typ {
		return false
	}
	i := b.key(key, typ)
	b.ops = append(append(b.ops, op, i), args...)
	b.vals[txEntry{key, field}] = v
	return true
}

// commitCall returns tx_commit's KEYS and ARGV (after the latch key,
// KEYS[1], which the caller sets).
func (b *txBuffer) commitCall(field string, pub, latchTTL any) ([]string, []any) {
	ops := slices.Clip(b.ops)
	for _, n := range b.notes { // first: they may add data keys
		ops = n.ops(b, ops)
	}
	n := len(b.names)
	keys := make([]string, 0, 1+2*n+len(b.keys))
	keys = append(keys, "")
	keys = append(keys, b.names...)
	for _, name := range b.names {
		keys = append(keys, prefixName("redisson_lock__channel", name))
	}
	keys = append(keys, b.keys...)
	argv := make([]any, 0, 5+len(b.types)+len(ops))
	argv = append(argv, field, n, len(b.keys), pub, latchTTL)
	for _, t := range b.types {
		argv = append(argv, t)
	}
	return keys, append(argv, ops...)
}

// ops appends n's writes to ops: each written key's log member (mode '2'),
// then one invalidation message from an id no instance has, so that every
// instance, this one included, drops the keys (Redisson's type 1 message:
// the excluded instance id, the count, the 16-byte key hashes).
func (n *txNote) ops(b *txBuffer, ops []any) []any {
	if n.mode == "0" || len(n.hashes) == 0 {
		return ops
	}
	if n.mode == "2" {
		log := b.key(n.log, "zset")
		now := strconv.FormatInt(time.Now().UnixMilli(), 10)
		for _, h := range n.hashes {
			var r [8]byte
			_, _ = rand.Read(r[:])
			ops = append(ops, "zadd", log, now, string(append(append(h[:], ':'), r[:]...)))
		}
	}
	var id [16]byte
	_, _ = rand.Read(id[:])
	msg := binary.BigEndian.AppendUint32(append([]byte{1}, id[:]...), uint32(len(n.hashes)))
	for _, h := range n.hashes {
		msg = append(msg, h[:]...)
	}
	return append(ops, "publish", b.key(n.topic, "*"), string(msg))
}

// key returns the 1-based index of data key k (of Redis type typ, '*':
// any), adding it when new.
func (b *txBuffer) key(k, typ string) int {
	if i, ok := b.index[k]; ok {
		return i
	}
	b.keys = append(b.keys, k)
	b.types = append(b.types, typ)
	b.index[k] = len(b.keys)
	return len(b.keys)
}
