package redisson

import (
	"context"
	"errors"
	"time"
)

const blockingQueueKind = "blocking queue"

// BlockingQueue is a Queue whose takers wait for elements, wire-compatible
// with Redisson's RBlockingQueue: the same plain list at the queue's name
// (Offer is RPUSH, Poll(ctx, 0) LPOP, Peek LINDEX 0), so an Offer by a Java
// client wakes a Go Take and an Offer by Go wakes Java's BLPOP takers.
//
// Nothing is lost. Take and Poll with a wait never consume an element that
// nobody receives, whether their context ends, their wait runs out, their
// connection drops mid-reply or go-redis resends the blocking command.
// Takers of one client wait in an in-process FIFO, and one dispatcher loop
// per queue and client, running only while takers wait, moves elements
// from the head of the queue to the client's in-flight list
// redisson_queue_inflight:{name}:<client uuid> (a script moving up to one
// element per waiting taker; BLMOVE when the queue is empty) and hands each to
// the oldest taker still waiting. One script then removes the handed
// elements from the in-flight list and puts any other back at the head of
// the queue, in order; a taker gets its element only once Redis confirmed
// that. After a failed or unanswered move the loop first puts everything
// in flight back. So every element is in the queue, in flight, or received
// exactly once. An element reaches a taker whose context ended at that very
// moment only if it was already handed over: the call then returns it.
// Within one client takers are served in arrival order; across clients (and
// Java's BLPOP takers) in the order Redis serves blocked clients.
//
// Connections: blocked takers use one pool connection per queue and
// client, however many of them wait (the loop's BLMOVE blocks for at most
// a second at a time), so they never starve the client's pool. A Take
// keeps waiting across connection failures (the loop retries with
// back-off); bound it with ctx. Close ends every waiting take with
// ErrClientClosed at once and waits for the loops (up to about a second).
// When a client's process dies, or Redis stays unreachable until Close, in
// the instant between a move and its hand-over, the elements stay in that
// client's in-flight list, which every move registers for 30 s in the
// queue's registry redisson_queue_inflight:{name} (a zset; a settle removes
// it). Once that deadline passed, the next take of any client (Take, Poll
// with a wait, Drain) puts the list back at the head of the queue in its
// order, so its elements are delivered next, exactly once. A live client
// cut off from Redis for longer than that learns at its settle that its
// elements went back: the takers it had claimed get an error instead
// (docs/guarantees.md, "Queues: nothing lost").
//
// Under a failover the queue has the guarantees of the list it is. The
// non-blocking Poll(ctx, 0), Offer and Drain are as in Queue; Drain moves
// through an in-flight list of its own and loses nothing either.
//
// A BlockingQueue is safe for concurrent use; its takers' state lives in
// its Client.
type BlockingQueue[T any] struct {
	Queue[T]
	spec queueSpec
}

// GetBlockingQueue returns the blocking queue called name, of elements of
// type T. It does no I/O. opts may give it its own codec (WithCodec). An
// empty name makes every method return ErrEmptyName.
func GetBlockingQueue[T any](c *Client, name string, opts ...ObjectOption) *BlockingQueue[T] {
	inflight := inflightKey(c.id, name, false)
	return &BlockingQueue[T]{
		Queue: newQueue[T](c, blockingQueueKind, name, opts, inflight, registryKey(name)),
		spec:  queueSpec{kind: blockingQueueKind, name: name, inflight: inflight, registry: registryKey(name)},
	}
}

// specFor is the dispatcher spec of another queue of the same kind.
func (q *BlockingQueue[T]) specFor(name string) queueSpec {
	sp := queueSpec{kind: q.spec.kind, name: name, inflight: inflightKey(q.c.id, name, q.spec.capKey != ""), registry: registryKey(name)}
	if q.spec.capKey != "" {
		sp.capKey = boundedCapKey(name)
		sp.channel = boundedChannel(name)
	}
	return sp
}

