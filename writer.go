package redisson

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goredisson/redisson/internal/writebehind"
)

// Writer makes a LocalCachedMap or a MapCache write what is written to it
// to the source of truth too (Redisson's MapWriter): with
// WithWriteThrough in the call that writes, with WithWriteBehind later, in
// batches, from an in-process queue.
//
// Which writes reach it: Put, FastPut, PutAll (LocalCachedMap), the Put
// calls of a MapCache (PutIfAbsent ones only when they stored the value)
// reach Write; Remove (when the key was present) and FastRemove reach
// Delete. Delete of the whole map, expiry and eviction do not (as in
// Redisson).
type Writer[K comparable, V any] struct {
	// Write stores entries in the source of truth. Required.
	Write func(ctx context.Context, entries map[K]V) error
	// Delete deletes keys from the source of truth. Required.
	Delete func(ctx context.Context, keys []K) error
}

// WithWriteThrough gives a LocalCachedMap or a MapCache a Writer called by
// each write, after the map in Redis was written (as Redisson's
// WRITE_THROUGH): the call returns once both are done. When the Writer
// fails, the call returns its error wrapped in ErrWriterFailed, and the
// keys concerned are removed from the map (in Redis and every instance's
// local cache) so that no reader is served a value the source of truth
// did not take: the next read misses and, with WithReadThrough, loads the
// source's value. Concurrent writes of one key may reach the Writer in
// another order than Redis: serialize them (a lock) if that matters. K and
// V must be the map's, both functions set: otherwise every call returns
// ErrInvalidOption. Other objects ignore it.
func WithWriteThrough[K comparable, V any](w Writer[K, V]) ObjectOption {
	return func(o *objectOptions) { o.writer, o.behind = w, nil }
}

// WithWriteBehind gives a LocalCachedMap or a MapCache a Writer called
// from an in-process queue after the write returned (Redisson's
// WRITE_BEHIND): writes are coalesced per key (the latest wins), written
// in batches of at most BatchSize once BatchSize keys are queued or the
// oldest waited Delay, in the order they were queued, one batch at a time.
// A failed batch is tried again with a back-off (see WriteBehind), each
// failure an EventWriteBehindFailed. Flush writes the queue out at once.
//
// No write is lost on a graceful shutdown: LocalCachedMap.Close (and
// Client.Close for every map of the client) writes the queue out before it
// returns, for CloseTimeout at most, and returns an error wrapping
// ErrWriteBehindUnflushed, with the count of keys lost, when that was not
// enough. A process that dies without Close (a crash, SIGKILL) loses the
// queue: at most QueueSize keys, the writes of the last Delay or so; the
// map in Redis has them all. A LocalCachedMap's queue is its handle's; the
// MapCache handles of one name (and K, V) on one Client share one queue,
// the first handle's, kept until Client.Close. K and V must be the map's,
// both functions set and no option negative: otherwise every call returns
// ErrInvalidOption.
func WithWriteBehind[K comparable, V any](w Writer[K, V], wb WriteBehind) ObjectOption {
	return func(o *objectOptions) { o.writer, o.behind = w, &wb }
}

// mapWriter is a map's Writer: it runs it at once (write-through) or
// queues for it (write-behind). It is safe for concurrent use.
type mapWriter[K comparable, V any] struct {
	c          *Client
	kind, name string
	w          Writer[K, V]
	q          *writebehind.Queue[K, V] // nil: write-through
	timeout    time.Duration            // CloseTimeout
	stats      *cacheCounters
}

// writerOf returns the map's mapWriter from opts (nil when none) or the
// error every call of the map returns. A write-behind one starts its queue
// and registers it with the client, which closes it at Client.Close.
func writerOf[K comparable, V any](c *Client, kind, name string, stats *cacheCounters, opts []ObjectOption) (*mapWriter[K, V], error) {
	o := objectOptionsOf(opts)
	if o.writer == nil {
		return nil, nil
	}
	w, ok := o.writer.(Writer[K, V])
	bad := func(field string, v any, want string) error {
		return objectErr(kind, name, invalidOption(ErrInvalidOption, field, v, want))
	}
	switch {
	case !ok:
		return nil, bad("Writer", fmt.Sprintf("%T", o.writer), fmt.Sprintf("a Writer[%T, %T]", *new(K), *new(V)))
	case w.Write == nil || w.Delete == nil:
		return nil, bad("Writer", "a nil function", "Write and Delete")
	}
	mw := &mapWriter[K, V]{c: c, kind: kind, name: name, w: w, stats: stats}
	b := o.behind
	if b == nil {
		return mw, nil
	}
	switch {
	case b.BatchSize < 0:
		return nil, bad("WriteBehind.BatchSize", b.BatchSize, "at least 0")
	case b.Delay < 0:
		return nil, bad("WriteBehind.Delay", b.Delay, "at least 0")
	case b.QueueSize < 0:
		return nil, bad("WriteBehind.QueueSize", b.QueueSize, "at least 0")
	case b.MaxAttempts < 0:
		return nil, bad("WriteBehind.MaxAttempts", b.MaxAttempts, "at least 0")
	case b.CloseTimeout < 0:
		return nil, bad("WriteBehind.CloseTimeout", b.CloseTimeout, "at least 0")
	}
	mw.timeout = orDefault(b.CloseTimeout, defaultWriteTimeout)
	mw.q = writebehind.New(writebehind.Config[K, V]{
		Write:        func(ctx context.Context, m map[K]V) error { return mw.call(ctx, m, nil) },
		Delete:       func(ctx context.Context, keys []K) error { return mw.call(ctx, nil, keys) },
		BatchSize:    orDefault(b.BatchSize, defaultWriteBatch),
		Delay:        orDefault(b.Delay, defaultWriteDelay),
		QueueSize:    orDefault(b.QueueSize, defaultWriteQueue),
		FailWhenFull: b.FailWhenFull,
		MaxAttempts:  b.MaxAttempts,
		MinBackoff:   100 * time.Millisecond,
		MaxBackoff:   10 * time.Second,
		OnError: func(err error, keys, _ int, dropped bool) {
			t := EventWriteBehindFailed
			if dropped {
				t = EventWriteBehindDropped
				stats.writesDropped.Add(uint64(keys))
			}
			c.emit.emit(Event{Type: t, Kind: kind, Name: name, Count: keys, Err: err})
		},
	})
	stats.queued = mw.q.Len
	if !c.writers.add(mw) { // the client closed meanwhile
		_ = mw.q.Close(context.Background())
		return nil, ErrClientClosed
	}
	return mw, nil
}

