package redisson

// stats reports how many dispatcher loops run and how many takers they
// hold (takers gone but not yet pruned included); for tests.
func (s *queueService) stats() (loops, takers int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.ds {
		if d.running {
			loops++
		}
		takers += len(d.takers)
	}
	return loops, takers
}
