package redisson

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

const boundedQueueKind = "bounded blocking queue"

// BoundedBlockingQueue is a BlockingQueue with a capacity, wire-compatible
// with Redisson's RBoundedBlockingQueue: the list at the queue's name, and
// its free capacity as a counter in the string redisson_bqs:{name}, set
// once by TrySetCapacity, taken by every Offer and Put (in the same script
// as the RPUSH) and given back by every Poll, Take and Drain (in the same
// script as the element leaves), which publishes the new free capacity on
// redisson_sc:redisson_bqs:{name}, as Redisson's take does. Java and Go
// producers and consumers share one bound: a Java take wakes a Go Put, and
// the other way round.
//
// Take, Poll with a wait and Drain lose nothing, as in BlockingQueue (the
// takers' in-flight list is redisson_bqueue_inflight:{name}:<client uuid>); the
// capacity of an element is given back when it is handed over, never when
// it goes back to the queue (a dead client's in-flight list put back by
// another client's take included). Put waits on the channel through the client's
// shared subscription and re-checks every second, so a lost message only
// delays it. An Offer or Put whose reply is lost may be resent by go-redis
// and so append twice (as in Redisson).
//
// Capacity counts the free capacity plus the queue's length: elements in
// flight to a taker count in neither for that instant. Writing the list
// with other commands (a plain Queue of the same name, or the embedded
// Queue's Offer) bypasses the bound. Every call is one round trip (Put:
// one per try). Under a failover, the list and the counter change in one
// script, which Redis replicates as a unit: a failover may lose a recent
// offer or take, but together with its capacity change.
//
// A BoundedBlockingQueue is safe for concurrent use; its takers' state
// lives in its Client.
type BoundedBlockingQueue[T any] struct {
	BlockingQueue[T]
}

// GetBoundedBlockingQueue returns the bounded blocking queue called name,
// of elements of type T. It does no I/O. opts may give it its own codec
// (WithCodec). An empty name makes every method return ErrEmptyName. Call
// TrySetCapacity before the first Offer or Put.
func GetBoundedBlockingQueue[T any](c *Client, name string, opts ...ObjectOption) *BoundedBlockingQueue[T] {
	inflight := inflightKey(c.id, name, true)
	capKey, channel := boundedCapKey(name), boundedChannel(name)
	return &BoundedBlockingQueue[T]{BlockingQueue: BlockingQueue[T]{
		Queue: newQueue[T](c, boundedQueueKind, name, opts, inflight, registryKey(name), capKey, channel),
		spec: queueSpec{kind: boundedQueueKind, name: name, inflight: inflight, registry: registryKey(name),
			capKey: capKey, channel: channel},
	}}
}

// bwrap names the queue in err; Redis refusing for a capacity never set
// matches ErrNotInitialized, and a counter that is no integer ErrWrongType.
func (q *BoundedBlockingQueue[T]) bwrap(err error) error {
	var named *objectError
	switch {
	case err == nil || errors.As(err, &named):
		return err
	case strings.Contains(err.Error(), "REDISSON_NOT_INITIALIZED"):
		return q.notInitialized()
	}
	return intKeyErr(q.kind, q.name, err)
}

// notInitialized is the error of a call before TrySetCapacity: the
// counter redisson_bqs:{name} is missing.
func (q *BoundedBlockingQueue[T]) notInitialized() error {
	return objectErrorf(q.kind, q.name, "%w: capacity not set (TrySetCapacity)", ErrNotInitialized)
}

// TrySetCapacity sets the capacity to n if it was never set (or the queue
// was deleted), publishes it, and reports whether it did so; an existing
// capacity is left alone. It returns ErrInvalidCapacity for n < 1;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (q *BoundedBlockingQueue[T]) TrySetCapacity(ctx context.Context, n int64) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueueTrySetCapacity)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if n < 1 {
		return false, objectErr(q.kind, q.name, invalidOption(ErrInvalidCapacity, "capacity", n, "at least 1"))
	}
	set, err := q.c.scripts.run(ctx, scriptBQueueSetCap, []string{q.spec.capKey, q.spec.channel}, n, q.c.pubsub.publishArg(ctx)).Int64()
	return set == 1, q.bwrap(err)
}

