package redisson

import "github.com/redis/go-redis/v9"

// Future is the result of one call queued in a Batch, there once the
// batch's Execute has returned: the value the object's own method returns,
// whether it found one (Found), and its error. Before Execute has returned
// every read reports ErrBatchNotExecuted; in a BatchSkipResults batch,
// ErrResultSkipped. A Future is read after Execute has returned, from any
// goroutine; it may not be copied.
type Future[T any] struct {
	r     replyReader[T] // the object's reading of the reply
	val   T
	found bool
	err   error
	done  bool
}

func newFuture[T any](r replyReader[T]) *Future[T] { return &Future[T]{r: r} }

// replyReader reads a batched call's reply as the object's method does:
// (value, found, error). The readers below hold one pointer, so that a
// Future takes one without an allocation of its own.
type replyReader[T any] interface {
	read(cmd *redis.Cmd) (T, bool, error)
}

// valueReply reads a bulk string (or nil: not found) with the object's
// codec: a Bucket's Get, a Map's Get, Put and Remove.
type valueReply[T any] struct{ o *base }

func (r valueReply[T]) read(cmd *redis.Cmd) (T, bool, error) {
	return decodeReply[T](r.o, cmd.Val(), cmd.Err())
}

// doneReply reads a reply that carries nothing but success.
type doneReply struct{ o *base }

func (r doneReply) read(cmd *redis.Cmd) (struct{}, bool, error) {
	err := r.o.wrap(cmd.Err())
	return struct{}{}, err == nil, err
}

// countReply reads an integer reply as "was it there" (n == 1, also
// reported as found): DEL, HSET, SADD, SREM, SISMEMBER of one.
type countReply struct{ o *base }

func (r countReply) read(cmd *redis.Cmd) (bool, bool, error) {
	n, err := cmd.Int64()
	if err != nil {
		return false, false, r.o.wrap(err)
	}
	return n == 1, n == 1, nil
}

// intReply reads an integer reply: RPUSH's new length.
type intReply struct{ o *base }

func (r intReply) read(cmd *redis.Cmd) (int64, bool, error) {
	n, err := cmd.Int64()
	return n, err == nil, r.o.wrap(err)
}

// readFunc is a reader that needs more than the object (List.Get's index).
type readFunc[T any] func(cmd *redis.Cmd) (T, bool, error)

func (f readFunc[T]) read(cmd *redis.Cmd) (T, bool, error) { return f(cmd) }

// Result returns the call's value and error: its zero value and
// ErrBatchNotExecuted before Execute has returned.
func (f *Future[T]) Result() (T, error) {
	if !f.done {
		var zero T
		return zero, ErrBatchNotExecuted
	}
	return f.val, f.err
}

// Value returns the call's value: the zero value when it failed, found
// nothing or is not yet executed.
func (f *Future[T]) Value() T { return f.val }

// Err returns the call's error: nil on success, ErrBatchNotExecuted before
// Execute has returned.
func (f *Future[T]) Err() error {
	if !f.done {
		return ErrBatchNotExecuted
	}
	return f.err
}

// Found reports whether the call found a value, where the object's method
// reports one as its boolean (a Get, Put or Remove: the key was present);
// for the other calls, whether it succeeded.
func (f *Future[T]) Found() bool { return f.done && f.err == nil && f.found }

// refuse settles the Future with err, unless it already holds a refusal
// of its own (the call's bad input).
func (f *Future[T]) refuse(err error) {
	if f.err == nil {
		f.err = err
	}
	f.done = true
}

// settle reads cmd, the call's reply (nil when it was not sent; batchErr
// then says why), and returns the call's error.
func (f *Future[T]) settle(cmd *redis.Cmd, batchErr error, skip bool) error {
	f.done = true
	if cmd == nil {
		f.err = batchErr
		return f.err
	}
	f.val, f.found, f.err = f.r.read(cmd)
	if !skip {
		return f.err
	}
	err := f.err
	var zero T
	f.val, f.found, f.err = zero, false, ErrResultSkipped
	return err
}
