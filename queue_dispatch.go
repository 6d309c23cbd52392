package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The takers' dispatcher: how BlockingQueue.Take and Poll with a wait
// block without losing an element and without a connection per taker.
//
// Per client and queue there is at most one dispatcher loop, running only
// while local takers wait. Takers queue in an in-process FIFO. The loop
// moves elements from the head of the queue to the tail of the client's
// in-flight list (redisson_queue_inflight:{name}:<client uuid>, the same
// slot): queue_take.lua moves up to one element per waiting taker, and when
// the queue is empty BLMOVE blocks for the next one (Redis wakes it as it
// wakes a BLPOP). Each
// element goes to the oldest taker still waiting; a taker whose context
// ended is skipped. Then queue_settle.lua ends the hand-over in one script:
// the elements handed over leave the in-flight list, the others go back
// to the head of the queue in their order. Only once Redis confirmed it
// does a taker get its element.
//
// Why nothing is lost: an element is in the queue, or in the in-flight
// list, or handed to a taker whose settle Redis confirmed. A move whose
// reply was lost (a dropped connection, go-redis resending the BLMOVE)
// leaves elements in the in-flight list that the loop does not know of;
// the loop then settles with nothing handed over, which puts them all
// back, before it moves anything else. go-redis may resend silently: a
// resent BLMOVE that times out reports nothing, so the loop settles after
// every BLMOVE that timed out too. Settle is idempotent (a resend finds
// no list), and the loop retries it until Redis confirms it; so the list
// holds one hand-over at a time, and an element is handed over once.
//
// Why a dead client loses nothing either: every queue_take (each loop
// iteration runs one before its BLMOVE, and every Drain one) first
// registers its in-flight list in the queue's registry
// redisson_queue_inflight:{name}, a zset of in-flight list keys scored with
// a server-time deadline (now + inflightLease), and every settle removes it.
// So a list that may hold elements is registered, with a deadline at least
// inflightLease - takeBlock ahead while its loop is alive. Every queue_take,
// of any client, first looks for one registration whose deadline passed
// (ZRANGEBYSCORE ... LIMIT 0 1): its client died between a move and its
// settle, and the list goes back to the head of the queue in its order
// before this take moves anything. A live loop whose settle could not reach
// Redis for longer than the lease may find its list put back by another
// client, which marks it so (recovered:<list key> in the registry): its
// settle then finds the mark (-1), and the takers it had claimed get an
// error instead of elements that went back to the queue. Only if that
// settle's reply is lost too, and its resend finds neither list nor mark,
// are those elements delivered twice.
//
// Connections: one loop per queue with waiting takers, each using one
// pool connection while it blocks (BLMOVE with a 1 s timeout, so that a
// loop without takers ends within a second), however many takers wait.

// takeBlock is how long one BLMOVE of a dispatcher loop blocks.
const takeBlock = time.Second

// takeBatch bounds how many elements one queue_take moves.
const takeBatch = 256

// inflightLease is how long a registration in a queue's registry of
// in-flight lists lasts past the move or loop iteration that made it:
// past it, any client's take puts the list back in the queue. It is 30 s,
// Redisson's lock watchdog timeout: far beyond one iteration (takeBlock
// plus a settle) of a live loop.
const inflightLease = 30 * time.Second

// errHandOverExpired: a settle found its in-flight list put back in the
// queue by another client (its registration had expired).
var errHandOverExpired = errors.New("hand-over expired: the in-flight elements went back to the queue")

// queueSpec says how a dispatcher takes from one queue.
type queueSpec struct {
	kind     string // queue kind, in errors
	name     string
	inflight string
	registry string // the queue's registry of in-flight lists
	capKey   string // bounded queues: the free-capacity counter, else ""
	channel  string // bounded queues: its channel
	tail     bool   // takes from the tail (BlockingDeque's last end); inflight ends in ":last"
}

