package redisson

import "github.com/redis/go-redis/v9"

// BatchList queues a List's calls in a Batch (GetBatchList). Each call
// sends what List's method of that name sends and its Future holds what
// that method returns; a call's bad input is in its Future at once. It is
// safe for concurrent use.
type BatchList[T any] struct {
	b *Batch
	o *List[T]
}

// GetBatchList returns the list called name for calls queued in b; opts as
// for GetList. It does no I/O.
func GetBatchList[T any](b *Batch, name string, opts ...ObjectOption) *BatchList[T] {
	return &BatchList[T]{b: b, o: GetList[T](b.c, name, opts...)}
}

// Name returns the list's name, its Redis key.
func (x *BatchList[T]) Name() string { return x.o.Name() }

// Add queues List.Add (one RPUSH): the Future holds the list's new size.
// Like List.Add, a batch go-redis resends after a lost reply adds twice.
func (x *BatchList[T]) Add(v T) *Future[int64] {
	o := &x.o.o.base
	return queueValue(x.b, o, newFuture[int64](intReply{o}), "rpush", v)
}

// Get queues List.Get (one LINDEX): the Future holds the element at index;
// an index outside the list is ErrIndexOutOfRange, as for List.Get.
func (x *BatchList[T]) Get(index int64) *Future[T] {
	o := &x.o.o
	read := x.o.element(index)
	f := newFuture[T](readFunc[T](func(cmd *redis.Cmd) (T, bool, error) {
		v, err := read(cmd.Text())
		return v, err == nil, err
	}))
	x.b.queue(&o.base, f, x.o.checkIndex(index), nil, nil, []any{"lindex", o.name, index})
	return f
}
