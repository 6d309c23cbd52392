package redisson

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// hold is one owner's hold of a lock, from the acquisition that took the
// hold count from 0 to 1 until Unlock or loss. It is shared by the lock handle
// and, for watchdog leases, the watchdog.
type hold struct {
	key   string // lock key
	field string // owner field
	slot  int    // hash slot of key, on Cluster
	done  chan struct{}
	once  sync.Once
	err   error       // why the hold ended; written once before done closes
	timer *time.Timer // explicit lease: ends the hold at the lease deadline; owned by the Lock's mutex

	// Guarded by watchdog.mu.
	expires time.Time // monotonic lease deadline known to this client
}

func newHold(key, field string, slot int) *hold {
	return &hold{key: key, field: field, slot: slot, done: make(chan struct{})}
}

// end closes the hold with cause err; later calls do nothing.
func (h *hold) end(err error) {
	h.once.Do(func() {
		h.err = err
		close(h.done)
	})
}

// ended reports whether the hold has ended, and why.
func (h *hold) ended() (bool, error) {
	select {
	case <-h.done:
		return true, h.err
	default:
		return false, nil
	}
}

// watchdog keeps watchdog leases alive: one goroutine per client renews every
// registered hold each third of the watchdog timeout, in batched script calls
// (at most batch locks each, grouped by hash slot) sent in one pipeline. A
// hold found gone, or not renewed before its lease would run out, is ended
// with ErrLeaseLost.
type watchdog struct {
	scripts *scripts
	cluster bool
	timeout time.Duration
	batch   int

	mu      sync.Mutex
	holds   map[*hold]struct{}
	started bool
	closed  bool
	stop    chan struct{}
	done    chan struct{}

	// Last renewal pass, for tests and benchmarks.
	lastPass  time.Duration
	lastCalls int
}

func newWatchdog(s *scripts, timeout time.Duration, batch int) *watchdog {
	_, cluster := s.rdb.(*redis.ClusterClient)
	return &watchdog{
		scripts: s,
		cluster: cluster,
		timeout: timeout,
		batch:   batch,
		holds:   make(map[*hold]struct{}),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// add registers h, whose lease runs until expires. It reports false after
// close.
func (w *watchdog) add(h *hold, expires time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return false
	}
	h.expires = expires
	w.holds[h] = struct{}{}
	if !w.started {
		w.started = true
		go w.loop()
	}
	return true
}

// extend moves h's known deadline forward (a re-entrant acquire renewed it).
func (w *watchdog) extend(h *hold, expires time.Time) {
	w.mu.Lock()
	if _, ok := w.holds[h]; ok && expires.After(h.expires) {
		h.expires = expires
	}
	w.mu.Unlock()
}

// remove stops renewing h. Unlock calls it before its release script runs.
func (w *watchdog) remove(h *hold) {
	w.mu.Lock()
	delete(w.holds, h)
	w.mu.Unlock()
}

func (w *watchdog) loop() {
	defer close(w.done)
	period := w.timeout / 3
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.renew(period)
		}
	}
}

// renew runs one renewal pass over every registered hold.
func (w *watchdog) renew(period time.Duration) {
	w.mu.Lock()
	holds := make([]*hold, 0, len(w.holds))
	for h := range w.holds {
		holds = append(holds, h)
	}
	w.mu.Unlock()
	if len(holds) == 0 {
		return
	}
	if w.cluster {
		sort.Slice(holds, func(i, j int) bool { return holds[i].slot < holds[j].slot })
	}

	ms := strconv.FormatInt(w.timeout.Milliseconds(), 10)
	var calls []*call
	var owners [][]*hold
	for i := 0; i < len(holds); {
		j := i + 1
		for j < len(holds) && j-i < w.batch && holds[j].slot == holds[i].slot {
			j++
		}
		chunk := holds[i:j]
		cl := &call{s: scriptLockRenew, keys: make([]string, len(chunk)), args: make([]any, 1, 1+len(chunk))}
		cl.args[0] = ms
		for k, h := range chunk {
			cl.keys[k] = h.key
			cl.args = append(cl.args, h.field)
		}
		calls = append(calls, cl)
		owners = append(owners, chunk)
		i = j
	}

	ctx, cancel := context.WithTimeout(context.Background(), period)
	defer cancel()
	sent := time.Now()
	_ = w.scripts.runPipelined(ctx, calls)
	now := time.Now()

	var lost []*hold
	w.mu.Lock()
	w.lastPass, w.lastCalls = now.Sub(sent), len(calls)
	for c, cl := range calls {
		res, err := cl.cmd.Int64Slice()
		for k, h := range owners[c] {
			if _, ok := w.holds[h]; !ok {
				continue // unlocked meanwhile
			}
			switch {
			case err == nil && k < len(res) && res[k] == 1:
				h.expires = sent.Add(w.timeout)
			case err == nil:
				delete(w.holds, h)
				lost = append(lost, h)
			case !now.Add(period).Before(h.expires):
				// Transient failure, and the next pass would come too late.
				delete(w.holds, h)
				lost = append(lost, h)
			}
		}
	}
	w.mu.Unlock()
	for _, h := range lost {
		h.end(ErrLeaseLost)
	}
}

// close stops the loop, waits for it, and ends every hold it kept with
// ErrClientClosed: nothing renews them any more.
func (w *watchdog) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	started := w.started
	holds := w.holds
	w.holds = make(map[*hold]struct{})
	w.mu.Unlock()
	close(w.stop)
	if started {
		<-w.done
	}
	for h := range holds {
		h.end(ErrClientClosed)
	}
}

// stats returns the number of holds kept alive and the duration and script
// call count of the last renewal pass.
func (w *watchdog) stats() (holds int, pass time.Duration, calls int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.holds), w.lastPass, w.lastCalls
}