// dispatchKey names sp's dispatcher among the client's: one per in-flight
// list, so that two loops never share one (a BlockingQueue and a
// BlockingDeque's head takers of one name share the loop; a bounded
// queue's and a deque's tail takers have lists of their own).
func (sp queueSpec) dispatchKey() string { return sp.inflight }

// taker is one waiting call; it may wait on several queues (PollFromAny),
// and the first dispatcher to claim it serves it.
type taker struct {
	state atomic.Int32 // takerWaiting, takerClaimed, takerGone
	got   chan delivery
}

const (
	takerWaiting int32 = iota
	takerClaimed
	takerGone
)

// delivery is what a claimed taker receives: an element of queue from, or
// the error that ended the wait.
type delivery struct {
	val  []byte
	from string
	err  error
}

// dispatcher is one queue's FIFO of waiting takers; running while its loop
// is.
type dispatcher struct {
	spec    queueSpec
	takers  []*taker
	running bool
}

// queueService owns the dispatcher loops of one client: each is a
// goroutine of loops, spawned by the first taker of its queue (again after
// it ended), so not started once like a service's single loop.
type queueService struct {
	rdb     redis.UniversalClient
	scripts *scripts
	pubsub  *pubsubService
	emit    *emitter
	cleanup time.Duration // CleanupTimeout: how long a settle may outlive close
	lease   time.Duration // inflightLease (tests shorten it)
	mu      sync.Mutex
	ds      map[string]*dispatcher
	loops   *lazyLoop // the dispatcher loops; stopped by close
}

func newQueueService(rdb redis.UniversalClient, s *scripts, ps *pubsubService, em *emitter, cleanup time.Duration) *queueService {
	return &queueService{rdb: rdb, scripts: s, pubsub: ps, emit: em, cleanup: cleanup,
		lease: inflightLease, ds: map[string]*dispatcher{}, loops: newLazyLoop()}
}

// close stops every loop and waits for them (a loop blocked in BLMOVE
// returns within takeBlock, then puts back what it may hold).
func (s *queueService) close() { s.loops.close() }

// take waits for an element of any of specs, for at most wait (< 0: until
// ctx ends). It returns the element and its queue's name, ok false when the
// wait ran out, or the error that ended it: ctx's, ErrClientClosed, or one
// a Redis reply gave the loop (ErrWrongType).
func (s *queueService) take(ctx context.Context, specs []queueSpec, wait time.Duration) (delivery, bool, error) {
	t := &taker{got: make(chan delivery, 1)}
	s.mu.Lock()
	if s.loops.isStopped() {
		s.mu.Unlock()
		return delivery{}, false, ErrClientClosed
	}
	for _, sp := range specs {
		key := sp.dispatchKey()
		d := s.ds[key]
		if d == nil {
			d = &dispatcher{spec: sp}
			s.ds[key] = d
		}
		d.takers = append(d.takers, t)
		if !d.running {
			// Not started when Close came meanwhile: the wait below
			// ends with ErrClientClosed.
			d.running = s.loops.spawn(func(ctx context.Context) { s.run(ctx, key, d) })
		}
	}
	s.mu.Unlock()
	var expired <-chan time.Time
	if wait >= 0 {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		expired = timer.C
	}
	var err error
	select {
	case r := <-t.got:
		return r, r.err == nil, r.err
	case <-ctx.Done():
		err = ctx.Err()
	case <-expired:
	case <-s.loops.done():
		err = ErrClientClosed
	}
	if !t.state.CompareAndSwap(takerWaiting, takerGone) {
		// A loop claimed it meanwhile: its element is on the way (once
		// Redis confirmed the hand-over), and is this call's.
		r := <-t.got
		return r, r.err == nil, r.err
	}
	return delivery{}, false, err
}

