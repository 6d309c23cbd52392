package scripting

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// autoPipe writes the script calls of goroutines sharing a Runner as one
// go-redis pipeline when they queue up, so that N calls cost one write and
// one read on each side instead of N (Config.Lanes; the root package turns
// it off with Options.DisableAutoPipeline, and on Cluster).
//
// A call goes straight out, as a plain command, while fewer than lanes sends
// (plain commands or pipelines) are in flight: a lone call is never delayed,
// and no timer or goroutine is involved. Beyond that it queues. Whoever ends
// a send hands its lane to the queue: a goroutine takes every call queued so
// far (at most maxAutoBatch), sends them in one pipeline, hands each its
// reply, and goes on with what queued meanwhile until the queue is empty;
// then it ends. It writes commands of its own for the members, so a caller
// never shares a command with a send it left.
//
// Nothing closes the queue (the Runner has no Close, and Client.Close
// leaves it alone): a queued call has passed its object's closed check and
// is in flight for its caller, as a plain command being written is, and
// goes out with the next lane that frees (within the sends in flight's
// round trips or go-redis's timeouts). Failing it instead
// would skip the clean-ups that must outlive Close: a compensation queued
// as a shutdown cancels its acquire would leave a permit taken for good.
//
// A call whose context ends before its batch is written is never sent
// (NotSentError: Redis untouched, nothing to undo). Once written, its
// caller still returns when its context ends, with the context's error (it
// may have run), as a plain command returns when its deadline passes
// mid-read: no caller waits on another's deadline. The pipeline's context
// has no member's cancellation (context.WithoutCancel of its oldest
// member's) and the latest of the members' deadlines, or none when one has
// none. Each member's reply, or error, is its own command's: go-redis reads
// a pipeline's replies into their commands, and a resend after a network
// error resends the whole pipeline, each script recognising its own resend
// as it does for a plain command.
//
// autoPipe is safe for concurrent use.
type autoPipe struct {
	rdb   redis.UniversalClient // sends the pipelines
	one   redis.UniversalClient // sends a call alone: rdb, or on Cluster the Cluster client
	lanes int                   // sends in flight before calls queue

	mu    sync.Mutex
	busy  int           // sends in flight (plain commands and pipelines)
	queue []*queuedCall // calls waiting for a lane, oldest first

	batches sync.Pool // *autoBatch, each with a pipeline of rdb's

	pipelines atomic.Uint64 // pipelines sent (see stats)
	batched   atomic.Uint64 // calls sent in them
}

// maxAutoBatch bounds one pipeline: a longer queue leaves the rest for the
// next lane, so that no batch holds Redis's event loop for long.
const maxAutoBatch = 128

func newAutoPipe(rdb redis.UniversalClient, lanes int) *autoPipe {
	return &autoPipe{rdb: rdb, one: rdb, lanes: lanes}
}

// queuedCall is one queued call. Its state says who may touch it: while
// callWaiting or callSending its sender owns the reply; whoever moves it to
// callDone (the sender, with the reply) or callDetached (its caller, at the
// end of its context) decides. wake receives one value once the sender has
// put the call's outcome in cmd (callDone).
type queuedCall struct {
	ctx    context.Context
	cmd    *redis.Cmd // the caller's; the sender writes it only on callDone
	keyed  bool       // cmd names keys: routed by its first key (Cluster)
	wake   chan struct{}
	state  atomic.Int32
	queued bool // under autoPipe.mu: still in the queue
}

const (
	callWaiting  int32 = iota // queued, or taken into a batch not yet written
	callSending               // in a batch being written or awaiting replies
	callDone                  // its outcome is in cmd, and wake has a value
	callDetached              // its caller returned at the end of its context
)

// autoBatch is the calls one send carries, the commands it writes for them
// (its own, so that a caller that returned early shares nothing with it),
// and the pipeline it reuses.
type autoBatch struct {
	members []*queuedCall
	cmds    []redis.Cmder
	pipe    redis.Pipeliner // empty between sends
}

var callPool = sync.Pool{New: func() any { return &queuedCall{wake: make(chan struct{}, 1)} }}

