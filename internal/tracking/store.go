// Package tracking is the engine of server-assisted client-side caching:
// an in-process store of values read from Redis, kept fresh by the
// server's invalidation messages (CLIENT TRACKING in BCAST mode, the
// messages redirected to the tracking connection itself, which is
// subscribed to __redis__:invalidate with RESP2).
//
// Because the tracking connection is the one whose tracking state the
// server keeps, reads may go through any pooled connection: the server
// invalidates by key prefix, whoever read the key. The engine's narrow
// API: Get (a hit), Begin and Load.Store (a miss), WriteBegin and
// WriteEnd (a write by this process), Close.
//
// A value is stored only if, while it was read, the tracking connection
// stayed established (not lost, not replaced) and no invalidation and no
// local write of its key began or ended: the standard guard against a
// reply carrying the old value arriving after the invalidation of the
// write that replaced it.
package tracking

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
	"time"
)

const shardCount = 64 // a power of two

// entry is what the store holds for one Redis key: its value (a string
// key's) and the values of some of its fields (a hash's).
type entry struct {
	has    bool
	val    any
	exp    int64 // Unix ns; 0: no expiry
	fields map[string]*field
}

type field struct {
	val any
	exp int64
}

// pend is the guard of one key while it is read or written locally: gen
// changes at every invalidation and at the start and end of every local
// write, so that a read that saw it change stores nothing.
type pend struct {
	readers, writers int
	gen              uint64
}

type shard struct {
	mu      sync.RWMutex
	entries map[string]*entry
	pending map[string]*pend
	count   int // values held: each entry's val and fields
	_       [40]byte
}

// store is the sharded map of cached values.
type store struct {
	seed   maphash.Seed
	shards [shardCount]shard
	limit  int           // values per shard
	ttl    time.Duration // 0: none

	// state is epoch<<1 | live: live while the tracking connection is
	// established; the epoch changes at every loss.
	state atomic.Uint64

	hits, misses, invalidations, flushes, evictions atomic.Uint64
}

func newStore(maxEntries int, ttl time.Duration) *store {
	s := &store{seed: maphash.MakeSeed(), limit: max(1, (maxEntries+shardCount-1)/shardCount), ttl: ttl}
	for i := range s.shards {
		s.shards[i].entries = make(map[string]*entry)
		s.shards[i].pending = make(map[string]*pend)
	}
	return s
}

func (s *store) shard(key string) *shard {
	return &s.shards[maphash.String(s.seed, key)&(shardCount-1)]
}

// get returns the cached value of key (field "" for a string key).
func (s *store) get(key, fieldName string) (any, bool) {
	sh := s.shard(key)
	sh.mu.RLock()
	e := sh.entries[key]
	var v any
	var exp int64
	ok := false
	if e != nil {
		if fieldName == "" {
			v, exp, ok = e.val, e.exp, e.has
		} else if f := e.fields[fieldName]; f != nil {
			v, exp, ok = f.val, f.exp, true
		}
	}
	sh.mu.RUnlock()
	if ok && exp != 0 && time.Now().UnixNano() >= exp {
		ok = false
	}
	if !ok {
		s.misses.Add(1)
		return nil, false
	}
	s.hits.Add(1)
	return v, true
}

// Load is one read in progress, begun by Cache.Begin. Its zero value
// stores nothing.
type Load struct {
	s     *store
	sh    *shard
	p     *pend
	key   string
	field string
	state uint64
	gen   uint64
}

// begin registers a read of key's field.
func (s *store) begin(key, fieldName string) Load {
	st := s.state.Load()
	if st&1 == 0 {
		return Load{} // the tracking connection is not established
	}
	sh := s.shard(key)
	sh.mu.Lock()
	p := sh.pending[key]
	if p == nil {
		p = &pend{}
		sh.pending[key] = p
	}
	p.readers++
	gen := p.gen
	sh.mu.Unlock()
	return Load{s: s, sh: sh, p: p, key: key, field: fieldName, state: st, gen: gen}
}

// Store caches v as the value read, unless the key was invalidated or
// written locally, or the tracking connection was lost, since Begin. It
// must be called once for every Load, with ok false when the read failed
// (nothing is stored then); it reports whether v was stored.
func (l Load) Store(v any, ok bool) bool { return l.StoreUntil(v, ok, time.Time{}) }

