package redisson

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// autoPipe writes the script calls of goroutines sharing a Client as one
// go-redis pipeline when they queue up, so that N calls cost one write and
// one read on each side instead of N (Options.DisableAutoPipeline).
//
// A call goes straight out, as a plain command, while fewer than lanes sends
// (plain commands or pipelines) are in flight: a lone call is never delayed,
// and no timer or goroutine is involved. Beyond that it queues. Whoever ends
// a send hands its lane to the queue: the oldest queued call wakes as the
// batch's leader with every call queued so far (at most maxAutoBatch), sends
// them in one pipeline on its own goroutine, and wakes the others with their
// results. No goroutine is owned: every send runs on a caller's goroutine.
//
// Client.Close leaves the queue alone: a queued call has passed its
// object's closed check and is in flight for its caller, as a plain command
// being written is, and goes out with the next lane that frees (within the
// sends in flight's round trips or go-redis's timeouts). Failing it instead
// would skip the clean-ups that must outlive Close: a compensation queued
// as a shutdown cancels its acquire would leave a permit taken for good.
//
// A queued call whose context ends is taken out of the queue and never sent
// (notSentError: Redis untouched, nothing to undo); once in a pipeline it
// waits for its reply, as a plain command would. The pipeline's context has
// no cancellation of any member (context.WithoutCancel of the leader's) and
// the latest of the members' deadlines, or none when one has none. Each
// member's reply, or error, is its own command's: go-redis reads a
// pipeline's replies into their commands, and a resend after a network
// error resends the whole pipeline, each script recognising its own resend
// as it does for a plain command.
//
// autoPipe is safe for concurrent use.
type autoPipe struct {
	rdb   redis.UniversalClient
	lanes int // sends in flight before calls queue

	mu    sync.Mutex
	busy  int           // sends in flight (plain commands and pipelines)
	queue []*queuedCall // calls waiting for a lane, oldest first

	batches sync.Pool // *autoBatch, each with a pipeline of rdb's

	pipelines atomic.Uint64 // pipelines sent (see stats)
	batched   atomic.Uint64 // calls sent in them
}

// autoPipeLanes is the default number of sends in flight before calls
// queue. Chosen by measurement on 2 cores (see the commit that set it).
const autoPipeLanes = 2

// maxAutoBatch bounds one pipeline: a longer queue leaves the rest for the
// next lane, so that no batch holds Redis's event loop for long.
const maxAutoBatch = 128

func newAutoPipe(rdb redis.UniversalClient, lanes int) *autoPipe {
	return &autoPipe{rdb: rdb, lanes: lanes}
}

// queuedCall is one queued call. Its wake channel receives exactly one value
// once the call has left the queue: nil when its command is done (result or
// error set), or a batch for it to lead (see lead).
type queuedCall struct {
	ctx    context.Context
	cmd    *redis.Cmd
	wake   chan *autoBatch
	queued bool // under autoPipe.mu: still in the queue
}

// autoBatch is the calls one send carries, and the pipeline it reuses.
type autoBatch struct {
	members []*queuedCall
	cmds    []redis.Cmder
	pipe    redis.Pipeliner // empty between sends
}

var callPool = sync.Pool{New: func() any { return &queuedCall{wake: make(chan *autoBatch, 1)} }}

// process runs cmd, a command of the script runner's, and leaves its result
// in it: at once when a lane is free, else in a pipeline with the calls
// queued beside it. A call whose ctx ends while queued gets notSentError and
// is never sent.
func (a *autoPipe) process(ctx context.Context, cmd *redis.Cmd) {
	a.mu.Lock()
	if a.busy < a.lanes {
		a.busy++
		a.mu.Unlock()
		defer a.release()
		_ = a.rdb.Process(ctx, cmd)
		return
	}
	p := callPool.Get().(*queuedCall)
	p.ctx, p.cmd, p.queued = ctx, cmd, true
	a.queue = append(a.queue, p)
	a.mu.Unlock()

	var b *autoBatch
	done := ctx.Done()
	if done == nil { // never cancelled: nothing to watch but the wake-up
		b = <-p.wake
		if b != nil {
			a.lead(p, b)
		}
		a.put(p)
		return
	}
	select {
	case b = <-p.wake:
	case <-done:
		a.mu.Lock()
		if p.queued {
			a.remove(p)
			a.mu.Unlock()
			cmd.SetErr(notSentError{ctx.Err()})
			a.put(p)
			return
		}
		a.mu.Unlock()
		b = <-p.wake // taken already: its one wake-up is coming
	}
	if b != nil {
		a.lead(p, b)
	}
	a.put(p)
}