// process runs cmd, a command of the Runner's, and leaves its result
// in it: at once when a lane is free, else in a pipeline with the calls
// queued beside it. keyed says cmd names keys (EVALSHA with numkeys > 0).
//
// A call whose ctx ends while queued, or taken into a batch not yet
// written, gets NotSentError: it is never sent. One whose ctx ends while its
// batch is written or awaits its replies returns at once with ctx's error,
// like a plain command whose deadline passes in flight: it may have run.
func (a *autoPipe) process(ctx context.Context, cmd *redis.Cmd, keyed bool) {
	a.mu.Lock()
	if a.busy < a.lanes {
		a.busy++
		a.mu.Unlock()
		defer a.release()
		_ = a.one.Process(ctx, cmd)
		return
	}
	p := callPool.Get().(*queuedCall)
	p.ctx, p.cmd, p.keyed, p.queued = ctx, cmd, keyed, true
	p.state.Store(callWaiting)
	a.queue = append(a.queue, p)
	a.mu.Unlock()

	done := ctx.Done()
	if done == nil { // never cancelled: nothing to watch but the wake-up
		<-p.wake
		a.put(p)
		return
	}
	select {
	case <-p.wake:
		a.put(p)
		return
	case <-done:
	}
	a.mu.Lock()
	if p.queued {
		a.remove(p)
		a.mu.Unlock()
		cmd.SetErr(NotSentError{ctx.Err()})
		a.put(p)
		return
	}
	a.mu.Unlock()
	switch {
	case p.state.CompareAndSwap(callWaiting, callDetached):
		// Taken, not yet written: its sender will leave it out.
		cmd.SetErr(NotSentError{ctx.Err()})
	case p.state.CompareAndSwap(callSending, callDetached):
		cmd.SetErr(ctx.Err()) // it may have run
	default: // callDone: the outcome is in cmd, or on its way
		<-p.wake
		a.put(p)
	}
	// Detached: the record is its sender's to recycle.
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

// release ends a send: its lane goes to the oldest queued calls, sent as a
// batch by a goroutine that keeps the lane while calls queue, or is freed
// when none waits.
func (a *autoPipe) release() {
	a.mu.Lock()
	if len(a.queue) == 0 {
		a.busy--
		a.mu.Unlock()
		return
	}
	b := a.takeBatch()
	a.mu.Unlock()
	go a.sendLoop(b)
}

// sendLoop sends batch b, then the batches that queued meanwhile, on the
// lane b came with, and frees it when the queue is empty. It runs on a
// goroutine of its own so that no caller waits for more than its own call
// and each can return at the end of its context.
func (a *autoPipe) sendLoop(b *autoBatch) {
	for {
		a.send(b)
		a.mu.Lock()
		if len(a.queue) == 0 {
			a.busy--
			a.mu.Unlock()
			return
		}
		b = a.takeBatch()
		a.mu.Unlock()
	}
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

// send writes b's live members' commands, one alone as a plain command, more
// as one pipeline, and hands each member still waiting its outcome. A member
// whose context has ended is not written.
func (a *autoPipe) send(b *autoBatch) {
	defer a.putBatch(b)
	live := b.members[:0]
	for _, p := range b.members {
		if err := p.ctx.Err(); err != nil {
			if p.state.CompareAndSwap(callWaiting, callDone) {
				p.cmd.SetErr(NotSentError{err})
				p.wake <- struct{}{}
			} else {
				a.put(p) // detached
			}
			continue
		}
		if !p.state.CompareAndSwap(callWaiting, callSending) {
			a.put(p) // detached: its caller left before the write
			continue
		}
		live = append(live, p)
	}
	clear(b.members[len(live):])
	b.members = live
	if len(live) == 0 {
		return
	}
	ctx, cancel := batchContext(live[0].ctx, live)
	if cancel != nil {
		defer cancel()
	}
	for _, p := range live {
		c := redis.NewCmd(ctx, p.cmd.Args()...)
		if p.keyed {
			c.SetFirstKeyPos(3) // as EvalSha: routed by its first key
		}
		b.cmds = append(b.cmds, c)
	}
	a.write(ctx, b)
	for i, p := range live {
		c := b.cmds[i].(*redis.Cmd)
		if !p.state.CompareAndSwap(callSending, callDone) {
			a.put(p) // its caller returned at the end of its context
			continue
		}
		if err := c.Err(); err != nil {
			p.cmd.SetErr(err)
		} else {
			p.cmd.SetVal(c.Val())
		}
		p.wake <- struct{}{}
	}
}

// write sends b's commands. A panic in a go-redis hook is recovered, on
// this goroutine no caller could recover it on, as errAutoPipePanic for
// every command: they may have run.
func (a *autoPipe) write(ctx context.Context, b *autoBatch) {
	defer func() {
		if r := recover(); r != nil {
			for _, c := range b.cmds {
				c.SetErr(fmt.Errorf("%w: %v", errAutoPipePanic, r))
			}
			b.pipe = nil // its state is unknown
		}
	}()
	if len(b.cmds) == 1 {
		_ = a.one.Process(ctx, b.cmds[0])
		return
	}
	a.pipelines.Add(1)
	a.batched.Add(uint64(len(b.cmds)))
	if b.pipe == nil {
		b.pipe = a.rdb.Pipeline()
	}
	_ = b.pipe.BatchProcess(ctx, b.cmds...)
	_, _ = b.pipe.Exec(ctx) // each command has its own reply or error
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
