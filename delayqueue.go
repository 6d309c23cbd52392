package redisson

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

const delayQueueKind = "delayed queue"

// DelayedQueue schedules values of type T into a destination queue after a
// delay: Redisson's RDelayedQueue. The destination is a Redis list used as
// a queue, addressed by its name: GetQueue or GetBlockingQueue of that name
// (in Go), or Java's RQueue and RBlockingQueue, read the values once they
// are due, decoded with the same codec.
//
// Keys, exactly as Redisson's, all in the slot of the destination's name:
//
//	redisson_delay_queue_timeout:{dest}  zset: element -> due time (ms)
//	redisson_delay_queue:{dest}          list: elements in offer order
//	redisson_delay_queue_channel:{dest}  channel: the earliest due time (ms)
//
// An element is one byte 8, 8 random bytes, the value's length (8 bytes,
// little-endian) and the value encoded with the queue's codec (Options.Codec
// unless WithCodec says otherwise); its random id lets equal values be
// scheduled more than once. When an offer makes an element the earliest
// pending one, its due time is published in decimal on the channel, as
// Redisson does.
//
// Due times are the Redis server's clock (TIME inside the scripts; Redisson
// uses the offering client's clock): an element offered with delay d is due
// d after the server ran the offer. Due elements are moved into the
// destination, in due order, by every client that runs the queue, Go or
// Java: a handle runs the queue from its first call (or Start) until its
// Destroy or Client.Close. Each move is one script that takes the element
// out of the zset and the list and appends its value to the destination, so
// an element is moved at most once however many clients run the queue, and
// a client that stops leaves nothing half-moved: the others (or the next to
// start) move what it did not. No element moves while no client runs the
// queue; it moves as soon as one does. A running client keeps a timer at the
// earliest due time it knows (from its last move and from the channel), so
// elements appear shortly after they are due (see docs/performance.md);
// after its pub/sub connection was lost it moves and re-reads the earliest
// due time at once, so a lost message delays nothing.
//
// Under failover: Redis replicates asynchronously, so an offer acknowledged
// by a master that fails before its replica received it is lost. A move can
// be lost the same way: the promoted replica still holds the element
// pending and it is moved again, so a consumer that already popped it from
// the failed master sees it twice. Offer, Remove and a move are each atomic
// on the master.
//
// Complexity, for n pending elements: Offer is O(log n) (OfferAll of k
// values O(k log n)); a move is O(log n) per element plus its position in
// the list; Size is O(1); Contains and Remove scan the pending list, O(n);
// ReadAll is O(n). An element without the layout above (a foreign writer's)
// is moved as it is.
//
// A DelayedQueue is safe for concurrent use; it must not be copied after
// first use.
type DelayedQueue[T any] struct {
	base // named after the destination
	keys delayKeys

	mu        sync.Mutex
	run       *delayRun // this handle's share of the client's mover; nil when not running
	destroyed bool
}

// delayKeys are a delayed queue's keys and channel.
type delayKeys struct {
	dest, timeout, list, channel string
}

func delayKeysOf(dest string) delayKeys {
	return delayKeys{
		dest:    dest,
		timeout: prefixName("redisson_delay_queue_timeout", dest),
		list:    prefixName("redisson_delay_queue", dest),
		channel: prefixName("redisson_delay_queue_channel", dest),
	}
}

// GetDelayedQueue returns the delayed queue of the queue called destination
// (the name of a Queue, a BlockingQueue, or of Java's RQueue), holding
// values of type T. It does no I/O: the handle runs the queue from its first
// call. opts may give the queue its own codec (WithCodec); a nil option or a
// nil codec keeps the client's default. An empty destination makes every
// method return ErrEmptyName.
func GetDelayedQueue[T any](c *Client, destination string, opts ...ObjectOption) *DelayedQueue[T] {
	k := delayKeysOf(destination)
	return &DelayedQueue[T]{
		base: newBase(c, delayQueueKind, destination, c.objectCodec(opts), k.timeout, k.list, k.channel),
		keys: k,
	}
}

