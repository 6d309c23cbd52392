package redisson

import "time"

// BatchBucket queues a Bucket's calls in a Batch (GetBatchBucket). Each
// call sends what Bucket's method of that name sends and its Future holds
// what that method returns; a call's bad input is in its Future at once.
// It is safe for concurrent use.
type BatchBucket[T any] struct {
	b *Batch
	o *Bucket[T]
}

// GetBatchBucket returns the bucket called name, holding values of type T,
// for calls queued in b; opts as for GetBucket. It does no I/O.
func GetBatchBucket[T any](b *Batch, name string, opts ...ObjectOption) *BatchBucket[T] {
	return &BatchBucket[T]{b: b, o: GetBucket[T](b.c, name, opts...)}
}

// Name returns the bucket's name, its Redis key.
func (x *BatchBucket[T]) Name() string { return x.o.name }

// Get queues Bucket.Get (one GET): the Future holds the value, and Found
// reports whether the bucket existed.
func (x *BatchBucket[T]) Get() *Future[T] {
	f := newFuture[T](valueReply[T]{&x.o.base})
	x.b.queue(&x.o.base, f, nil, nil, nil, []any{"get", x.o.name})
	return f
}

// Set queues Bucket.Set; the Future holds no value.
func (x *BatchBucket[T]) Set(v T) *Future[struct{}] { return x.set(v, false, 0) }

// SetWithTTL queues Bucket.SetWithTTL; the Future holds no value.
func (x *BatchBucket[T]) SetWithTTL(v T, ttl time.Duration) *Future[struct{}] {
	return x.set(v, true, ttl)
}

func (x *BatchBucket[T]) set(v T, withTTL bool, ttl time.Duration) *Future[struct{}] {
	f := newFuture[struct{}](doneReply{&x.o.base})
	args, err := x.o.setArgs(v, "set", withTTL, ttl)
	x.b.queue(&x.o.base, f, err, scriptBucketSet, []string{x.o.name}, args)
	return f
}

// Delete queues Bucket.Delete (one DEL): the Future holds whether the
// bucket existed.
func (x *BatchBucket[T]) Delete() *Future[bool] {
	f := newFuture[bool](countReply{&x.o.base})
	x.b.queue(&x.o.base, f, nil, nil, nil, []any{"del", x.o.name})
	return f
}