func (a *autoPipe) put(p *queuedCall) {
	p.ctx, p.cmd = nil, nil
	callPool.Put(p)
}

// remove takes p out of the queue; a.mu is held.
func (a *autoPipe) remove(p *queuedCall) {
	for i, q := range a.queue {
		if q == p {
			n := copy(a.queue[i:], a.queue[i+1:])
			a.queue[i+n] = nil
			a.queue = a.queue[:i+n]
			break
		}
	}
	p.queued = false
}

// release ends a send: its lane goes to the oldest queued calls, as a batch
// their first member leads, or is freed when none waits.
func (a *autoPipe) release() {
	a.mu.Lock()
	if len(a.queue) == 0 {
		a.busy--
		a.mu.Unlock()
		return
	}
	b := a.takeBatch()
	a.mu.Unlock()
	b.members[0].wake <- b
}

// takeBatch takes the oldest queued calls, at most maxAutoBatch, out of the
// non-empty queue; a.mu is held.
func (a *autoPipe) takeBatch() *autoBatch {
	b, _ := a.batches.Get().(*autoBatch)
	if b == nil {
		b = &autoBatch{}
	}
	n := min(len(a.queue), maxAutoBatch)
	b.members = append(b.members[:0], a.queue[:n]...)
	for _, p := range b.members {
		p.queued = false
	}
	rest := copy(a.queue, a.queue[n:])
	clear(a.queue[rest:])
	a.queue = a.queue[:rest]
	return b
}

// lead sends batch b, which me was woken to lead, holding the lane it came
// with. Members whose context has ended are not sent; when me is one of
// them, the first live member leads instead.
func (a *autoPipe) lead(me *queuedCall, b *autoBatch) {
	live, meLive := b.members[:0], false
	for _, p := range b.members {
		if err := p.ctx.Err(); err != nil {
			p.cmd.SetErr(notSentError{err})
			if p != me {
				p.wake <- nil
			}
			continue
		}
		meLive = meLive || p == me
		live = append(live, p)
	}
	clear(b.members[len(live):])
	b.members = live
	switch {
	case len(live) == 0:
		a.putBatch(b)
		a.release()
		return
	case !meLive:
		live[0].wake <- b // the lane goes with the batch
		return
	}
	a.send(me, b)
}

// send writes b's commands, one alone as a plain command, more as one
// pipeline, then hands the lane on and wakes every member but me.
func (a *autoPipe) send(me *queuedCall, b *autoBatch) {
	sent := false
	defer func() {
		// Deferred, so that a panicking hook cannot strand the members or
		// the lane, nor leave them a result they did not get.
		a.release()
		for _, p := range b.members {
			if !sent {
				p.cmd.SetErr(errAutoPipePanic)
			}
			if p != me {
				p.wake <- nil
			}
		}
		a.putBatch(b)
	}()
	if len(b.members) == 1 {
		_ = a.rdb.Process(me.ctx, me.cmd)
		sent = true
		return
	}
	ctx, cancel := batchContext(me.ctx, b.members)
	if cancel != nil {
		defer cancel()
	}
	for _, p := range b.members {
		b.cmds = append(b.cmds, p.cmd)
	}
	a.pipelines.Add(1)
	a.batched.Add(uint64(len(b.cmds)))
	if b.pipe == nil {
		b.pipe = a.rdb.Pipeline()
	}
	_ = b.pipe.BatchProcess(ctx, b.cmds...)
	_, _ = b.pipe.Exec(ctx) // each command has its own reply or error
	sent = true
}

// errAutoPipePanic is the error of the members of a batch whose send
// panicked (in a go-redis hook): the call may have run.
var errAutoPipePanic = errors.New("redisson: script call's pipeline panicked")

func (a *autoPipe) putBatch(b *autoBatch) {
	clear(b.members)
	clear(b.cmds)
	b.members, b.cmds = b.members[:0], b.cmds[:0]
	a.batches.Put(b)
}

// batchContext is the context a pipeline of members is sent with: lead's
// values without its cancellation, bounded by the latest of the members'
// deadlines, or by none when one has none (as that member's own command
// would be). cancel is nil when there is no deadline.
func batchContext(lead context.Context, members []*queuedCall) (context.Context, context.CancelFunc) {
	var latest time.Time
	for _, p := range members {
		d, ok := p.ctx.Deadline()
		if !ok {
			if lead.Done() == nil {
				return lead, nil // never cancelled: as it is
			}
			return context.WithoutCancel(lead), nil
		}
		if d.After(latest) {
			latest = d
		}
	}
	return context.WithDeadline(context.WithoutCancel(lead), latest)
}

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