// StoreUntil is Store for a value not to be served after until (zero: no
// bound but the Cache's TTL).
func (l Load) StoreUntil(v any, ok bool, until time.Time) bool {
	if l.s == nil {
		return false
	}
	s, sh := l.s, l.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	l.p.readers--
	keep := ok && l.p.gen == l.gen && l.p.writers == 0 && s.state.Load() == l.state
	if l.p.readers == 0 && l.p.writers == 0 {
		delete(sh.pending, l.key)
	}
	if !keep {
		return false
	}
	var exp int64
	if s.ttl > 0 {
		exp = time.Now().Add(s.ttl).UnixNano()
	}
	if !until.IsZero() && (exp == 0 || until.UnixNano() < exp) {
		exp = until.UnixNano()
	}
	if sh.count >= s.limit {
		s.evictOne(sh)
	}
	e := sh.entries[l.key]
	if e == nil {
		e = &entry{}
		sh.entries[l.key] = e
	}
	if l.field == "" {
		if !e.has {
			sh.count++
		}
		e.has, e.val, e.exp = true, v, exp
		return true
	}
	if e.fields == nil {
		e.fields = make(map[string]*field)
	}
	if f := e.fields[l.field]; f != nil {
		f.val, f.exp = v, exp
		return true
	}
	e.fields[l.field] = &field{val: v, exp: exp}
	sh.count++
	return true
}

// evictOne drops one key of sh with all its values (the first the map's
// iteration gives, which Go randomizes). sh.mu is held.
func (s *store) evictOne(sh *shard) {
	for k, e := range sh.entries {
		sh.count -= e.size()
		delete(sh.entries, k)
		s.evictions.Add(1)
		return
	}
}

func (e *entry) size() int {
	n := len(e.fields)
	if e.has {
		n++
	}
	return n
}

// invalidate drops key and bumps its guard.
func (s *store) invalidate(key string) {
	sh := s.shard(key)
	sh.mu.Lock()
	if e := sh.entries[key]; e != nil {
		sh.count -= e.size()
		delete(sh.entries, key)
	}
	if p := sh.pending[key]; p != nil {
		p.gen++
	}
	sh.mu.Unlock()
	s.invalidations.Add(1)
}

// writeBegin drops key and marks a local write in flight: no read stores
// key until writeEnd.
func (s *store) writeBegin(key string) {
	sh := s.shard(key)
	sh.mu.Lock()
	if e := sh.entries[key]; e != nil {
		sh.count -= e.size()
		delete(sh.entries, key)
	}
	p := sh.pending[key]
	if p == nil {
		p = &pend{}
		sh.pending[key] = p
	}
	p.writers++
	p.gen++
	sh.mu.Unlock()
}

// writeEnd ends a local write begun by writeBegin, dropping key again (a
// read may have stored nothing in between, but this keeps the rule
// simple).
func (s *store) writeEnd(key string) {
	sh := s.shard(key)
	sh.mu.Lock()
	if e := sh.entries[key]; e != nil {
		sh.count -= e.size()
		delete(sh.entries, key)
	}
	if p := sh.pending[key]; p != nil {
		p.writers--
		p.gen++
		if p.readers == 0 && p.writers == 0 {
			delete(sh.pending, key)
		}
	}
	sh.mu.Unlock()
}

// setLive marks the tracking connection established (true) or lost
// (false). A loss starts a new epoch and drops every value, so that no
// read begun before it stores anything.
func (s *store) setLive(live bool) {
	for {
		old := s.state.Load()
		next := old | 1
		if !live {
			next = (old>>1 + 1) << 1
		}
		if old == next || s.state.CompareAndSwap(old, next) {
			break
		}
	}
	if !live {
		s.flush()
	}
}

// flush drops every value.
func (s *store) flush() {
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.Lock()
		clear(sh.entries)
		sh.count = 0
		for _, p := range sh.pending {
			p.gen++
		}
		sh.mu.Unlock()
	}
	s.flushes.Add(1)
}

func (s *store) size() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += sh.count
		sh.mu.RUnlock()
	}
	return n
}
