package redisson

import (
	"sync"
	"sync/atomic"
)

// CacheStats counts what a cache did since it was created: a
// LocalCachedMap's (LocalCachedMap.CacheStats), a read-through MapCache's
// loads (MapCache.CacheStats), or every cache of a Client added up
// (Stats.Cache, closed handles and the client-side cache of
// WithClientSideCaching included, whose invalidations are the keys Redis
// reported written). Reading it does no I/O.
type CacheStats struct {
	Hits          uint64 // reads served from the local cache (stale ones included)
	Misses        uint64 // reads the local cache could not serve (they went to Redis)
	Loads         uint64 // ReadThrough loader runs (this instance's), failed ones included
	LoadErrors    uint64 // of Loads, those that failed (ErrKeyNotFound is no failure)
	Evictions     uint64 // entries the local cache dropped for its CacheSize, TimeToLive or MaxIdle
	Invalidations uint64 // keys invalidated or updated, and clears, by other instances' messages
	StaleServes   uint64 // of Hits, those served while the map's connection was lost (ServeStaleFor)
	Size          int    // entries in the local cache now
	Writes        uint64 // keys a Writer wrote or deleted (WithWriteThrough, WithWriteBehind)
	WriteErrors   uint64 // failed Writer calls (each retry of a write-behind batch counts)
	WritesDropped uint64 // write-behind keys the Writer never got (MaxAttempts reached, Close gave up)
	WriteQueue    int    // keys in write-behind queues now
	Refreshes     uint64 // of Loads, background reloads of entries older than ReadThrough.RefreshAfter
}

// add adds o to s.
func (s *CacheStats) add(o CacheStats) {
	s.Hits += o.Hits
	s.Misses += o.Misses
	s.Loads += o.Loads
	s.LoadErrors += o.LoadErrors
	s.Evictions += o.Evictions
	s.Invalidations += o.Invalidations
	s.StaleServes += o.StaleServes
	s.Size += o.Size
	s.Writes += o.Writes
	s.WriteErrors += o.WriteErrors
	s.WritesDropped += o.WritesDropped
	s.WriteQueue += o.WriteQueue
	s.Refreshes += o.Refreshes
}

// cacheCounters are one cache's counts, updated without locking.
type cacheCounters struct {
	hits, misses, loads, loadErrors, evictions, invalidations, stale atomic.Uint64
	size                                                             func() int // nil: 0
	writes, writeErrors, writesDropped, refreshes                    atomic.Uint64
	queued                                                           func() int // write-behind queue length; nil: 0
}

func (c *cacheCounters) snapshot() CacheStats {
	s := CacheStats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Loads: c.loads.Load(), LoadErrors: c.loadErrors.Load(),
		Evictions: c.evictions.Load(), Invalidations: c.invalidations.Load(), StaleServes: c.stale.Load(),
	}
	if c.size != nil {
		s.Size = c.size()
	}
	s.Writes, s.WriteErrors, s.WritesDropped = c.writes.Load(), c.writeErrors.Load(), c.writesDropped.Load()
	s.Refreshes = c.refreshes.Load()
	if c.queued != nil {
		s.WriteQueue = c.queued()
	}
	return s
}

// cacheRegistry is a Client's caches, for Stats.Cache: the live ones' and
// the retired (closed) ones' counts.
type cacheRegistry struct {
	mu      sync.Mutex
	live    map[*cacheCounters]struct{}
	retired CacheStats
}

func (r *cacheRegistry) add(c *cacheCounters) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == nil {
		r.live = map[*cacheCounters]struct{}{}
	}
	r.live[c] = struct{}{}
}

// retire moves c's counts (its size is gone) into the retired total.
func (r *cacheRegistry) retire(c *cacheCounters) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.live[c]; !ok {
		return
	}
	delete(r.live, c)
	s := c.snapshot()
	s.Size, s.WriteQueue = 0, 0
	r.retired.add(s)
}

func (r *cacheRegistry) total() CacheStats {
	r.mu.Lock()
	live := make([]*cacheCounters, 0, len(r.live))
	for c := range r.live {
		live = append(live, c)
	}
	t := r.retired
	r.mu.Unlock()
	for _, c := range live {
		t.add(c.snapshot())
	}
	return t
}
