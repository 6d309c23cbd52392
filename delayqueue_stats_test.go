package redisson

// delayStats is a snapshot of the mover's counts.
type delayStats struct {
	running int // queues running
	calls   int // transfer calls made
	moved   int // elements moved by this client
	failed  int // transfer calls failed
}

// stats returns a snapshot of the mover's counts (read by tests).
func (m *delayMover) stats() delayStats {
	m.mu.Lock()
	defer m.mu.Unlock()
	return delayStats{running: len(m.runs), calls: m.calls, moved: m.moved, failed: m.failed}
}