// run is the loop of one dispatcher; it ends when no taker waits or ctx
// (the service's stop signal) ends.
func (s *queueService) run(ctx context.Context, key string, d *dispatcher) {
	dirty := true // the in-flight list may hold elements: settle first
	for {
		if dirty {
			switch err := s.settle(ctx, d.spec, nil); {
			case errors.Is(err, ErrClientClosed):
				s.waiting(key, d, true)
				return
			case err != nil:
				s.fail(d, err)
			}
			dirty = false
		}
		n := s.waiting(key, d, ctx.Err() != nil)
		if n == 0 {
			return
		}
		vals, err := s.fetch(ctx, d.spec, n)
		if err != nil {
			// Settle before the loop goes on or ends: the move may have
			// run, and even a BLMOVE Redis refused came after queue_take
			// registered the list.
			dirty = true
			if !mayHaveRun(err) {
				// Redis refused (a key of another type): nothing moved;
				// every waiting taker hears it.
				s.fail(d, objectErr(d.spec.kind, d.spec.name, err))
				continue
			}
			s.pause(ctx)
			continue
		}
		if len(vals) == 0 {
			// A BLMOVE that timed out may be go-redis's resend of one
			// whose reply (an element) was lost: settle before going on,
			// so that element goes back to the queue (one round trip per
			// idle takeBlock).
			dirty = true
			continue
		}
		claimed := s.claim(d, len(vals))
		handed := make([]any, len(claimed))
		for i := range claimed {
			handed[i] = vals[i]
		}
		var failed error
		switch err := s.settle(ctx, d.spec, handed); {
		case errors.Is(err, errHandOverExpired):
			// Another client put the elements back: none is this loop's.
			failed = objectErr(d.spec.kind, d.spec.name, err)
		case errors.Is(err, ErrClientClosed):
			// Closed before Redis confirmed: the handed elements may
			// have left Redis, so they are delivered all the same (an
			// unconfirmed copy stays in the in-flight list).
			s.emit.emit(Event{Type: EventQueueUnconfirmed, Kind: d.spec.kind, Name: d.spec.name, Count: len(claimed),
				Err: objectErrorf(d.spec.kind, d.spec.name, "%w: a copy of the elements may stay in %q", err, d.spec.inflight)})
		case err != nil:
			failed, dirty = err, true // refused: the elements stay in flight
		}
		for i, t := range claimed {
			t.got <- delivery{val: []byte(vals[i]), from: d.spec.name, err: failed}
		}
	}
}

// waiting prunes the takers that left and returns how many still wait;
// when none does, or stop is set, the loop ends: its dispatcher is dropped
// (a taker arriving later starts a new one).
func (s *queueService) waiting(key string, d *dispatcher, stop bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	live := d.takers[:0]
	for _, t := range d.takers {
		if t.state.Load() == takerWaiting {
			live = append(live, t)
		}
	}
	clear(d.takers[len(live):])
	d.takers = live
	if len(live) == 0 || stop {
		d.running = false
		if s.ds[key] == d {
			delete(s.ds, key)
		}
		return 0
	}
	return len(live)
}

// claim takes up to n waiting takers, oldest first, off the FIFO.
func (s *queueService) claim(d *dispatcher, n int) []*taker {
	s.mu.Lock()
	defer s.mu.Unlock()
	var claimed []*taker
	i := 0
	for ; i < len(d.takers) && len(claimed) < n; i++ {
		if t := d.takers[i]; t.state.CompareAndSwap(takerWaiting, takerClaimed) {
			claimed = append(claimed, t)
		}
	}
	rest := copy(d.takers, d.takers[i:])
	clear(d.takers[rest:])
	d.takers = d.takers[:rest]
	return claimed
}

// fail ends every waiting taker of d with err.
func (s *queueService) fail(d *dispatcher, err error) {
	for _, t := range s.claim(d, int(^uint(0)>>1)) {
		t.got <- delivery{err: err}
	}
}

