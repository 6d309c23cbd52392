package redisson

// BatchSet queues a Set's calls in a Batch (GetBatchSet). Each call sends
// what Set's method of that name sends and its Future holds what that
// method returns; a call's bad input is in its Future at once. It is safe
// for concurrent use.
type BatchSet[T any] struct {
	b *Batch
	o *Set[T]
}

// GetBatchSet returns the set called name for calls queued in b; opts as
// for GetSet. It does no I/O.
func GetBatchSet[T any](b *Batch, name string, opts ...ObjectOption) *BatchSet[T] {
	return &BatchSet[T]{b: b, o: GetSet[T](b.c, name, opts...)}
}

// Name returns the set's name, its Redis key.
func (x *BatchSet[T]) Name() string { return x.o.Name() }

// member queues the command cmd of one member v, its reply read as a
// count of one.
func (x *BatchSet[T]) member(cmd string, v T) *Future[bool] {
	o := &x.o.o.base
	return queueValue(x.b, o, newFuture[bool](countReply{o}), cmd, v)
}

// Add queues Set.Add (one SADD): the Future holds whether v was new.
func (x *BatchSet[T]) Add(v T) *Future[bool] { return x.member("sadd", v) }

// Remove queues Set.Remove (one SREM): the Future holds whether v was there.
func (x *BatchSet[T]) Remove(v T) *Future[bool] { return x.member("srem", v) }

// Contains queues Set.Contains (one SISMEMBER): the Future holds whether v
// is a member.
func (x *BatchSet[T]) Contains(v T) *Future[bool] { return x.member("sismember", v) }
