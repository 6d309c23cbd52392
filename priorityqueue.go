package redisson

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

const priorityQueueKind = "priority queue"

// priorityRecheck bounds a Take's wait between two looks at the queue, so
// that a lost wake-up, or an element put there without the queue's lock,
// only delays it.
const priorityRecheck = 2 * time.Second

// PriorityQueue is a queue of T kept in the order of a compare function,
// wire-compatible with Redisson's RPriorityQueue and RPriorityBlockingQueue:
// a plain Redis list at the queue's name, sorted, head the least element.
// Writers (Offer, Poll, Take, Remove) hold Redisson's lock
// redisson_sortedset_lock:{name} (an RLock: the Lock of this library, with
// its watchdog), so Java and Go writers of one queue exclude each other; an
// Offer finds the element's place by binary search (LLEN, then one LINDEX
// per halving, comparing decoded values) and inserts it there, after the
// elements equal to it, so equal elements leave in the order they came.
//
// Order. compare(a, b) returns a negative number when a comes first, as
// cmp.Compare. Java orders by its Comparable or the comparator set with
// trySetComparator (recorded in {name}:redisson_sortedset_comparator). To
// share a queue, give Go the same order as Java: cmp.Compare matches Java's
// natural order for numbers, and for strings whose characters lie in the
// Basic Multilingual Plane (Java compares UTF-16 units, Go UTF-8 bytes; they
// differ only between U+E000..U+FFFF and the supplementary planes). A queue
// whose comparator key Java has set is refused by Offer with
// ErrInvalidOption, as its order is not one Go can know.
//
// Take waits for an element without a connection of its own: it listens
// on the lock's channel (every writer's unlock publishes there, Java's too)
// and looks again at each message, and at least every 2 seconds; the look
// is an LLEN, and only a non-empty queue is locked and popped. Redisson's
// take polls with pauses of up to 2 seconds instead.
//
// Every writer is several round trips under the lock (Offer: lock, LLEN
// and the comparator in one, about log2(size) LINDEX, the insert, unlock);
// Peek, Size, ReadAll and Iterator are Queue's. A PriorityQueue is safe for
// concurrent use.
type PriorityQueue[T any] struct {
	Queue[T]
	compare    func(a, b T) int
	lockName   string // redisson_sortedset_lock:{name}
	comparator string // {name}:redisson_sortedset_comparator
	channel    string // the lock's channel
	recheck    time.Duration
}

// GetPriorityQueue returns the priority queue called name, of elements of
// type T ordered by compare (see PriorityQueue for the order Java uses). It
// does no I/O. opts may give it its own codec (WithCodec). An empty name
// makes every method return ErrEmptyName, a nil compare ErrInvalidOption.
func GetPriorityQueue[T any](c *Client, name string, compare func(a, b T) int, opts ...ObjectOption) *PriorityQueue[T] {
	lockName := prefixName("redisson_sortedset_lock", name)
	comparator := suffixName(name, "redisson_sortedset_comparator")
	return &PriorityQueue[T]{
		Queue:      newQueue[T](c, priorityQueueKind, name, opts, lockName, comparator),
		compare:    compare,
		lockName:   lockName,
		comparator: comparator,
		channel:    prefixName("redisson_lock__channel", lockName),
		recheck:    priorityRecheck,
	}
}

// checkCompare refuses a queue without a compare function.
func (q *PriorityQueue[T]) checkCompare() error {
	if q.compare == nil {
		return q.wrap(invalidOption(ErrInvalidOption, "compare", "nil", "a function"))
	}
	return nil
}

// locked runs fn holding the queue's lock (waiting for it until ctx ends).
func (q *PriorityQueue[T]) locked(ctx context.Context, fn func(ctx context.Context) error) error {
	l := q.c.GetLock(q.lockName)
	if err := l.Lock(ctx); err != nil {
		return err
	}
	err := fn(ctx)
	return errors.Join(err, l.Unlock(ctx))
}

// Offer inserts v at its place in the order (Redisson's offer and add). It
// returns ErrNilValue for a nil pointer value, ErrCodec when v or an
// element compared does not encode or decode, ErrInvalidOption for a nil
// compare or a queue ordered by a Java comparator; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, a lock error, or a Redis
// error otherwise. A lost reply of the insert may leave v inserted.
func (q *PriorityQueue[T]) Offer(ctx context.Context, v T) (err error) {
	ctx, rec, err := q.open(ctx, opQueueOffer)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if err := q.checkCompare(); err != nil {
		return err
	}
	b, err := q.encode(v)
	if err != nil {
		return err
	}
	return q.locked(ctx, func(ctx context.Context) error {
		at, err := q.place(ctx, v)
		if err != nil {
			return err
		}
		q.c.trip(ctx, 1)
		return q.wrap(q.c.scripts.run(ctx, scriptListInsert, []string{q.name}, at, b).Err())
	})
}