// RemainingCapacity returns the free capacity (GET redisson_bqs:{name}, as
// Redisson). It returns ErrNotInitialized before TrySetCapacity;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (q *BoundedBlockingQueue[T]) RemainingCapacity(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := q.open(ctx, opQueueCapacity)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.Get(ctx, q.spec.capKey).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, q.notInitialized()
	}
	return n, q.bwrap(err)
}

// Capacity returns the capacity: the free capacity plus the queue's length,
// read together (MULTI). It returns the errors of RemainingCapacity.
func (q *BoundedBlockingQueue[T]) Capacity(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := q.open(ctx, opQueueCapacity)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	q.c.trip(ctx, 1)
	var free *redis.StringCmd
	var size *redis.IntCmd
	_, err = q.c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		free = p.Get(ctx, q.spec.capKey)
		size = p.LLen(ctx, q.name)
		return nil
	})
	if free != nil && errors.Is(free.Err(), redis.Nil) {
		return 0, q.notInitialized()
	}
	if err != nil {
		return 0, q.bwrap(err)
	}
	n, err := free.Int64()
	if err != nil {
		// The counter is no integer.
		return 0, &objectError{kind: q.kind, name: q.name, cause: &wrongTypeError{err: err}}
	}
	return n + size.Val(), nil
}

// Offer appends v at the tail if the queue has room and reports whether it
// did (false when full, nothing changed). It returns ErrNotInitialized
// before TrySetCapacity, ErrNilValue for a nil pointer value, ErrCodec when
// v does not encode; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (q *BoundedBlockingQueue[T]) Offer(ctx context.Context, v T) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueueOffer)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := q.encode(v)
	if err != nil {
		return false, err
	}
	return q.offer(ctx, b)
}

func (q *BoundedBlockingQueue[T]) offer(ctx context.Context, b []byte) (bool, error) {
	ok, err := q.c.scripts.run(ctx, scriptBQueueOffer, []string{q.spec.capKey, q.name}, b).Int64()
	return ok == 1, q.bwrap(err)
}

// Put appends v at the tail, waiting until the queue has room or ctx ends
// (Redisson's put). A take by any client, Java's included, wakes it. It
// returns ctx.Err() (wrapped) when ctx ends first, having appended nothing;
// the errors of Offer otherwise.
func (q *BoundedBlockingQueue[T]) Put(ctx context.Context, v T) (err error) {
	ctx, rec, err := q.open(ctx, opQueuePut)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	b, err := q.encode(v)
	if err != nil {
		return err
	}
	if ok, err := q.offer(ctx, b); ok || err != nil {
		return err
	}
	t0 := q.c.blockStart()
	defer q.c.blockEnd(ctx, t0)
	_, err = q.c.await(ctx, waitSpec{
		what: q.kind, name: q.name, channel: q.spec.channel, policy: semaphoreWakePolicy, wait: -1,
		recheck: true, retry: syncRecheck,
	}, func(ctx context.Context, _ waitState) (bool, time.Duration, error) {
		ok, err := q.offer(ctx, b)
		return ok, syncRecheck, err
	})
	return err
}

// Poll removes and returns the head and true, giving back its capacity,
// waiting at most timeout for one; Poll(ctx, 0) does not wait (one script,
// as Redisson's poll). It returns the errors of BlockingQueue.Poll.
func (q *BoundedBlockingQueue[T]) Poll(ctx context.Context, timeout time.Duration) (_ T, ok bool, err error) {
	ctx, rec := q.begin(ctx, takeOp(timeout))
	defer func() { rec.end(err, takeOutcome(timeout, ok)) }()
	v, ok, err := q.BlockingQueue.poll(ctx, timeout, q.spec)
	return v, ok, q.bwrap(err)
}

// Delete deletes the queue and its capacity counter (as Redisson), and
// reports whether either existed; Offer then needs TrySetCapacity again.
// It returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error.
func (q *BoundedBlockingQueue[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueueDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.Del(ctx, q.name, q.spec.capKey).Result()
	return n > 0, q.wrap(err)
}
