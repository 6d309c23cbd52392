package redisson

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/maypok86/otter/v2"
	"github.com/minio/highwayhash"
)

// The in-process side of LocalCachedMap: the cache of decoded values (an
// otter or golang-lru cache keyed by K), the index from Redisson's 16-byte
// key hash to the cached entry (invalidation messages name keys by hash),
// and the guard that decides when a value read from or written to Redis may
// be cached.

// keyHash is Redisson's Hash.hash128toArray of an encoded key: HighwayHash-128
// with Redisson's key, its two 64-bit halves written big-endian.
func keyHash(encoded []byte) [16]byte {
	sum := highwayhash.Sum128(encoded, redissonHashKey)
	var h [16]byte
	binary.BigEndian.PutUint64(h[:8], binary.LittleEndian.Uint64(sum[:8]))
	binary.BigEndian.PutUint64(h[8:], binary.LittleEndian.Uint64(sum[8:]))
	return h
}

// nearEntry is one cached value, decoded once.
type nearEntry[K comparable, V any] struct {
	key  K
	hash [16]byte
	val  V
	born int64        // unix nanoseconds when cached
	used atomic.Int64 // unix nanoseconds of the last read, with MaxIdle only
}

// nearCache is the bounded (or not) map of entries; its implementations are
// safe for concurrent use and tell onGone of every entry they drop by
// themselves (eviction) or on request.
type nearCache[K comparable, V any] interface {
	get(key K) (*nearEntry[K, V], bool)
	set(key K, e *nearEntry[K, V])
	del(key K)
	clear()
	size() int
	all(yield func(*nearEntry[K, V]) bool)
	stop()
}

type otterCache[K comparable, V any] struct {
	c   *otter.Cache[K, *nearEntry[K, V]]
	max int // > 0: no entry is added past max (EvictionNone with a CacheSize)
}

func (o *otterCache[K, V]) get(key K) (*nearEntry[K, V], bool) { return o.c.GetIfPresent(key) }
func (o *otterCache[K, V]) set(key K, e *nearEntry[K, V]) {
	if o.max > 0 && o.c.EstimatedSize() >= o.max {
		if _, ok := o.c.GetIfPresent(key); !ok {
			return
		}
	}
	o.c.Set(key, e)
}
func (o *otterCache[K, V]) del(key K) { o.c.Invalidate(key) }
func (o *otterCache[K, V]) clear()    { o.c.InvalidateAll() }
func (o *otterCache[K, V]) size() int { return o.c.EstimatedSize() }
func (o *otterCache[K, V]) stop()     { o.c.StopAllGoroutines() }
func (o *otterCache[K, V]) all(yield func(*nearEntry[K, V]) bool) {
	for _, e := range o.c.All() {
		if !yield(e) {
			return
		}
	}
}

type lruCache[K comparable, V any] struct {
	c       *lru.Cache[K, *nearEntry[K, V]]
	evicted *atomic.Uint64
}

func (l lruCache[K, V]) get(key K) (*nearEntry[K, V], bool) { return l.c.Get(key) }
func (l lruCache[K, V]) set(key K, e *nearEntry[K, V]) {
	if l.c.Add(key, e) {
		l.evicted.Add(1)
	}
}
func (l lruCache[K, V]) del(key K) { l.c.Remove(key) }
func (l lruCache[K, V]) clear()    { l.c.Purge() }
func (l lruCache[K, V]) size() int { return l.c.Len() }
func (l lruCache[K, V]) stop()     {}
func (l lruCache[K, V]) all(yield func(*nearEntry[K, V]) bool) {
	for _, e := range l.c.Values() {
		if !yield(e) {
			return
		}
	}
}

// newNearCache builds the cache the options ask for; onGone is told of
// every entry it drops, evicted counts those it drops by itself.
func newNearCache[K comparable, V any](o LocalCacheOptions, onGone func(*nearEntry[K, V]), evicted *atomic.Uint64) nearCache[K, V] {
	if o.EvictionPolicy == EvictionLRU && o.CacheSize > 0 {
		c, _ := lru.NewWithEvict(o.CacheSize, func(_ K, e *nearEntry[K, V]) { onGone(e) })
		return lruCache[K, V]{c, evicted}
	}
	opts := &otter.Options[K, *nearEntry[K, V]]{
		// Maintenance runs on the goroutine that calls the cache: no
		// goroutine is left behind (the periodic clean-up of a cache with
		// expiry is stopped by stop).
		Executor: func(fn func()) { fn() },
		OnDeletion: func(e otter.DeletionEvent[K, *nearEntry[K, V]]) {
			if e.WasEvicted() {
				evicted.Add(1)
			}
			onGone(e.Value)
		},
	}
	max := 0
	if o.CacheSize > 0 {
		if o.EvictionPolicy == EvictionLFU {
			opts.MaximumSize = o.CacheSize
		} else {
			max = o.CacheSize
		}
	}
	switch {
	case o.MaxIdle > 0 && (o.TimeToLive == 0 || o.MaxIdle < o.TimeToLive):
		opts.ExpiryCalculator = otter.ExpiryAccessing[K, *nearEntry[K, V]](o.MaxIdle)
	case o.TimeToLive > 0:
		opts.ExpiryCalculator = otter.ExpiryWriting[K, *nearEntry[K, V]](o.TimeToLive)
	}
	return &otterCache[K, V]{c: otter.Must(opts), max: max}
}

