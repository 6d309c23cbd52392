package redisson

import (
	"context"
	"strconv"
	"sync"
	"time"
)

// delayBatch is the most elements one transfer call moves; a call that
// moves a full batch is followed at once by another.
const delayBatch = 100

// delayCallTimeout bounds one transfer call of the mover.
const delayCallTimeout = 5 * time.Second

// delayRetry is the first wait after a failed transfer call; it doubles
// after each failure in a row, up to delayRetryMax.
const (
	delayRetry    = 50 * time.Millisecond
	delayRetryMax = 2 * time.Second
)

// delayMover is the client's service that moves the due elements of its
// running delayed queues into their destinations. It runs one goroutine per
// queue (per destination), shared by every handle of that queue that runs
// it (reference-counted), started by the first and stopped by the last
// handle's Destroy, or by close (Client.Close), which cancels and then
// waits for them all (each run is a goroutine of the mover's lazyLoop). The goroutine listens on the queue's channel through
// the client's shared pub/sub service and keeps one timer, armed at the
// earliest due time it knows.
//
// Locking: mu guards runs, the counters and every run's refs; the
// rest of a run is immutable or belongs to its goroutine (mover).
type delayMover struct {
	scripts *scripts
	pubsub  *pubsubService
	emit    *emitter
	loop    *lazyLoop // the runs' goroutines; stopped by close

	mu     sync.Mutex
	runs   map[string]*delayRun
	calls  int // transfer calls made, see stats
	moved  int // elements moved, see stats
	failed int // transfer calls failed, see stats
}

// delayRun is one running queue of the mover.
type delayRun struct {
	m       *delayMover
	keys    []string // destination, timeout zset, pending list
	channel string
	refs    int           // handles running it; guarded by m.mu
	stop    chan struct{} // closed when the last handle leaves
	started chan struct{} // closed after the first transfer since Redis confirmed the subscription
}

func newDelayMover(s *scripts, p *pubsubService, em *emitter) *delayMover {
	return &delayMover{scripts: s, pubsub: p, emit: em, loop: newLazyLoop(), runs: make(map[string]*delayRun)}
}

// acquire takes one reference to the run of the queue with keys k, starting
// it when it is the first.
func (m *delayMover) acquire(k delayKeys) (*delayRun, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.loop.isStopped() {
		return nil, ErrClientClosed
	}
	r := m.runs[k.dest]
	if r == nil {
		r = &delayRun{m: m, keys: []string{k.dest, k.timeout, k.list}, channel: k.channel,
			stop: make(chan struct{}), started: make(chan struct{})}
		if !m.loop.spawn(r.loop) {
			return nil, ErrClientClosed
		}
		m.runs[k.dest] = r
	}
	r.refs++
	return r, nil
}

// release gives back a reference taken by acquire; the last one stops the
// run (without waiting for it: close waits).
func (m *delayMover) release(r *delayRun) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r.refs--
	if r.refs == 0 {
		close(r.stop)
		if m.runs[r.keys[0]] == r {
			delete(m.runs, r.keys[0])
		}
	}
}

// close stops every run, cancelling a transfer call in flight (which, being
// one script, either ran whole on the server or not at all), and waits for
// their goroutines.
func (m *delayMover) close() {
	m.loop.close()
	m.mu.Lock()
	clear(m.runs)
	m.mu.Unlock()
}

func (m *delayMover) count(moved int, err error) {
	m.mu.Lock()
	m.calls++
	m.moved += moved
	if err != nil {
		m.failed++
	}
	m.mu.Unlock()
}

