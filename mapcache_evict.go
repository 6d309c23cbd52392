package redisson

import (
	"context"
	"sync"
	"time"
)

// The MapCache service: the background eviction pass, and the join of the
// listeners' goroutines.

const (
	// mapCacheEvictBatch is the most entries one eviction call takes from
	// each of a map's timeout and idle zsets: a call deletes at most twice
	// that, so it holds Redis for about a millisecond.
	mapCacheEvictBatch = 100
	// mapCacheEvictEvery is the shortest time between two eviction visits
	// of one map; a visit that found nothing doubles its map's delay, up to
	// mapCacheEvictBackoff times it (30s).
	mapCacheEvictEvery   = time.Second
	mapCacheEvictBackoff = 30
	// mapCacheEvictCalls bounds the calls of one visit, so that one map
	// with a flood of expired entries does not starve the others.
	mapCacheEvictCalls = 500
)

// mapCacheKind names a MapCache in its events and errors, here and in
// mapcache.go.
const mapCacheKind = "map cache"

// mapCacheService owns one goroutine per client, started by the first use
// of a MapCache: every interval it visits the maps this client has used
// whose delay has passed and deletes their expired entries, in calls of at
// most 2 x batch entries, call after call while a call finds a full batch
// (at most mapCacheEvictCalls per visit). Another client (Go or Java)
// evicting the same map meanwhile is harmless: each entry is deleted, and
// published as expired, by one script only. It also counts the listeners'
// goroutines (OnCreated...), which close waits for. The SetCaches this
// client has used are visited by the same pass, with their own script.
type mapCacheService struct {
	scripts  *scripts
	pubsub   *pubsubService
	emit     *emitter
	interval time.Duration
	batch    int

	mu   sync.Mutex
	maps map[string]*evictTarget
	// loop runs the pass (its context is the pass's calls', cancelled by
	// close) and counts the listeners' goroutines.
	loop *lazyLoop

	// Counts since New, for tests and benchmarks (guarded by mu).
	calls   int           // eviction script calls
	evicted int64         // entries deleted by them
	longest time.Duration // the longest single call, as this client timed it
	biggest int           // the most entries one call deleted
}

// evictTarget is one object the pass visits: a MapCache, or a SetCache
// (whose script, kind and keys differ; the pass is the same).
type evictTarget struct {
	kind   string  // in EventEvictFailed
	script *script // one batch: ARGV publish command, batch; returns {deleted, more}
	keys   []string
	delay  time.Duration
	next   time.Time
}

func newMapCacheService(s *scripts, p *pubsubService, em *emitter, interval time.Duration, batch int) *mapCacheService {
	return &mapCacheService{
		scripts:  s,
		pubsub:   p,
		emit:     em,
		interval: interval,
		batch:    batch,
		maps:     make(map[string]*evictTarget),
		loop:     newLazyLoop(),
	}
}

// add registers the map called name (keys in script order) for eviction,
// starting the pass on first use.
func (s *mapCacheService) add(name string, keys []string) {
	s.addTarget(mapCacheKind, scriptMapCacheEvict, name, keys)
}

// addTarget registers the object of kind called name for eviction by
// script (keys in script order), starting the pass on first use.
func (s *mapCacheService) addTarget(kind string, sc *script, name string, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.loop.start(s.run) {
		return
	}
	id := kind + "\x00" + name
	if _, ok := s.maps[id]; !ok {
		s.maps[id] = &evictTarget{kind: kind, script: sc, keys: keys, delay: s.interval}
	}
}

// addListener counts a listener's goroutine about to start; false after
// close.
func (s *mapCacheService) addListener() bool { return s.loop.join() }

// listenerDone counts a listener's goroutine out.
func (s *mapCacheService) listenerDone() { s.loop.leave() }

// run makes a pass every interval until ctx (the lazyLoop's) is cancelled.
func (s *mapCacheService) run(ctx context.Context) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.pass(ctx)
	}
}

// pass visits every map whose delay has passed.
func (s *mapCacheService) pass(ctx context.Context) {
	now := time.Now()
	s.mu.Lock()
	var due []*evictTarget
	for _, m := range s.maps {
		if !now.Before(m.next) {
			due = append(due, m)
		}
	}
	s.mu.Unlock()
	if len(due) == 0 {
		return
	}
	pub := s.pubsub.publishArgBackground()
	for _, m := range due {
		n := s.evict(ctx, m, pub)
		s.mu.Lock()
		if n > 0 {
			m.delay = s.interval
		} else {
			m.delay = min(2*m.delay, mapCacheEvictBackoff*s.interval)
		}
		m.next = time.Now().Add(m.delay)
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
	}
}

// evict deletes one object's expired entries, batch by batch, and returns
// how many it deleted. A failed call is an EventEvictFailed.
func (s *mapCacheService) evict(ctx context.Context, m *evictTarget, pub any) int64 {
	var total int64
	keys := m.keys
	for range mapCacheEvictCalls {
		start := time.Now()
		r, err := s.scripts.run(ctx, m.script, keys, pub, s.batch).Int64Slice()
		took := time.Since(start)
		if err == nil && len(r) != 2 {
			err = ErrUnexpectedReply
		}
		if err != nil {
			// A failed call is tried again on the next visit; it is
			// reported unless close cancelled it.
			if ctx.Err() == nil {
				s.emit.emit(Event{Type: EventEvictFailed, Kind: m.kind, Name: keys[0],
					Err: objectErr(m.kind, keys[0], err)})
			}
			return total
		}
		s.mu.Lock()
		s.calls++
		s.evicted += r[0]
		s.longest = max(s.longest, took)
		s.biggest = max(s.biggest, int(r[0]))
		s.mu.Unlock()
		total += r[0]
		if r[1] == 0 || ctx.Err() != nil {
			return total
		}
	}
	return total
}

// close stops the pass (cancelling a call in flight) and waits for it and
// for the listeners' goroutines, which end with the pub/sub service: close
// it first.
func (s *mapCacheService) close() { s.loop.close() }
