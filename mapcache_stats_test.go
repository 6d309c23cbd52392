package redisson

import (
	"time"
)

// mapCacheStats is a snapshot of the eviction counts.
type mapCacheStats struct {
	calls   int
	evicted int64
	longest time.Duration
	biggest int
}

func (s *mapCacheService) stats() mapCacheStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return mapCacheStats{calls: s.calls, evicted: s.evicted, longest: s.longest, biggest: s.biggest}
}
