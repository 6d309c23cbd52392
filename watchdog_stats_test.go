package redisson

import (
	"time"
)

// stats returns the number of holds kept alive and the duration and script
// call count of the last renewal pass.
func (w *watchdog) stats() (holds int, pass time.Duration, calls int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.holds), w.lastPass, w.lastCalls
}