// Name returns the destination's name.
func (q *DelayedQueue[T]) Name() string { return q.keys.dest }

// Codec returns the codec the queue encodes its values with.
func (q *DelayedQueue[T]) Codec() Codec { return q.codec }

// Start makes this handle run the queue, as its first call would, and
// waits until Redis has confirmed the subscription to the queue's channel
// and what was due has been moved once, or ctx ends. A handle runs the
// queue once however often it is started. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, the context's error, or ErrNotSubscribed
// when Redis did not confirm the subscription within 10 s (the handle
// keeps running the queue).
//
// Start is not an operation an Observer sees: its work is the mover's, in
// the background (a failed move is an EventDelayMoveFailed).
func (q *DelayedQueue[T]) Start(ctx context.Context) error {
	if err := q.check(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	r, err := q.running()
	if err != nil {
		return err
	}
	t := time.NewTimer(subscribeTimeout)
	defer t.Stop()
	select {
	case <-r.started:
		if q.c.closed.Load() {
			return ErrClientClosed // the run ended with the client
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-q.c.closing:
		return ErrClientClosed
	case <-t.C:
		return objectErrorf(delayQueueKind, q.keys.dest, "%w after %v", ErrNotSubscribed, subscribeTimeout)
	}
}

// running makes this handle run the queue (once) and returns the run.
func (q *DelayedQueue[T]) running() (*delayRun, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.run == nil {
		r, err := q.c.delayq.acquire(q.keys)
		if err != nil {
			return nil, err
		}
		q.run, q.destroyed = r, false
	}
	return q.run, nil
}

// use is the start of every call that passed its checks: the handle runs
// the queue from its first call, unless ctx has ended or it was destroyed.
func (q *DelayedQueue[T]) use(ctx context.Context) {
	q.mu.Lock()
	skip := q.run != nil || q.destroyed
	q.mu.Unlock()
	if !skip && ctx.Err() == nil {
		_, _ = q.running() // a closed client fails the call itself
	}
}

// Destroy stops this handle's running of the queue, as Redisson's destroy
// does: the client moves no more elements for it (unless another handle of
// the same destination still runs it), and when no handle of this client
// runs it any more, unsubscribes its channel. Pending elements stay in
// Redis for the other clients running the queue. The handle's calls still
// work afterwards, without running the queue, until Start. Destroy does no
// I/O itself, does not wait, and is safe to call more than once.
func (q *DelayedQueue[T]) Destroy() {
	q.mu.Lock()
	r := q.run
	q.run, q.destroyed = nil, true
	q.mu.Unlock()
	if r != nil {
		q.c.delayq.release(r)
	}
}

// Offer schedules v to appear in the destination once delay has passed on
// the server's clock (delay 0: as soon as a client running the queue moves
// it, at once if this client runs it). Delays count in whole milliseconds,
// rounded up. It returns ErrNegativeDuration for a negative delay,
// ErrNilValue for a nil pointer value, ErrCodec when v does not encode
// (Redis unchanged in each case); ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (q *DelayedQueue[T]) Offer(ctx context.Context, v T, delay time.Duration) error {
	return q.OfferAll(ctx, []T{v}, delay)
}

// OfferAll schedules every value of vs with the same delay, in one atomic
// script call; each value is its own element. No values is no call. It
// returns the errors of Offer; when one value does not encode, none is
// scheduled.
func (q *DelayedQueue[T]) OfferAll(ctx context.Context, vs []T, delay time.Duration) (err error) {
	ctx, rec, err := q.open(ctx, opDelayOffer)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if delay < 0 {
		return objectErrorf(delayQueueKind, q.keys.dest, "%w: delay %v", ErrNegativeDuration, delay)
	}
	if len(vs) == 0 {
		return nil
	}
	args := make([]any, 0, 1+len(vs))
	ms := delay.Milliseconds()
	if delay%time.Millisecond != 0 {
		ms++
	}
	args = append(args, ms)
	for i := range vs {
		b, err := encodeNonNil(q.codec, q.object, vs[i])
		if err != nil {
			return err
		}
		args = append(args, delayElement(b))
	}
	q.use(ctx)
	err = q.c.scripts.run(ctx, scriptDelayOffer, []string{q.keys.dest, q.keys.timeout, q.keys.list, q.keys.channel}, args...).Err()
	return q.wrap(err)
}

// delayElement is the pending element of value v: one byte 8, 8 random
// bytes, len(v) as 8 bytes little-endian, v.
func delayElement(v []byte) []byte {
	b := make([]byte, 0, 17+len(v))
	b = append(b, 8)
	b = binary.LittleEndian.AppendUint64(b, rand.Uint64())
	b = binary.LittleEndian.AppendUint64(b, uint64(len(v)))
	return append(b, v...)
}

// delayValue returns the value inside a pending element, and false when e
// does not have the layout of delayElement (any id length).
func delayValue(e []byte) ([]byte, bool) {
	if len(e) < 1 || len(e) < 1+int(e[0])+8 {
		return nil, false
	}
	rest := e[1+int(e[0]):]
	if binary.LittleEndian.Uint64(rest) != uint64(len(rest)-8) {
		return nil, false
	}
	return rest[8:], true
}

// Size returns the number of pending elements (0 when there are none). It
// returns ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (q *DelayedQueue[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := q.open(ctx, opDelaySize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	q.use(ctx)
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.LLen(ctx, q.keys.list).Result()
	return n, q.wrap(err)
}