// guardStripes is the number of per-key epochs (keys share them by hash).
const guardStripes = 64

// near is a handle's local cache and its guard, which decides when a value
// may enter the cache: a value read from Redis only if no invalidation,
// clear, loss of messages or local write of its key happened since the
// read was sent; a value this handle wrote only if no other local write or
// read of its key, and no invalidation, overlapped the write. Every change
// of the cache goes through mu; hits read it without locking.
type near[K comparable, V any] struct {
	cache nearCache[K, V]
	index sync.Map // [16]byte key hash -> *nearEntry, the entry cached under that hash
	ttl   int64    // nanoseconds; 0 for none
	idle  int64    // nanoseconds; 0 for none
	stamp bool     // entries record when they were cached without ttl or idle (ReadThrough.RefreshAfter)
	live  atomic.Bool
	stats *cacheCounters
	// ServeStaleFor: while not live after a loss, entries are served until
	// staleSince (unix ns of the loss; 0: none) plus maxStale.
	maxStale   int64
	staleSince atomic.Int64

	mu      sync.Mutex
	gen     uint64 // bumped by every clear and every loss of messages
	stripes [guardStripes]struct {
		epoch    uint64 // bumped by every invalidation and every local write's start and end
		inflight int    // local writes under way
	}
}

func newNear[K comparable, V any](o LocalCacheOptions, stats *cacheCounters) *near[K, V] {
	n := &near[K, V]{ttl: int64(o.TimeToLive), idle: int64(o.MaxIdle), stats: stats}
	if o.ReconnectionStrategy != ReconnectNone && o.StoreMode != StoreLocalCacheOnly {
		n.maxStale = int64(o.ServeStaleFor)
	}
	n.cache = newNearCache(o, func(e *nearEntry[K, V]) { n.index.CompareAndDelete(e.hash, e) }, &stats.evictions)
	return n
}

// ticket is a snapshot of the guard taken before a call to Redis.
type ticket struct {
	gen, epoch uint64
	stripe     int
	sole       bool // a write that overlapped no other local write at its start
}

func stripeOf(h [16]byte) int { return int(h[15]) % guardStripes }

// lookup returns the cached value of key, if the cache may serve it.
func (n *near[K, V]) lookup(key K) (V, bool) {
	v, ok, _ := n.get(key)
	return v, ok
}

// get is lookup also returning, for a value served stale (ServeStaleFor),
// when the loss was seen (unix ns; 0 for a value served live). It counts
// the hit or miss.
func (n *near[K, V]) get(key K) (V, bool, int64) {
	var zero V
	var since int64
	if !n.live.Load() {
		if since = n.staleSince.Load(); since == 0 || time.Now().UnixNano()-since > n.maxStale {
			n.stats.misses.Add(1)
			return zero, false, 0
		}
	}
	e, ok := n.cache.get(key)
	if !ok {
		n.stats.misses.Add(1)
		return zero, false, 0
	}
	if n.ttl != 0 || n.idle != 0 {
		now := time.Now().UnixNano()
		if n.ttl != 0 && now-e.born >= n.ttl {
			n.stats.misses.Add(1)
			return zero, false, 0
		}
		if n.idle != 0 {
			used := e.used.Load()
			if now-used >= n.idle {
				n.stats.misses.Add(1)
				return zero, false, 0
			}
			if now-used > n.idle>>6 {
				e.used.Store(now)
			}
		}
	}
	n.stats.hits.Add(1)
	if since != 0 {
		n.stats.stale.Add(1)
	}
	return e.val, true, since
}

// read takes the ticket of a read of the key hashed h.
func (n *near[K, V]) read(h [16]byte) ticket {
	s := stripeOf(h)
	n.mu.Lock()
	defer n.mu.Unlock()
	return ticket{gen: n.gen, epoch: n.stripes[s].epoch, stripe: s}
}