// orDefault returns v, or def when v is zero.
func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// call runs one Writer call (puts, or else deletes) as a cache.write
// operation, counting it, and turns a panic into an error.
func (mw *mapWriter[K, V]) call(ctx context.Context, puts map[K]V, dels []K) (err error) {
	ctx, rec := mw.c.begin(ctx, mw.kind, mw.name, opCacheWrite)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("writer panicked: %v", p)
		}
		if err != nil {
			mw.stats.writeErrors.Add(1)
		} else {
			mw.stats.writes.Add(uint64(len(puts) + len(dels)))
		}
		rec.end(err, OutcomeOK)
	}()
	if puts != nil {
		return mw.w.Write(ctx, puts)
	}
	return mw.w.Delete(ctx, dels)
}

// wrote hands the map's written entries to the Writer (the map in Redis
// was written). Write-through: on the Writer's error, evict removes the
// keys from the map, and the error wraps ErrWriterFailed. Write-behind:
// the error is ErrWriteBehindFull, ErrHandleClosed or ctx's, the queued
// keys staying queued.
func (mw *mapWriter[K, V]) wrote(ctx context.Context, puts map[K]V, dels []K, evict func(ctx context.Context, keys []K) error) error {
	if mw.q != nil {
		for k, v := range puts {
			if err := mw.q.Put(ctx, k, v); err != nil {
				return mw.queueErr(err)
			}
		}
		return mw.queueErr(mw.q.Delete(ctx, dels...))
	}
	var err error
	keys := dels
	if len(puts) > 0 {
		err = mw.call(ctx, puts, nil)
		keys = make([]K, 0, len(puts))
		for k := range puts {
			keys = append(keys, k)
		}
	} else if len(dels) > 0 {
		err = mw.call(ctx, nil, dels)
	}
	if err == nil {
		return nil
	}
	err = objectErrorf(mw.kind, mw.name, "%w: %w", ErrWriterFailed, err)
	if len(puts) > 0 { // a delete that failed left the map without the keys already
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if eerr := evict(ctx, keys); eerr != nil {
			err = fmt.Errorf("%w; removing the keys from the map failed too: %w", err, eerr)
		}
	}
	return err
}

func (mw *mapWriter[K, V]) queueErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, writebehind.ErrFull):
		return objectErr(mw.kind, mw.name, ErrWriteBehindFull)
	case errors.Is(err, writebehind.ErrClosed):
		return objectErrorf(mw.kind, mw.name, "%w: write-behind queue closed", ErrHandleClosed)
	}
	return objectErr(mw.kind, mw.name, err)
}

// flush writes the write-behind queue out (nothing for write-through).
func (mw *mapWriter[K, V]) flush(ctx context.Context) error {
	if mw == nil || mw.q == nil {
		return nil
	}
	if err := mw.q.Flush(ctx); err != nil {
		return mw.queueErr(err)
	}
	return nil
}

// close writes the queue out for CloseTimeout at most and stops it; the
// error wraps ErrWriteBehindUnflushed when keys were lost. It is safe to
// call more than once.
func (mw *mapWriter[K, V]) close() error {
	if mw == nil || mw.q == nil {
		return nil
	}
	mw.c.writers.remove(mw)
	ctx, cancel := context.WithTimeout(context.Background(), mw.timeout)
	defer cancel()
	if err := mw.q.Close(ctx); err != nil {
		// The batch in flight was reported dropped by OnError; the keys
		// never tried are reported here.
		if n := mw.q.Len(); n > 0 {
			mw.stats.writesDropped.Add(uint64(n))
			mw.c.emit.emit(Event{Type: EventWriteBehindDropped, Kind: mw.kind, Name: mw.name, Count: n, Err: err})
		}
		return objectErrorf(mw.kind, mw.name, "%w: %w", ErrWriteBehindUnflushed, err)
	}
	return nil
}