// place finds, under the lock, the index v goes to: after every element
// not greater than it.
func (q *PriorityQueue[T]) place(ctx context.Context, v T) (int64, error) {
	q.c.trip(ctx, 1)
	var size *redis.IntCmd
	var cmp *redis.StringCmd
	_, err := q.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmp = p.Get(ctx, q.comparator)
		size = p.LLen(ctx, q.name)
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return 0, q.wrap(err)
	}
	if c, err := cmp.Result(); err == nil {
		return 0, q.wrap(invalidOption(ErrInvalidOption, "order", c, "natural (the queue has a Java comparator)"))
	}
	lo, hi := int64(0), size.Val()
	for lo < hi {
		mid := lo + (hi-lo)/2
		q.c.trip(ctx, 1)
		e, ok, err := q.element(q.c.rdb.LIndex(ctx, q.name, mid).Result())
		if err != nil {
			return 0, err
		}
		if !ok { // shorter than LLEN said: only a writer without the lock
			hi = mid
			continue
		}
		if q.compare(v, e) < 0 {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

// Poll removes and returns the head (the least element) and true, or the
// zero value and false when the queue is empty: LLEN, and for a non-empty
// queue its lock, LPOP and unlock, as Redisson. It returns ErrCodec when the
// element does not decode (it is removed all the same); ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, a lock error, or a Redis
// error otherwise. A lost reply of the LPOP loses the element.
func (q *PriorityQueue[T]) Poll(ctx context.Context) (_ T, ok bool, err error) {
	ctx, rec, err := q.open(ctx, opQueuePoll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		var zero T
		return zero, false, err
	}
	return q.poll(ctx)
}

// poll is Poll after its checks.
func (q *PriorityQueue[T]) poll(ctx context.Context) (v T, ok bool, err error) {
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.LLen(ctx, q.name).Result()
	if err != nil || n == 0 {
		return v, false, q.wrap(err)
	}
	err = q.locked(ctx, func(ctx context.Context) error {
		var perr error
		q.c.trip(ctx, 1)
		v, ok, perr = q.element(q.c.rdb.LPop(ctx, q.name).Result())
		return perr
	})
	return v, ok, err
}

// Take removes and returns the head, waiting until there is one or ctx
// ends (Redisson's RPriorityBlockingQueue.take): see PriorityQueue for how
// it waits. It returns ctx.Err() (wrapped) when ctx ends first; the errors
// of Poll otherwise. Like Poll (and Redisson's take) it pops with one LPOP:
// a lost reply loses the element.
func (q *PriorityQueue[T]) Take(ctx context.Context) (_ T, err error) {
	ctx, rec := q.begin(ctx, opQueueTake)
	defer func() { rec.end(err, OutcomeOK) }()
	var v T
	if err := q.check(); err != nil {
		return v, err
	}
	t0 := q.c.blockStart()
	defer q.c.blockEnd(ctx, t0)
	_, err = q.c.await(ctx, waitSpec{
		what: q.kind, name: q.name, channel: q.channel, policy: priorityWakePolicy, wait: -1, beat: q.recheck,
	}, func(ctx context.Context, _ waitState) (bool, time.Duration, error) {
		got, ok, err := q.poll(ctx)
		if ok {
			v = got
		}
		return ok, q.recheck, err
	})
	return v, err
}

// priorityWakePolicy: an unlock of the queue's lock ("0": a writer is
// done, an element may be there) wakes one taker; the lock's other
// messages are not for takers.
func priorityWakePolicy(payload string) wake {
	if payload == "0" {
		return wake{n: 1}
	}
	return wake{ignored: true}
}

// Remove removes the first element equal to v (by its encoded bytes) under
// the queue's lock, and reports whether there was one. It returns the
// errors of Offer.
func (q *PriorityQueue[T]) Remove(ctx context.Context, v T) (removed bool, err error) {
	ctx, rec, err := q.open(ctx, opQueueRemove)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := q.encode(v)
	if err != nil {
		return false, err
	}
	err = q.locked(ctx, func(ctx context.Context) error {
		q.c.trip(ctx, 1)
		n, err := q.c.rdb.LRem(ctx, q.name, 1, b).Result()
		removed = n == 1
		return q.wrap(err)
	})
	return removed, err
}