// Take removes and returns the head, waiting until there is one or ctx
// ends (Redisson's take). It returns ctx.Err() (wrapped) when ctx ends
// first, having taken nothing; ErrCodec when the element taken does not
// decode (it is consumed); ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise. See BlockingQueue for why no
// element is lost.
func (q *BlockingQueue[T]) Take(ctx context.Context) (_ T, err error) {
	ctx, rec := q.begin(ctx, opQueueTake)
	defer func() { rec.end(err, OutcomeOK) }()
	v, _, err := q.wait(ctx, -1, []queueSpec{q.spec})
	return v, err
}

// Poll removes and returns the head and true, waiting at most timeout for
// one (Redisson's poll(timeout)); false when the wait ran out. Poll(ctx, 0)
// does not wait: one LPOP, as Queue.Poll. It returns ErrNegativeDuration for
// a negative timeout; the errors of Take otherwise.
func (q *BlockingQueue[T]) Poll(ctx context.Context, timeout time.Duration) (_ T, ok bool, err error) {
	ctx, rec := q.begin(ctx, takeOp(timeout))
	defer func() { rec.end(err, takeOutcome(timeout, ok)) }()
	return q.poll(ctx, timeout, q.spec)
}

// takeOp is the operation of a Poll with timeout: a take when it waits.
func takeOp(timeout time.Duration) string {
	if timeout > 0 {
		return opQueueTake
	}
	return opQueuePoll
}

// takeOutcome is the outcome of a Poll that returned no error: a wait that
// ran out timed out.
func takeOutcome(timeout time.Duration, ok bool) Outcome {
	if timeout > 0 && !ok {
		return OutcomeTimedOut
	}
	return OutcomeOK
}

// poll is Poll at the end sp takes from.
func (q *BlockingQueue[T]) poll(ctx context.Context, timeout time.Duration, sp queueSpec) (T, bool, error) {
	var zero T
	if err := q.check(); err != nil {
		return zero, false, err
	}
	if timeout < 0 {
		return zero, false, objectErrorf(q.kind, q.name, "%w: timeout %v", ErrNegativeDuration, timeout)
	}
	if timeout == 0 {
		return q.element(q.pollNow(ctx, sp))
	}
	return q.wait(ctx, timeout, []queueSpec{sp})
}

