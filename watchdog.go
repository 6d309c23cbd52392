package redisson

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// watchdog keeps watchdog leases alive: one goroutine per client renews every
// registered hold each third of the watchdog timeout, in batched script calls
// (at most batch locks each, grouped by renewal script and hash slot) sent in
// one pipeline (several, one after the other, past maxPassHolds leases). It knows no lock kind: each hold carries its renewal spec
// (hold.go), which names the scripts and the hold in events. A hold found gone is ended with ErrLeaseLost; so is a hold whose renewal has
// not been confirmed by its lease deadline (measured from before the last
// successful renewal was sent, less lossMargin), even while a renewal is
// still in flight.
type watchdog struct {
	scripts *scripts
	topo    topology
	timeout time.Duration
	batch   int
	// pipeHolds bounds the leases of one renewal pipeline (maxPassHolds;
	// tests lower it).
	pipeHolds int
	cleanup   time.Duration // how long close waits for a pass in flight
	emit      *emitter

	mu    sync.Mutex
	holds map[*hold]struct{} // watched: renewed by the loop
	// live is every hold of the client that has not ended: the watched
	// ones and those a lease timer ends (see keep). close ends them all.
	live  map[*hold]struct{}
	stale []*hold // ended by expiry, then renewed late: to drop from Redis
	// loop runs the renewal loop, started by the first watched hold; its
	// stop, under mu, closes the registry too.
	loop *lazyLoop

	// Last renewal pass, for tests and benchmarks.
	lastPass  time.Duration
	lastCalls int
}

func newWatchdog(s *scripts, topo topology, em *emitter, timeout time.Duration, batch int, cleanup time.Duration) *watchdog {
	return &watchdog{
		scripts:   s,
		topo:      topo,
		emit:      em,
		timeout:   timeout,
		batch:     batch,
		cleanup:   cleanup,
		pipeHolds: maxPassHolds,
		holds:     make(map[*hold]struct{}),
		live:      make(map[*hold]struct{}),
		loop:      newLazyLoop(),
	}
}

// add registers h, whose lease runs until expires. It reports false after
// close.
func (w *watchdog) add(h *hold, expires time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.loop.start(w.run) {
		return false
	}
	h.expires = expires
	w.holds[h] = struct{}{}
	w.live[h] = struct{}{}
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

// keep registers h, a hold nobody renews (a lease timer ends it), so that
// close ends it. It reports false after close.
func (w *watchdog) keep(h *hold) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.loop.isStopped() {
		return false
	}
	w.live[h] = struct{}{}
	return true
}

// remove stops renewing h and forgets it: the hold has ended.
func (w *watchdog) remove(h *hold) {
	w.mu.Lock()
	delete(w.holds, h)
	delete(w.live, h)
	w.mu.Unlock()
}

// forget stops renewing h and returns its lease deadline as known here;
// h stays live until remove, so that close still ends it. Unlock calls it
// before its release script runs.
func (w *watchdog) forget(h *hold) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.holds, h)
	return h.expires
}

// deadline returns the lease deadline of h known here, or the zero time
// when the watchdog never renewed h. It stays readable after the watchdog
// dropped h: between that drop and the end of h (which a lost hold gets
// just after, outside the lock) a caller must see the deadline, or an
// error, never "no deadline".
func (w *watchdog) deadline(h *hold) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return h.expires
}

// pass is one renewal pass: the calls sent and the holds of each call.
type pass struct {
	calls  []*call
	owners [][]*hold // owners[i] are the holds renewed by calls[i]; nil for drops
	sent   time.Time
	took   time.Duration
}

// run is the renewal loop; it ends when ctx (the lazyLoop's) is cancelled.
func (w *watchdog) run(ctx context.Context) {
	period := w.timeout / 3
	tick := time.NewTicker(period)
	defer tick.Stop()
	deadline := time.NewTimer(period)
	defer deadline.Stop()
	var inFlight chan *pass // nil when no pass is running
	var cancelPass context.CancelFunc
	overran := false // a tick came while a pass was running
	for {
		select {
		case <-ctx.Done():
			w.abandon(inFlight, cancelPass)
			return
		case <-tick.C:
			if inFlight == nil {
				inFlight, cancelPass = w.startPass(period)
			} else {
				overran = true
			}
		case p := <-inFlight:
			inFlight = nil
			w.apply(p)
			if overran {
				// The pass outlasted a period: renew again at once rather
				// than up to a period later, or the gap between two
				// renewals would exceed the lease.
				overran = false
				inFlight, cancelPass = w.startPass(period)
			}
		case <-deadline.C:
		}
		deadline.Reset(w.expireOverdue(period))
	}
}

