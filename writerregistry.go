package redisson

import "sync"

// writerRegistry is a Client's write-behind queues, written out and closed
// by Client.Close.
type writerRegistry struct {
	mu     sync.Mutex
	live   map[flushCloser]struct{}
	closed bool
}

// flushCloser is a map's write-behind queue (a *mapWriter[K, V]).
type flushCloser interface{ close() error }

// add registers w and reports whether it did: false once the client closed.
func (r *writerRegistry) add(w flushCloser) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false
	}
	if r.live == nil {
		r.live = map[flushCloser]struct{}{}
	}
	r.live[w] = struct{}{}
	return true
}

func (r *writerRegistry) remove(w flushCloser) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.live, w)
}

// closeAll closes every queue at once (each for its CloseTimeout at most)
// and waits for them; later adds fail.
func (r *writerRegistry) closeAll() {
	r.mu.Lock()
	r.closed = true
	live := make([]flushCloser, 0, len(r.live))
	for w := range r.live {
		live = append(live, w)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	for _, w := range live {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = w.close() // reported as EventWriteBehindDropped by the queue
		}()
	}
	wg.Wait()
}