// PollFromAny removes and returns the head of this queue or of the queues
// named others, whichever has one first, waiting at most timeout
// (Redisson's pollFromAny); false when the wait ran out. Elements of others
// are decoded with this queue's codec. With timeout 0 it polls each queue
// once, this one first. Each queue is taken from by its own dispatcher
// loop, so the queues may live in different cluster slots (Redisson's
// single BLPOP needs them in one slot: give them a common {tag} to share
// it with Java). It returns ErrNegativeDuration for a negative timeout,
// ErrEmptyName or ErrInvalidName for a bad name among others; the errors of
// Take otherwise.
func (q *BlockingQueue[T]) PollFromAny(ctx context.Context, timeout time.Duration, others ...string) (_ T, ok bool, err error) {
	ctx, rec, err := q.open(ctx, takeOp(timeout))
	defer func() { rec.end(err, takeOutcome(timeout, ok)) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	specs := []queueSpec{q.spec}
	for _, name := range others {
		sp := q.specFor(name)
		if err := q.c.checkObject(name, q.c.nameError(q.kind, name, sp.inflight)); err != nil {
			return zero, false, err
		}
		specs = append(specs, sp)
	}
	if timeout < 0 {
		return zero, false, objectErrorf(q.kind, q.name, "%w: timeout %v", ErrNegativeDuration, timeout)
	}
	if timeout == 0 {
		for _, sp := range specs {
			if v, ok, err := q.element(q.pollNow(ctx, sp)); err != nil || ok {
				return v, ok, objectErr(sp.kind, sp.name, err)
			}
		}
		return zero, false, nil
	}
	return q.wait(ctx, timeout, specs)
}

// pollNow takes the head of sp's queue without waiting.
func (q *BlockingQueue[T]) pollNow(ctx context.Context, sp queueSpec) (string, error) {
	switch {
	case sp.tail:
		q.c.trip(ctx, 1)
		return q.c.rdb.RPop(ctx, sp.name).Result()
	case sp.capKey == "":
		q.c.trip(ctx, 1) // scripts count their own
		return q.c.rdb.LPop(ctx, sp.name).Result()
	}
	return q.c.scripts.run(ctx, scriptBQueuePoll, []string{sp.name, sp.capKey, sp.channel}, q.c.pubsub.publishArg(ctx)).Text()
}

// wait takes through the client's dispatcher (wait < 0: until ctx ends).
func (q *BlockingQueue[T]) wait(ctx context.Context, wait time.Duration, specs []queueSpec) (T, bool, error) {
	var zero T
	if err := q.check(); err != nil {
		return zero, false, err
	}
	if err := ctx.Err(); err != nil {
		return zero, false, objectErrorf(q.kind, q.name, "%w", err)
	}
	t0 := q.c.blockStart()
	d, ok, err := q.c.queues.take(ctx, specs, wait)
	q.c.blockEnd(ctx, t0)
	switch {
	case errors.Is(err, ErrClientClosed):
		return zero, false, ErrClientClosed
	case err != nil:
		return zero, false, objectErr(q.kind, q.name, err)
	case !ok:
		return zero, false, nil
	}
	v, err := decodeValue[T](q.codec, q.object, d.val)
	if err != nil {
		return zero, false, err
	}
	return v, true, nil
}

// Drain removes and returns up to max elements from the head, in order,
// without waiting (Redisson's drainTo); an empty slice when the queue is
// empty. The elements move through an in-flight list of the call's own
// (redisson_queue_drain:{name}:<client uuid>:<n>) that is deleted once the
// call has them, so a lost reply puts them back instead of losing them.
// It returns ErrInvalidBatch for max < 1; ErrCodec when an element does not
// decode (all are consumed); ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (q *BlockingQueue[T]) Drain(ctx context.Context, max int) (_ []T, err error) {
	ctx, rec, err := q.open(ctx, opQueueDrain)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if max < 1 {
		return nil, objectErr(q.kind, q.name, invalidOption(ErrInvalidBatch, "max", max, "at least 1"))
	}
	sp := q.spec
	sp.inflight = drainKey(q.c.id, q.name, q.c.newRequest())
	vals, err := q.c.queues.moveScript(ctx, sp, max)
	if err != nil && !mayHaveRun(err) {
		return nil, q.wrap(err) // refused: nothing moved
	}
	var handed []any // after an unknown outcome, none: whatever moved goes back
	if err == nil {
		for _, v := range vals {
			handed = append(handed, v)
		}
	}
	serr := q.settleOnce(ctx, sp, handed)
	switch {
	case err != nil:
		return nil, q.wrap(err) // nothing received; the settle put back what moved
	case errors.Is(serr, errHandOverExpired):
		return nil, q.wrap(serr) // another client put them back
	case serr != nil:
		// The elements may have left Redis: they are returned (a copy
		// stays in the drain list if the settle did not run).
		q.c.opts.Logger.Warn("redisson: queue drain not confirmed", "queue", q.name, "drain", sp.inflight, "err", serr)
	}
	return q.decodeAll(vals)
}

// settleOnce runs queue_settle for a call of the caller's own, within
// CleanupTimeout even when ctx has ended.
func (q *BlockingQueue[T]) settleOnce(ctx context.Context, sp queueSpec, handed []any) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), q.c.opts.CleanupTimeout)
	defer cancel()
	args := append([]any{q.c.pubsub.publishArg(sctx)}, handed...)
	n, err := q.c.scripts.run(sctx, scriptQueueSettle, settleKeys(sp), args...).Int64()
	if err == nil && n < 0 {
		return errHandOverExpired
	}
	return err
}
