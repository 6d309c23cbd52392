package redisson

// autoPipeStats is what tests and benchmarks read of the auto-pipeline.
type autoPipeStats struct {
	pipelines uint64 // pipelines sent
	batched   uint64 // calls sent in them
	queued    int    // calls waiting now
}

func (a *autoPipe) stats() autoPipeStats {
	a.mu.Lock()
	q := len(a.queue)
	a.mu.Unlock()
	return autoPipeStats{pipelines: a.pipelines.Load(), batched: a.batched.Load(), queued: q}
}
