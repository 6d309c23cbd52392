package redisson

import "github.com/redis/go-redis/v9"

// BatchAtomicLong queues an AtomicLong's calls in a Batch
// (Batch.GetAtomicLong). Each call sends what AtomicLong's method of that
// name sends, call marker included, and its Future holds what that method
// returns. It is safe for concurrent use.
type BatchAtomicLong struct {
	b *Batch
	o *AtomicLong
}

// GetAtomicLong returns the atomic long called name for calls queued in b.
// It does no I/O.
func (b *Batch) GetAtomicLong(name string) *BatchAtomicLong {
	return &BatchAtomicLong{b: b, o: b.c.GetAtomicLong(name)}
}

// Name returns the atomic long's name, its Redis key.
func (x *BatchAtomicLong) Name() string { return x.o.name }

// longReply reads a reply as AtomicLong does: an integer string, nil as
// 0.
type longReply struct{ a *AtomicLong }

func (r longReply) read(cmd *redis.Cmd) (int64, bool, error) {
	n, err := r.a.parse(cmd.Val(), cmd.Err())
	return n, err == nil, err
}

// Get queues AtomicLong.Get (one GET): the Future holds the value, 0 when
// the key does not exist.
func (x *BatchAtomicLong) Get() *Future[int64] {
	f := newFuture[int64](longReply{x.o})
	x.b.queue(&x.o.base, f, nil, nil, nil, []any{"get", x.o.name})
	return f
}

// AddAndGet queues AtomicLong.AddAndGet: the Future holds the new value.
// The call writes its marker, as AtomicLong's does, so that a batch
// go-redis resends after a lost reply adds once.
func (x *BatchAtomicLong) AddAndGet(delta int64) *Future[int64] {
	f := newFuture[int64](longReply{x.o})
	m := x.o.marker()
	x.b.queueMarked(&x.o.base, f, scriptAtomicAdd, m, []string{x.o.name, m}, []any{delta, x.o.c.retryWindowArg})
	return f
}

// IncrementAndGet queues AddAndGet(1).
func (x *BatchAtomicLong) IncrementAndGet() *Future[int64] { return x.AddAndGet(1) }