// loaded caches val, read from Redis under ticket t, unless something
// happened to its key since.
func (n *near[K, V]) loaded(t ticket, key K, h [16]byte, val V) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := &n.stripes[t.stripe]
	if n.live.Load() && n.gen == t.gen && st.epoch == t.epoch && st.inflight == 0 {
		n.putLocked(key, h, val)
	}
}

// writing starts a local write of key: the key leaves the cache until the
// write ends.
func (n *near[K, V]) writing(key K, h [16]byte) ticket {
	s := stripeOf(h)
	n.mu.Lock()
	defer n.mu.Unlock()
	st := &n.stripes[s]
	st.inflight++
	st.epoch++
	n.delLocked(key, h)
	return ticket{gen: n.gen, epoch: st.epoch, stripe: s, sole: st.inflight == 1}
}

// written ends a local write started with t; cache says whether the write
// succeeded with val as the key's value (false: removed, or failed).
func (n *near[K, V]) written(t ticket, key K, h [16]byte, val V, cache bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	st := &n.stripes[t.stripe]
	if cache && t.sole && n.live.Load() && n.gen == t.gen && st.epoch == t.epoch {
		n.putLocked(key, h, val)
	} else {
		n.delLocked(key, h)
	}
	st.epoch++
	st.inflight--
}

// invalidate drops the entry hashed h (a message from another instance).
func (n *near[K, V]) invalidate(h [16]byte) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.invalidateLocked(h)
}

func (n *near[K, V]) invalidateLocked(h [16]byte) {
	n.stripes[stripeOf(h)].epoch++
	if e, ok := n.index.LoadAndDelete(h); ok {
		n.cache.del(e.(*nearEntry[K, V]).key)
	}
}

// updated caches val for key (an update message from another instance),
// unless a local write of the key is under way: then it only invalidates.
func (n *near[K, V]) updated(key K, h [16]byte, val V) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.invalidateLocked(h)
	if n.live.Load() && n.stripes[stripeOf(h)].inflight == 0 {
		n.putLocked(key, h, val)
	}
}

// store caches val for key whatever else happens (StoreLocalCacheOnly,
// where the cache is the map) and returns the value it replaces.
func (n *near[K, V]) store(key K, h [16]byte, val V) (V, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var prev V
	e, had := n.cache.get(key)
	if had {
		prev = e.val
	}
	n.invalidateLocked(h)
	n.putLocked(key, h, val)
	return prev, had
}

// remove drops key and returns its value (StoreLocalCacheOnly).
func (n *near[K, V]) remove(key K, h [16]byte) (V, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	var prev V
	e, had := n.cache.get(key)
	if had {
		prev = e.val
	}
	n.stripes[stripeOf(h)].epoch++
	n.delLocked(key, h)
	return prev, had
}

// clear empties the cache and voids every ticket taken before.
func (n *near[K, V]) clear() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.clearLocked()
}

func (n *near[K, V]) clearLocked() {
	n.gen++
	n.cache.clear()
	n.index.Clear()
}

func (n *near[K, V]) putLocked(key K, h [16]byte, val V) {
	// One cached entry per key hash: messages name keys by the hash of
	// their bytes, and an interface K may hold two Go values of one
	// encoding (int 1 and int64 1); the one the index lost would stay.
	if old, ok := n.index.Load(h); ok && old.(*nearEntry[K, V]).key != key {
		n.cache.del(old.(*nearEntry[K, V]).key)
	}
	e := &nearEntry[K, V]{key: key, hash: h, val: val}
	if n.ttl != 0 || n.idle != 0 || n.stamp {
		e.born = time.Now().UnixNano()
		e.used.Store(e.born)
	}
	n.cache.set(key, e)
	if got, ok := n.cache.get(key); ok && got == e {
		n.index.Store(h, e)
	}
}

func (n *near[K, V]) delLocked(key K, h [16]byte) {
	if e, ok := n.index.LoadAndDelete(h); ok {
		n.cache.del(e.(*nearEntry[K, V]).key) // key, or another Go value of its bytes
	}
	n.cache.del(key)
}

// readAny takes one ticket per stripe, for a read whose keys are not known
// before it returns (PreloadCache's HSCAN): ticketOf picks a key's.
func (n *near[K, V]) readAny() (gen uint64, epochs [guardStripes]uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range n.stripes {
		epochs[i] = n.stripes[i].epoch
	}
	return n.gen, epochs
}

// ticketOf is the ticket of the key hashed h out of readAny's snapshot.
func ticketOf(gen uint64, epochs *[guardStripes]uint64, h [16]byte) ticket {
	s := stripeOf(h)
	return ticket{gen: gen, epoch: epochs[s], stripe: s}
}
