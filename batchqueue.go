package redisson

// BatchQueue queues a Queue's calls in a Batch (GetBatchQueue). Each call
// sends what Queue's method of that name sends and its Future holds what
// that method returns; a call's bad input is in its Future at once. It is
// safe for concurrent use.
type BatchQueue[T any] struct {
	b *Batch
	o *Queue[T]
}

// GetBatchQueue returns the queue called name for calls queued in b; opts
// as for GetQueue. It does no I/O.
func GetBatchQueue[T any](b *Batch, name string, opts ...ObjectOption) *BatchQueue[T] {
	return &BatchQueue[T]{b: b, o: GetQueue[T](b.c, name, opts...)}
}

// Name returns the queue's name, its Redis key.
func (x *BatchQueue[T]) Name() string { return x.o.name }

// Offer queues Queue.Offer (one RPUSH); the Future holds no value. Like
// Queue.Offer, a batch go-redis resends after a lost reply adds twice.
func (x *BatchQueue[T]) Offer(v T) *Future[struct{}] {
	return queueValue(x.b, &x.o.base, newFuture[struct{}](doneReply{&x.o.base}), "rpush", v)
}

// Poll queues Queue.Poll (one LPOP): the Future holds the head, and Found
// reports whether the queue had one.
func (x *BatchQueue[T]) Poll() *Future[T] {
	f := newFuture[T](valueReply[T]{&x.o.base})
	x.b.queue(&x.o.base, f, nil, nil, nil, []any{"lpop", x.o.name})
	return f
}
