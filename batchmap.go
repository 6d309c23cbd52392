package redisson

// BatchMap queues a Map's calls in a Batch (GetBatchMap). Each call sends
// what Map's method of that name sends and its Future holds what that
// method returns; a call's bad input is in its Future at once. It is safe
// for concurrent use.
type BatchMap[K comparable, V any] struct {
	b *Batch
	o *Map[K, V]
}

// GetBatchMap returns the map called name for calls queued in b; opts as
// for GetMap. It does no I/O.
func GetBatchMap[K comparable, V any](b *Batch, name string, opts ...ObjectOption) *BatchMap[K, V] {
	return &BatchMap[K, V]{b: b, o: GetMap[K, V](b.c, name, opts...)}
}

// Name returns the map's name, its Redis key.
func (x *BatchMap[K, V]) Name() string { return x.o.name }

// Get queues Map.Get (one HGET): the Future holds the value, and Found
// reports whether key was present.
func (x *BatchMap[K, V]) Get(key K) *Future[V] {
	f := newFuture[V](valueReply[V]{&x.o.base})
	k, err := x.o.encodeKey(key)
	x.b.queue(&x.o.base, f, err, nil, nil, []any{"hget", x.o.name, k})
	return f
}

// Put queues Map.Put (its script): the Future holds the previous value,
// and Found reports whether key was present.
func (x *BatchMap[K, V]) Put(key K, v V) *Future[V] {
	f := newFuture[V](valueReply[V]{&x.o.base})
	k, val, err := x.o.entryArgs(key, v)
	x.b.queue(&x.o.base, f, err, scriptMapPut, []string{x.o.name}, []any{k, val})
	return f
}

// FastPut queues Map.FastPut (one HSET): the Future holds whether key was
// new.
func (x *BatchMap[K, V]) FastPut(key K, v V) *Future[bool] {
	f := newFuture[bool](countReply{&x.o.base})
	k, val, err := x.o.entryArgs(key, v)
	x.b.queue(&x.o.base, f, err, nil, nil, []any{"hset", x.o.name, k, val})
	return f
}

// Remove queues Map.Remove (its script): the Future holds the removed
// value, and Found reports whether key was present.
func (x *BatchMap[K, V]) Remove(key K) *Future[V] {
	f := newFuture[V](valueReply[V]{&x.o.base})
	k, err := x.o.encodeKey(key)
	x.b.queue(&x.o.base, f, err, scriptMapRemove, []string{x.o.name}, []any{k})
	return f
}