// loop is the run's goroutine. It subscribes the queue's channel, moves
// what is due at once (as Redisson's transfer task does when it starts),
// and then again whenever its timer fires. The timer is armed at the
// earliest due time known: the one each transfer call returns, or an
// earlier one published by an offer. After a reconnect of the pub/sub
// connection, or when a message was dropped, it transfers (and so re-reads
// the earliest due time) at once, since a message may have been lost.
func (r *delayRun) loop(ctx context.Context) {
	startedOnce := sync.OnceFunc(func() { close(r.started) })
	defer startedOnce()
	l := &listener{ch: make(chan string, 64), resubscribed: make(chan struct{}, 1)}
	sub, err := r.m.pubsub.listen(ctx, chanKey{name: r.channel}, l)
	if err != nil {
		return // the client is closing
	}
	defer sub.close()
	ready := sub.confirmed()

	t := mover{run: r, timer: time.NewTimer(time.Hour)}
	t.timer.Stop()
	defer t.timer.Stop()
	t.transfer(ctx)
	var dropped int64
	for {
		select {
		case <-r.stop:
			return
		case <-ctx.Done():
			return
		case <-ready:
			ready = nil
			t.transfer(ctx)
			startedOnce()
		case <-l.resubscribed:
			t.transfer(ctx)
		case p := <-l.ch:
			if n := l.dropped.Load(); n != dropped {
				dropped = n
				t.transfer(ctx)
				continue
			}
			// Redisson publishes the due time in ms of the server's clock.
			if due, err := strconv.ParseInt(p, 10, 64); err == nil {
				t.armEarlier(time.UnixMilli(due).Add(-t.offset))
			}
		case <-t.timer.C:
			t.armed = time.Time{}
			t.transfer(ctx)
		}
	}
}

// mover is the state of a run's goroutine: its timer, the time it is
// armed at (zero when not armed), and the server's clock ahead of the
// local one as last measured.
type mover struct {
	run    *delayRun
	timer  *time.Timer
	armed  time.Time
	offset time.Duration
	retry  time.Duration // the wait after the next failure
}

// transfer moves what is due, a batch per call, until a call moves less
// than a full batch or stop (the mover's stop signal) ends, and arms the
// timer at the earliest due time left. A failed call arms it for a retry
// after a growing back-off, and is reported
// as an EventDelayMoveFailed.
func (t *mover) transfer(stop context.Context) {
	r := t.run
	for {
		if stop.Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(stop, delayCallTimeout)
		sent := time.Now()
		res, err := r.m.scripts.run(ctx, scriptDelayTransfer, r.keys, delayBatch).Int64Slice()
		back := time.Now()
		cancel()
		if err == nil && len(res) != 3 {
			err = ErrUnexpectedReply
		}
		if err != nil {
			r.m.count(0, err)
			if stop.Err() == nil { // not Close cancelling the call
				r.m.emit.emit(Event{Type: EventDelayMoveFailed, Kind: delayQueueKind, Name: r.keys[0],
					Err: objectErr(delayQueueKind, r.keys[0], err)})
			}
			t.retry = min(max(2*t.retry, delayRetry), delayRetryMax)
			t.arm(back.Add(t.retry))
			return
		}
		r.m.count(int(res[0]), nil)
		t.retry = 0
		moved, next, now := res[0], res[1], res[2]
		t.offset = time.UnixMilli(now).Sub(sent.Add(back.Sub(sent) / 2))
		if moved == delayBatch && next >= 0 && next <= now {
			continue // more is due already
		}
		if next < 0 {
			t.disarm()
			return
		}
		// The reply left the server at or after now: waiting next-now from
		// its arrival is never early by the server's clock.
		t.arm(back.Add(time.Duration(next-now) * time.Millisecond))
		return
	}
}

// arm sets the timer to fire at at.
func (t *mover) arm(at time.Time) {
	t.armed = at
	t.timer.Reset(max(time.Until(at), 0))
}

// armEarlier arms the timer at at unless it is armed earlier already.
func (t *mover) armEarlier(at time.Time) {
	if t.armed.IsZero() || at.Before(t.armed) {
		t.arm(at)
	}
}

func (t *mover) disarm() {
	t.armed = time.Time{}
	t.timer.Stop()
}
