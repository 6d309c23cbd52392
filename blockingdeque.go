package redisson

import (
	"context"
	"time"
)

const blockingDequeKind = "blocking deque"

// BlockingDeque is a BlockingQueue whose takers may wait at either end,
// wire-compatible with Redisson's RBlockingDeque: the same plain list at
// the deque's name, no other key. OfferFirst is LPUSH and OfferLast RPUSH;
// PollFirst and PollLast without a wait are LPOP and RPOP; PeekFirst is
// LINDEX 0 and PeekLast LRANGE -1 -1. So an element a Java service puts
// first is taken first by a Go TakeFirst, and a Go OfferLast wakes a Java
// takeLast (BRPOP).
//
// The takes that wait (TakeFirst, TakeLast, and PollFirst or PollLast with
// a timeout) lose nothing, as BlockingQueue's Take: each end has its own
// dispatcher loop per client, moving elements from its end to an in-flight
// list of its own and handing each to the oldest taker still waiting at
// that end; an element not handed over goes back to the end it came from,
// in its order. A tail taker's in-flight list is
// redisson_queue_inflight:{name}:<client uuid>:last, registered in the
// queue's registry like the head's, so a dead client's tail elements go
// back to the tail. Within one client, takers at one end are served in
// arrival order; the two ends are served independently.
//
// Take, Poll and PollFromAny are those of BlockingQueue (at the head).
// A BlockingDeque is safe for concurrent use; its takers' state lives in
// its Client.
type BlockingDeque[T any] struct {
	BlockingQueue[T]
	last queueSpec // the tail takers' dispatcher
}

// GetBlockingDeque returns the blocking deque called name, of elements of
// type T. It does no I/O. opts may give it its own codec (WithCodec). An
// empty name makes every method return ErrEmptyName.
func GetBlockingDeque[T any](c *Client, name string, opts ...ObjectOption) *BlockingDeque[T] {
	first, last := inflightKey(c.id, name, false), lastInflightKey(c.id, name)
	reg := registryKey(name)
	return &BlockingDeque[T]{
		BlockingQueue: BlockingQueue[T]{
			Queue: newQueue[T](c, blockingDequeKind, name, opts, first, last, reg),
			spec:  queueSpec{kind: blockingDequeKind, name: name, inflight: first, registry: reg},
		},
		last: queueSpec{kind: blockingDequeKind, name: name, inflight: last, registry: reg, tail: true},
	}
}

// OfferFirst inserts v at the head (LPUSH). It returns the errors of Offer.
func (d *BlockingDeque[T]) OfferFirst(ctx context.Context, v T) error { return d.push(ctx, true, v) }

// OfferLast appends v at the tail (RPUSH), as Offer. It returns the errors
// of Offer.
func (d *BlockingDeque[T]) OfferLast(ctx context.Context, v T) error { return d.push(ctx, false, v) }

// TakeFirst removes and returns the head, waiting until there is one or
// ctx ends (Redisson's takeFirst), as Take. It returns the errors of Take.
func (d *BlockingDeque[T]) TakeFirst(ctx context.Context) (T, error) { return d.Take(ctx) }

// TakeLast removes and returns the tail, waiting until there is one or ctx
// ends (Redisson's takeLast). It returns the errors of Take.
func (d *BlockingDeque[T]) TakeLast(ctx context.Context) (_ T, err error) {
	ctx, rec := d.begin(ctx, opQueueTake)
	defer func() { rec.end(err, OutcomeOK) }()
	v, _, err := d.wait(ctx, -1, []queueSpec{d.last})
	return v, err
}

// PollFirst removes and returns the head and true, waiting at most timeout
// for one (Redisson's pollFirst(timeout)), as Poll: timeout 0 does not wait
// (one LPOP). It returns the errors of Poll.
func (d *BlockingDeque[T]) PollFirst(ctx context.Context, timeout time.Duration) (T, bool, error) {
	return d.Poll(ctx, timeout)
}

// PollLast removes and returns the tail and true, waiting at most timeout
// for one (Redisson's pollLast(timeout)); false when the wait ran out.
// Timeout 0 does not wait: one RPOP. It returns the errors of Poll.
func (d *BlockingDeque[T]) PollLast(ctx context.Context, timeout time.Duration) (_ T, ok bool, err error) {
	ctx, rec := d.begin(ctx, takeOp(timeout))
	defer func() { rec.end(err, takeOutcome(timeout, ok)) }()
	return d.poll(ctx, timeout, d.last)
}

// PeekFirst returns the head without removing it, as Peek (LINDEX 0). It
// returns the errors of Peek.
func (d *BlockingDeque[T]) PeekFirst(ctx context.Context) (T, bool, error) { return d.Peek(ctx) }

// PeekLast returns the tail and true without removing it, or the zero value
// and false when the deque is empty (LRANGE -1 -1, as Redisson). It returns
// the errors of Peek.
func (d *BlockingDeque[T]) PeekLast(ctx context.Context) (T, bool, error) { return d.peekLast(ctx) }
