package redisson

import (
	"context"
	"iter"

	"github.com/redis/go-redis/v9"
)

const (
	queueKind = "queue"
	dequeKind = "deque"
)

// Queue is a FIFO queue of T stored in a Redis list, wire-compatible with
// Redisson's RQueue: the list is at the queue's name, each element encoded
// with the queue's codec (Options.Codec unless WithCodec says otherwise);
// Offer appends (RPUSH), Poll takes from the head (LPOP), Peek reads the
// head (LINDEX 0). Java and Go clients of the same name share one queue.
//
// Every call is one command, one round trip, O(1) but ReadAll and the
// iterator (O(n)). Under a failover the queue has the guarantees of the
// list it is: an element written just before the old master failed may be
// lost with it (asynchronous replication). As with Redisson, an Offer whose
// reply is lost may be resent by go-redis and so appended twice, and a Poll
// whose reply is lost has taken an element nobody receives;
// BlockingQueue's Take and Poll with a wait never lose one.
//
// A stored element that does not decode is an error matching ErrCodec that
// names the queue (Poll has removed it all the same), never a zero value. A
// key holding another Redis type is ErrWrongType and every write leaves it
// unchanged. Nil pointer values are ErrNilValue, as Redisson refuses nulls.
//
// A Queue is safe for concurrent use and holds no state of its own.
type Queue[T any] struct {
	base
}

// GetQueue returns the queue called name, of elements of type T. It does no
// I/O. opts may give the queue its own codec (WithCodec). An empty name makes
// every method return ErrEmptyName.
func GetQueue[T any](c *Client, name string, opts ...ObjectOption) *Queue[T] {
	q := newQueue[T](c, queueKind, name, opts)
	return &q
}

func newQueue[T any](c *Client, kind, name string, opts []ObjectOption, keys ...string) Queue[T] {
	return Queue[T]{newBase(c, kind, name, c.objectCodec(opts), keys...)}
}

// Name returns the queue's name, the Redis key of its list.
func (q *Queue[T]) Name() string { return q.name }

// Codec returns the codec the queue encodes its elements with.
func (q *Queue[T]) Codec() Codec { return q.codec }

// element turns a reply (a bulk string, or redis.Nil) into (value, present).
func (q *Queue[T]) element(s string, err error) (T, bool, error) {
	return decodeOne[T](&q.base, s, err)
}

// push runs LPUSH (head) or RPUSH (tail) of one encoded element.
func (q *Queue[T]) push(ctx context.Context, head bool, v T) (err error) {
	ctx, rec, err := q.open(ctx, opQueueOffer)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	b, err := q.encode(v)
	if err != nil {
		return err
	}
	q.c.trip(ctx, 1)
	if head {
		return q.wrap(q.c.rdb.LPush(ctx, q.name, b).Err())
	}
	return q.wrap(q.c.rdb.RPush(ctx, q.name, b).Err())
}

// Offer appends v at the tail (RPUSH). It returns ErrNilValue for a nil
// pointer value, ErrCodec when v does not encode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (q *Queue[T]) Offer(ctx context.Context, v T) error { return q.push(ctx, false, v) }

// Poll removes and returns the head and true, or the zero value and false
// when the queue is empty (LPOP). It returns ErrCodec when the element does
// not decode (it is removed all the same); ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (q *Queue[T]) Poll(ctx context.Context) (T, bool, error) { return q.pop(ctx, true) }

func (q *Queue[T]) pop(ctx context.Context, head bool) (_ T, _ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueuePoll)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	q.c.trip(ctx, 1)
	if head {
		return q.element(q.c.rdb.LPop(ctx, q.name).Result())
	}
	return q.element(q.c.rdb.RPop(ctx, q.name).Result())
}

// Peek returns the head and true without removing it, or the zero value and
// false when the queue is empty (LINDEX 0). It returns ErrCodec when the
// element does not decode; ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (q *Queue[T]) Peek(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueuePeek)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	q.c.trip(ctx, 1)
	return q.element(q.c.rdb.LIndex(ctx, q.name, 0).Result())
}

// Size returns the number of elements (0 when the queue does not exist,
// LLEN). It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (q *Queue[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := q.open(ctx, opQueueSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.LLen(ctx, q.name).Result()
	return n, q.wrap(err)
}