// startPass snapshots the holds and renews them in a goroutine whose result
// arrives on the returned channel; nil when there is nothing to send. The
// function returned cancels the pass.
func (w *watchdog) startPass(period time.Duration) (chan *pass, context.CancelFunc) {
	w.mu.Lock()
	holds := make([]*hold, 0, len(w.holds))
	var earliest time.Time
	for h := range w.holds {
		holds = append(holds, h)
		if earliest.IsZero() || h.expires.Before(earliest) {
			earliest = h.expires
		}
	}
	stale := w.stale
	w.stale = nil
	w.mu.Unlock()
	if len(holds) == 0 && len(stale) == 0 {
		return nil, nil
	}
	// One call renews holds of one script and one slot.
	sort.Slice(holds, func(i, j int) bool {
		if holds[i].renewal.script != holds[j].renewal.script {
			return holds[i].renewal.script.Name() < holds[j].renewal.script.Name()
		}
		return holds[i].slot < holds[j].slot
	})
	p := &pass{}
	ms := strconv.FormatInt(w.timeout.Milliseconds(), 10)
	for i := 0; i < len(holds); {
		j := i + 1
		for j < len(holds) && j-i < w.batch && holds[j].slot == holds[i].slot && holds[j].renewal.script == holds[i].renewal.script {
			j++
		}
		chunk := holds[i:j]
		cl := &call{s: chunk[0].renewal.script, keys: make([]string, len(chunk)), args: make([]any, 1, 1+2*len(chunk))}
		cl.args[0] = ms
		for k, h := range chunk {
			cl.keys[k] = h.key
			cl.args = append(cl.args, h.renewArgs...)
		}
		p.calls = append(p.calls, cl)
		p.owners = append(p.owners, chunk)
		i = j
	}
	for _, h := range stale {
		p.calls = append(p.calls, &call{s: h.renewal.drop, keys: []string{h.key, h.channel}, args: []any{h.field, h.pub}})
		p.owners = append(p.owners, nil)
	}
	out := make(chan *pass, 1) // never blocks the pass, even once abandoned
	// A pass may take longer than a period (100,000 leases on a slow
	// machine): cutting it off at the period would throw away renewals
	// Redis has made and send them all again, pass after pass, until the
	// leases ran out. It may run until the first of its leases would be
	// lost anyway; meanwhile ticks start no other pass.
	limit := max(period, time.Until(earliest))
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	go func() {
		// go-redis may not enforce this deadline on a stuck connection;
		// expireOverdue does not wait for the pass.
		defer cancel()
		p.sent = time.Now()
		w.send(ctx, p.calls)
		p.took = time.Since(p.sent)
		out <- p
	}()
	return out, cancel
}

// maxPassHolds bounds the leases one renewal pipeline renews: a pass over
// more sends several, one after the other. One pipeline for a million
// holds is some 70 MB to write, which a loaded machine did not finish
// within go-redis's write timeout (3 s): the whole pass failed, period
// after period, until the leases ran out. The bound counts leases, not
// calls: on a Cluster a call renews the leases of one slot only, so
// 100,000 leases spread over the slots make some 16,000 calls, which a
// bound of 1,000 calls cut into 17 pipelines sent one after the other.
const maxPassHolds = 100_000

// send runs a pass's calls in pipelines of at most pipeHolds leases (a
// call renews len(keys) of them; a drop counts as one); the calls of a
// pipeline not sent because ctx ended get ctx's error. The renewed holds'
// deadlines count from before the first pipeline was sent, so a later
// pipeline's renewals only make them more conservative.
func (w *watchdog) send(ctx context.Context, calls []*call) {
	for i := 0; i < len(calls); {
		j, holds := i, 0
		for j < len(calls) && (j == i || holds+len(calls[j].keys) <= w.pipeHolds) {
			holds += max(len(calls[j].keys), 1)
			j++
		}
		part := calls[i:j]
		i = j
		if err := ctx.Err(); err != nil {
			for _, cl := range part {
				cl.cmd = redis.NewCmd(ctx)
				cl.cmd.SetErr(err)
			}
			continue
		}
		_ = w.scripts.runPipelined(ctx, part)
	}
}

// abandon cancels the pass in flight, if any, and waits for it for at most
// the cleanup timeout: a pass stuck on a server that does not answer must
// not hold up Close. go-redis does not interrupt a read on cancellation, so
// an abandoned pass's goroutine ends by its connection's read deadline (at
// most the pass's limit); its result is dropped in its buffered channel.
func (w *watchdog) abandon(inFlight chan *pass, cancel context.CancelFunc) {
	if inFlight == nil {
		return
	}
	cancel()
	select {
	case <-inFlight:
		return
	default:
	}
	w.emit.emit(Event{Type: EventCloseWaiting, Name: "watchdog renewal pass", Duration: w.cleanup})
	t := time.NewTimer(w.cleanup)
	defer t.Stop()
	select {
	case <-inFlight:
	case <-t.C:
	}
}

