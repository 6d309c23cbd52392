// Package writebehind is the queue of a write-behind cache: writes and
// deletes of keys, coalesced per key (the latest operation of a key wins),
// handed in batches to a writer by one goroutine, retried with a back-off
// when the writer fails, and flushed on Close.
//
// The queue lives in memory only: a process that dies without Close loses
// what it holds.
package writebehind

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

var (
	// ErrFull is returned by Put and Delete, with Config.FailWhenFull, when
	// the queue holds QueueSize keys and the key is not among them.
	ErrFull = errors.New("writebehind: queue full")
	// ErrClosed is returned by Put and Delete once Close has begun.
	ErrClosed = errors.New("writebehind: closed")
	// ErrUnflushed is returned by Close when its context ended before the
	// queue was empty: the operations still queued are lost.
	ErrUnflushed = errors.New("writebehind: not flushed")
)

// Config configures a Queue. Write, Delete, BatchSize, Delay and QueueSize
// are required (positive); the others may be zero.
type Config[K comparable, V any] struct {
	Write  func(ctx context.Context, entries map[K]V) error
	Delete func(ctx context.Context, keys []K) error

	BatchSize    int           // keys per batch at most; a full batch is flushed at once
	Delay        time.Duration // a key waits at most this long before its batch is flushed
	QueueSize    int           // keys queued (in flight included) at most
	FailWhenFull bool          // Put on a full queue returns ErrFull instead of blocking
	MaxAttempts  int           // writer calls per batch before it is dropped; 0: until Close gives up
	MinBackoff   time.Duration // first wait after a failure (doubling up to MaxBackoff)
	MaxBackoff   time.Duration

	// OnError is told of each failed writer call: the error, the keys of
	// the call, the attempt (1 for the first) and whether the batch part
	// was dropped (MaxAttempts reached or Close gave up).
	OnError func(err error, keys, attempt int, dropped bool)
	// OnWritten is told of each writer call that succeeded and its keys.
	OnWritten func(keys int)
}

type op[V any] struct {
	del bool
	v   V
}