// fetch moves elements to the in-flight list: up to n (bounded by
// takeBatch) at once when they are there, otherwise one with BLMOVE. The
// script registers the list first (and recovers a dead client's), so the
// BLMOVE never fills an unregistered list.
func (s *queueService) fetch(ctx context.Context, sp queueSpec, n int) ([]string, error) {
	vals, err := s.moveScript(ctx, sp, min(n, takeBatch))
	if err != nil || len(vals) > 0 {
		return vals, err
	}
	from := "LEFT"
	if sp.tail {
		from = "RIGHT"
	}
	v, err := s.rdb.BLMove(ctx, sp.name, sp.inflight, from, "RIGHT", takeBlock).Result()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, nil
	case err != nil:
		return nil, err
	}
	return []string{v}, nil
}

// moveScript runs queue_take: it registers sp's in-flight list (after
// putting back one expired list, if any) and moves up to n elements into it.
func (s *queueService) moveScript(ctx context.Context, sp queueSpec, n int) ([]string, error) {
	return s.scripts.run(ctx, scriptQueueTake, []string{sp.name, sp.inflight, sp.registry}, n, s.lease.Milliseconds()).StringSlice()
}

// settleKeys are queue_settle's keys for sp.
func settleKeys(sp queueSpec) []string {
	keys := []string{sp.name, sp.inflight, sp.registry}
	if sp.capKey != "" {
		keys = append(keys, sp.capKey, sp.channel)
	}
	return keys
}

// settle ends a hand-over in Redis (queue_settle.lua), retrying until Redis
// confirms it. It returns ErrClientClosed if the client closed first (stop,
// the service's stop signal, ended; settle tries for CleanupTimeout more), errHandOverExpired when it found
// the list put back by another client, or the error of a refusal
// (the in-flight list is then unchanged).
func (s *queueService) settle(stop context.Context, sp queueSpec, handed []any) error {
	keys := settleKeys(sp)
	var giveUp time.Time
	for backoff := 10 * time.Millisecond; ; backoff = min(2*backoff, time.Second) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), s.cleanup)
		args := append([]any{s.pubsub.publishArg(ctx)}, handed...)
		n, err := s.scripts.run(ctx, scriptQueueSettle, keys, args...).Int64()
		cancel()
		switch {
		case err == nil && n < 0:
			return errHandOverExpired
		case err == nil:
			return nil
		case !mayHaveRun(err):
			return objectErr(sp.kind, sp.name, err)
		}
		if stop.Err() != nil {
			if giveUp.IsZero() {
				giveUp = time.Now().Add(s.cleanup)
			} else if time.Now().After(giveUp) {
				return ErrClientClosed
			}
		}
		time.Sleep(backoff)
	}
}

// pause waits a little after a failed call, or until ctx ends.
func (s *queueService) pause(ctx context.Context) {
	t := time.NewTimer(50 * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// inflightKey is the client's in-flight list of queue name; a bounded
// queue's takers (a dispatcher of their own, which gives capacity back)
// have another, so that two loops never share one list.
func inflightKey(clientID, name string, bounded bool) string {
	if bounded {
		return prefixName("redisson_bqueue_inflight", name) + ":" + clientID
	}
	return prefixName("redisson_queue_inflight", name) + ":" + clientID
}

// lastInflightKey is the client's in-flight list of a deque's tail takers;
// the scripts put its elements back at the tail by its ":last" suffix.
func lastInflightKey(clientID, name string) string {
	return inflightKey(clientID, name, false) + ":last"
}

// registryKey is queue name's registry of in-flight lists, shared by the
// lists of every client, kind and Drain call.
func registryKey(name string) string { return prefixName("redisson_queue_inflight", name) }

// boundedCapKey is Redisson's free-capacity counter of a bounded queue.
func boundedCapKey(name string) string { return prefixName("redisson_bqs", name) }

// boundedChannel is the counter's channel, redisson_sc:redisson_bqs:{name}.
func boundedChannel(name string) string { return prefixName("redisson_sc", boundedCapKey(name)) }

// drainKey is the in-flight list of one Drain call, call of the client
// clientID.
func drainKey(clientID, name, call string) string {
	return prefixName("redisson_queue_drain", name) + ":" + clientID + ":" + call
}
