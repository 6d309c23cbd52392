package scripting

// runnerStats is what tests read of a Runner.
type runnerStats struct {
	loads int // SCRIPT LOADs sent (a load on every master counts once)
}

func (r *Runner) stats() runnerStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return runnerStats{loads: r.loads}
}

// autoPipeStats is what tests read of the auto-pipeline.
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