// Queue is a write-behind queue. It is safe for concurrent use. It owns one
// goroutine, started by New and stopped by Close.
type Queue[K comparable, V any] struct {
	cfg Config[K, V]

	mu       sync.Mutex
	pending  map[K]op[V]
	order    []K // pending keys, oldest first
	oldest   time.Time
	inflight int
	closed   bool
	urgent   int           // Flush and Close calls waiting: flush without waiting for Delay
	changed  chan struct{} // closed and replaced whenever the state above changes

	lost   atomic.Int64    // keys of batches dropped because Close gave up
	ctx    context.Context // the goroutine's; cancelled by Close when it gives up
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts a queue.
func New[K comparable, V any](cfg Config[K, V]) *Queue[K, V] {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 100 * time.Millisecond
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(cfg.MinBackoff, 10*time.Second)
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := &Queue[K, V]{cfg: cfg, pending: map[K]op[V]{}, changed: make(chan struct{}),
		ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go q.run()
	return q
}

// notifyLocked wakes whoever waits on the state.
func (q *Queue[K, V]) notifyLocked() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// Put queues a write of v at key; Delete queues a delete of keys. On a full
// queue they block until there is room or ctx ends (ctx.Err()), or with
// FailWhenFull return ErrFull; after Close they return ErrClosed. Keys
// queued before an error stay queued.
func (q *Queue[K, V]) Put(ctx context.Context, key K, v V) error {
	return q.add(ctx, key, op[V]{v: v})
}

// Delete queues a delete of each of keys (see Put).
func (q *Queue[K, V]) Delete(ctx context.Context, keys ...K) error {
	for _, k := range keys {
		if err := q.add(ctx, k, op[V]{del: true}); err != nil {
			return err
		}
	}
	return nil
}

func (q *Queue[K, V]) add(ctx context.Context, key K, o op[V]) error {
	q.mu.Lock()
	for {
		if q.closed {
			q.mu.Unlock()
			return ErrClosed
		}
		if _, ok := q.pending[key]; ok {
			q.pending[key] = o // coalesced: the latest operation wins
			q.mu.Unlock()
			return nil
		}
		if len(q.pending)+q.inflight < q.cfg.QueueSize {
			break
		}
		if q.cfg.FailWhenFull {
			q.mu.Unlock()
			return ErrFull
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
	if len(q.order) == 0 {
		q.oldest = time.Now()
	}
	q.pending[key] = o
	q.order = append(q.order, key)
	q.notifyLocked()
	q.mu.Unlock()
	return nil
}

// Len returns the number of keys queued, in flight included.
func (q *Queue[K, V]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.pending) + q.inflight
}

// Flush writes what is queued now at once and returns when the queue is
// empty (operations queued meanwhile included), or ctx.Err() when ctx ends
// first.
func (q *Queue[K, V]) Flush(ctx context.Context) error {
	q.mu.Lock()
	q.urgent++
	q.notifyLocked()
	defer func() {
		q.mu.Lock()
		q.urgent--
		q.mu.Unlock()
	}()
	for {
		if len(q.pending)+q.inflight == 0 {
			q.mu.Unlock()
			return nil
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-q.done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
		q.mu.Lock()
	}
}

// Close refuses new operations, flushes the queue (retrying failed batches
// as configured) until it is empty or ctx ends, then stops the goroutine
// and waits for it. When ctx ended first, the error wraps ErrUnflushed and
// says how many keys were lost. Close is safe to call more than once.
func (q *Queue[K, V]) Close(ctx context.Context) error {
	q.mu.Lock()
	q.closed = true
	q.notifyLocked()
	q.mu.Unlock()
	ferr := q.Flush(ctx)
	q.cancel()
	<-q.done
	if n := int64(q.Len()) + q.lost.Load(); n > 0 {
		return fmt.Errorf("%w: %d keys lost: %w", ErrUnflushed, n, ferr)
	}
	return nil
}

// run is the goroutine: it waits for a batch to be due, writes it, and
// repeats until Close cancels it.
func (q *Queue[K, V]) run() {
	defer close(q.done)
	for {
		batch, ok := q.next()
		if !ok {
			return
		}
		q.write(batch)
		q.mu.Lock()
		q.inflight = 0
		q.notifyLocked()
		q.mu.Unlock()
	}
}

// next waits until a batch is due (full, old enough, or urgent) and takes
// it out of the pending keys.
func (q *Queue[K, V]) next() (map[K]op[V], bool) {
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	q.mu.Lock()
	for {
		n := len(q.order)
		var wait <-chan time.Time
		if n > 0 {
			due := time.Until(q.oldest.Add(q.cfg.Delay))
			if n >= q.cfg.BatchSize || q.urgent > 0 || q.closed || due <= 0 {
				break
			}
			if timer == nil {
				timer = time.NewTimer(due)
			} else {
				timer.Reset(due)
			}
			wait = timer.C
		}
		ch := q.changed
		q.mu.Unlock()
		select {
		case <-ch:
		case <-wait:
		case <-q.ctx.Done():
			return nil, false
		}
		q.mu.Lock()
	}
	n := min(len(q.order), q.cfg.BatchSize)
	batch := make(map[K]op[V], n)
	for _, k := range q.order[:n] {
		batch[k] = q.pending[k]
		delete(q.pending, k)
	}
	q.order = append(q.order[:0:0], q.order[n:]...) // oldest stays: the rest are no older
	q.inflight = n
	q.mu.Unlock()
	return batch, true
}

// write hands a batch to the writer: the writes, then the deletes, each
// retried until it succeeds, MaxAttempts is reached or Close gives up.
func (q *Queue[K, V]) write(batch map[K]op[V]) {
	puts := map[K]V{}
	var dels []K
	for k, o := range batch {
		if o.del {
			dels = append(dels, k)
		} else {
			puts[k] = o.v
		}
	}
	if len(puts) > 0 {
		q.retry(len(puts), func(ctx context.Context) error { return q.cfg.Write(ctx, puts) })
	}
	if len(dels) > 0 {
		q.retry(len(dels), func(ctx context.Context) error { return q.cfg.Delete(ctx, dels) })
	}
}

func (q *Queue[K, V]) retry(keys int, call func(ctx context.Context) error) {
	backoff := q.cfg.MinBackoff
	for attempt := 1; ; attempt++ {
		err := safeCall(q.ctx, call)
		if err == nil {
			if q.cfg.OnWritten != nil {
				q.cfg.OnWritten(keys)
			}
			return
		}
		closing := q.ctx.Err() != nil
		stop := closing || (q.cfg.MaxAttempts > 0 && attempt >= q.cfg.MaxAttempts)
		if q.cfg.OnError != nil {
			q.cfg.OnError(err, keys, attempt, stop)
		}
		if closing {
			q.lost.Add(int64(keys))
		}
		if stop {
			return
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-q.ctx.Done():
			t.Stop()
			if q.cfg.OnError != nil {
				q.cfg.OnError(q.ctx.Err(), keys, attempt, true)
			}
			q.lost.Add(int64(keys))
			return
		}
		backoff = min(2*backoff, q.cfg.MaxBackoff)
	}
}

// safeCall runs a writer call, turning a panic into an error.
func safeCall(ctx context.Context, call func(ctx context.Context) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("writebehind: writer panicked: %v", p)
		}
	}()
	return call(ctx)
}