// Delete deletes the queue (whatever type its key holds, like Redisson) and
// reports whether it existed. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error.
func (q *Queue[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueueDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.Del(ctx, q.name).Result()
	return n == 1, q.wrap(err)
}

// ReadAll returns every element, head first, in one LRANGE 0 -1 (an empty
// slice when the queue does not exist), leaving the queue unchanged. It
// reads the whole list at once: iterate long queues with Iterator instead.
// It returns ErrCodec when an element does not decode; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (q *Queue[T]) ReadAll(ctx context.Context) (_ []T, err error) {
	ctx, rec, err := q.open(ctx, opQueueReadAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	q.c.trip(ctx, 1)
	all, err := q.c.rdb.LRange(ctx, q.name, 0, -1).Result()
	if err != nil {
		return nil, q.wrap(err)
	}
	return q.decodeAll(all)
}

func (q *Queue[T]) decodeAll(all []string) ([]T, error) {
	out := make([]T, 0, len(all))
	for _, s := range all {
		v, err := decodeValue[T](q.codec, q.object, []byte(s))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Iterator returns an iterator over the queue's elements, head first, that
// reads them with LRANGE, batch elements per round trip, leaving the queue
// unchanged. It does no I/O:
//
//	it := q.Iterator(100)
//	for v := range it.All(ctx) {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
//
// The pages are read by index: when other clients poll or offer at the head
// meanwhile, elements may be skipped or yielded twice. A batch below 1 makes
// Err return ErrInvalidBatch; the other errors are those of ReadAll.
func (q *Queue[T]) Iterator(batch int) *QueueIterator[T] {
	return &QueueIterator[T]{q: q, batch: batch}
}

// QueueIterator iterates a queue's elements; see Queue.Iterator. A
// QueueIterator is for one goroutine at a time; All may be ranged over more
// than once, each time from the head.
type QueueIterator[T any] struct {
	q     *Queue[T]
	batch int
	err   error
}

// All yields the elements, reading them batch by batch with ctx. It stops at
// the first error, which Err then returns.
func (it *QueueIterator[T]) All(ctx context.Context) iter.Seq[T] {
	return func(yield func(T) bool) { it.err = it.scan(ctx, yield) }
}

// Err returns the error that ended the last iteration, or nil.
func (it *QueueIterator[T]) Err() error { return it.err }

func (it *QueueIterator[T]) scan(ctx context.Context, yield func(T) bool) error {
	q := it.q
	p := q.pager(opQueueScan, it.batch)
	read := func(ctx context.Context, start, stop int64) ([]string, error) {
		return q.c.rdb.LRange(ctx, q.name, start, stop).Result()
	}
	return p.ranges(ctx, read, func(_ int64, page []string) (bool, error) {
		vs, err := q.decodeAll(page)
		if err != nil {
			return false, err
		}
		for _, v := range vs {
			if !yield(v) {
				return false, nil
			}
		}
		return true, nil
	})
}

// Deque is a double-ended queue of T stored in a Redis list, wire-compatible
// with Redisson's RDeque: a Queue (its Offer appends at the tail, its Poll
// and Peek work at the head) with calls at both ends: OfferFirst (LPUSH),
// OfferLast (RPUSH), PollFirst (LPOP), PollLast (RPOP), PeekFirst (LINDEX
// 0), PeekLast (LRANGE -1 -1). Every call is one command, one round trip,
// with the guarantees and errors of Queue.
//
// A Deque is safe for concurrent use and holds no state of its own.
type Deque[T any] struct {
	Queue[T]
}

// GetDeque returns the deque called name, of elements of type T. It does no
// I/O. opts may give the deque its own codec (WithCodec). An empty name
// makes every method return ErrEmptyName.
func GetDeque[T any](c *Client, name string, opts ...ObjectOption) *Deque[T] {
	return &Deque[T]{Queue: newQueue[T](c, dequeKind, name, opts)}
}

// OfferFirst inserts v at the head (LPUSH). It returns the errors of Offer.
func (d *Deque[T]) OfferFirst(ctx context.Context, v T) error { return d.push(ctx, true, v) }

// OfferLast appends v at the tail (RPUSH), as Offer. It returns the errors
// of Offer.
func (d *Deque[T]) OfferLast(ctx context.Context, v T) error { return d.push(ctx, false, v) }

// PollFirst removes and returns the head, as Poll (LPOP). It returns the
// errors of Poll.
func (d *Deque[T]) PollFirst(ctx context.Context) (T, bool, error) { return d.pop(ctx, true) }

// PollLast removes and returns the tail and true, or the zero value and
// false when the deque is empty (RPOP). It returns the errors of Poll.
func (d *Deque[T]) PollLast(ctx context.Context) (T, bool, error) { return d.pop(ctx, false) }

// PeekFirst returns the head without removing it, as Peek (LINDEX 0). It
// returns the errors of Peek.
func (d *Deque[T]) PeekFirst(ctx context.Context) (T, bool, error) { return d.Peek(ctx) }

// PeekLast returns the tail and true without removing it, or the zero value
// and false when the deque is empty (LRANGE -1 -1, as Redisson). It returns
// the errors of Peek.
func (d *Deque[T]) PeekLast(ctx context.Context) (T, bool, error) { return d.peekLast(ctx) }

// peekLast is PeekLast of Deque and BlockingDeque.
func (q *Queue[T]) peekLast(ctx context.Context) (_ T, _ bool, err error) {
	ctx, rec, err := q.open(ctx, opQueuePeek)
	defer func() { rec.end(err, OutcomeOK) }()
	var zero T
	if err != nil {
		return zero, false, err
	}
	q.c.trip(ctx, 1)
	last, err := q.c.rdb.LRange(ctx, q.name, -1, -1).Result()
	if err != nil || len(last) == 0 {
		return q.element("", q.nilIfEmpty(err))
	}
	return q.element(last[0], nil)
}

func (q *Queue[T]) nilIfEmpty(err error) error {
	if err == nil {
		return redis.Nil
	}
	return err
}