// Contains reports whether a pending element holds v (encoded to the same
// bytes). It returns ErrNilValue or ErrCodec when v does not encode;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (q *DelayedQueue[T]) Contains(ctx context.Context, v T) (bool, error) {
	return q.find(ctx, opDelayContains, v, "0")
}

// Remove removes the first pending element, in offer order, that holds v
// (encoded to the same bytes), so it never reaches the destination, and
// reports whether there was one. It returns the errors of Contains.
func (q *DelayedQueue[T]) Remove(ctx context.Context, v T) (bool, error) {
	return q.find(ctx, opDelayRemove, v, "1")
}

func (q *DelayedQueue[T]) find(ctx context.Context, op string, v T, remove string) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, op)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	b, err := encodeNonNil(q.codec, q.object, v)
	if err != nil {
		return false, err
	}
	q.use(ctx)
	n, err := q.c.scripts.run(ctx, scriptDelayFind, []string{q.keys.list, q.keys.timeout}, b, remove).Int64()
	return n == 1, q.wrap(err)
}

// ReadAll returns the values of the pending elements in due order (the
// order they will reach the destination; Redisson's readAll returns them
// in offer order). It returns ErrCodec when an element does not decode;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (q *DelayedQueue[T]) ReadAll(ctx context.Context) (_ []T, err error) {
	ctx, rec, err := q.open(ctx, opDelayReadAll)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	q.use(ctx)
	q.c.trip(ctx, 1)
	all, err := q.c.rdb.ZRange(ctx, q.keys.timeout, 0, -1).Result()
	if err != nil {
		return nil, q.wrap(err)
	}
	out := make([]T, 0, len(all))
	for _, e := range all {
		b, ok := delayValue([]byte(e))
		if !ok {
			return nil, &codecError{object: q.object, codec: q.codec.Name(), op: "decode",
				err: errors.New("pending element without the delayed queue's layout")}
		}
		v, err := decodeValue[T](q.codec, q.object, b)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Delete deletes every pending element (both keys; Redisson's delete and
// clear) and reports whether there was any. The destination is not
// touched. It returns ErrEmptyName, ErrInvalidName, ErrClientClosed, or a
// Redis error.
func (q *DelayedQueue[T]) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := q.open(ctx, opDelayDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	q.use(ctx)
	q.c.trip(ctx, 1)
	n, err := q.c.rdb.Del(ctx, q.keys.timeout, q.keys.list).Result()
	return n > 0, q.wrap(err)
}
