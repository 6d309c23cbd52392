package redisson

// scriptStats is what tests and benchmarks read of the script runner.
type scriptStats struct {
	loads int // SCRIPT LOADs sent (a load on every master counts once)
}

func (c *scripts) stats() scriptStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return scriptStats{loads: c.loads}
}