// apply records a finished pass: renewed holds get a new deadline; holds
// whose lock is gone end with ErrLeaseLost. A transient error changes
// nothing: the next pass retries, and the deadline still applies.
func (w *watchdog) apply(p *pass) {
	var lost []*hold
	var lates []time.Time // the deadlines the lost holds had
	var failed Event      // the first failed renewal call, counting the others
	renewed := 0
	var tracked map[holdField]struct{} // the watched holds' key and field, built on first need
	w.mu.Lock()
	w.lastPass, w.lastCalls = p.took, len(p.calls)
	for c, cl := range p.calls {
		if p.owners[c] == nil {
			continue
		}
		res, err := cl.cmd.Int64Slice()
		if err != nil {
			if failed.Err == nil {
				h := p.owners[c][0]
				kind, owner := h.what()
				failed = Event{Type: EventRenewalFailed, Kind: kind, Name: h.key, Owner: owner, Err: err}
			}
			failed.Count += len(p.owners[c])
			failed.Calls++
			continue
		}
		for k, h := range p.owners[c] {
			ok := k < len(res) && res[k] == 1
			if _, watched := w.holds[h]; !watched {
				if ok && h.expired && h.renewal.drop != nil {
					if tracked == nil {
						tracked = w.trackedFields()
					}
					// Kept alive after all: drop it, unless a handle
					// re-acquired under its field and is watched.
					if _, again := tracked[holdField{h.key, h.field}]; !again {
						w.stale = append(w.stale, h)
					}
				}
				continue
			}
			if ok {
				renewed++
				h.expires = p.sent.Add(w.timeout - lossMargin(w.timeout))
			} else {
				delete(w.holds, h)
				delete(w.live, h)
				lates = append(lates, h.expires)
				h.expires = p.sent // gone: a deadline already past until lose ends it
				lost = append(lost, h)
			}
		}
	}
	w.mu.Unlock()
	now := time.Now()
	for i, h := range lost {
		h.lose(w.emit, lostGone, now.Sub(lates[i]))
	}
	if failed.Err != nil {
		w.emit.emit(failed)
	}
	w.emit.emit(Event{Type: EventRenewalPass, Count: renewed, Calls: len(p.calls), Duration: p.took})
}

// holdField is a hold's lock key and owner field.
type holdField struct{ key, field string }

// trackedFields returns the key and field of every watched hold (a handle
// may have re-acquired under the field of a hold the watchdog gave up on),
// built once per pass that needs it: a lookup per hold in the watched set
// made a pass after many lost leases quadratic (92,000 late renewals of a
// million leases held w.mu for over ten minutes). Caller holds w.mu.
func (w *watchdog) trackedFields() map[holdField]struct{} {
	out := make(map[holdField]struct{}, len(w.holds))
	for h := range w.holds {
		out[holdField{h.key, h.field}] = struct{}{}
	}
	return out
}

// expireOverdue ends, with ErrLeaseLost, every hold whose lease deadline has
// passed without a confirmed renewal, and returns the time until the next
// deadline (at most period).
func (w *watchdog) expireOverdue(period time.Duration) time.Duration {
	now := time.Now()
	next := period
	var lost []*hold
	w.mu.Lock()
	for h := range w.holds {
		if left := h.expires.Sub(now); left <= 0 {
			h.expired = true
			delete(w.holds, h)
			delete(w.live, h)
			lost = append(lost, h)
		} else if left < next {
			next = left
		}
	}
	w.mu.Unlock()
	for _, h := range lost {
		h.lose(w.emit, lostOverdue, now.Sub(h.expires))
	}
	return next
}

// close stops the loop, waits for it, and ends every live hold with
// ErrClientClosed, watched or not: nothing renews them any more, and the
// client can no longer release them.
func (w *watchdog) close() {
	w.mu.Lock()
	if !w.loop.stop() {
		w.mu.Unlock()
		return
	}
	holds := w.live // watched holds are live too
	w.holds = make(map[*hold]struct{})
	w.live = make(map[*hold]struct{})
	w.mu.Unlock()
	w.loop.wait()
	for h := range holds {
		h.end(ErrClientClosed)
	}
}

// snapshot returns the number of live holds (watched or ended by a lease
// timer) and the duration and script call count of the last renewal pass.
func (w *watchdog) snapshot() (live int, pass time.Duration, calls int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.live), w.lastPass, w.lastCalls
}
