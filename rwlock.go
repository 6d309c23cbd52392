package redisson

// ReadWriteLock is a distributed read-write lock, wire-compatible with
// Redisson's RReadWriteLock: one hash at the lock's name with field "mode"
// ("read" or "write"), the writer's field "<owner>:write" and each reader's
// field "<owner>", each read hold's lease in its own key
// "{name}:<owner>:rwlock_timeout:<n>", and the channel redisson_rwlock:{name}.
//
// Many readers may hold the read lock at once, through one handle or many;
// a writer excludes readers and other writers. The write side behaves like a
// Lock between goroutines (one write hold at a time, a new owner number for
// each, re-entry through the hold's context). The read side is shared: any
// number of goroutines may read-hold through one ReadLock handle at once,
// under one owner, and each Unlock releases one read hold. The writer may
// also take the read lock (Redisson: the write hold's owner may read) when
// it acquires the read side with the write hold's context (WriteLock's
// Context or Do), and downgrade by releasing the write lock while it still
// reads; a read acquisition without that context waits for the writer like
// any other.
// Readers get no priority over waiting writers and writers none over
// readers (as in Redisson), so a steady stream of readers can delay a
// writer.
//
// Safe for concurrent use; do not copy.
type ReadWriteLock struct {
	name  string
	read  *Lock
	write *Lock
}

// GetReadWriteLock returns a new handle for the read-write lock called
// name. It does no I/O; an empty name makes every method of its locks
// return ErrEmptyName.
func (c *Client) GetReadWriteLock(name string) *ReadWriteLock {
	channel := prefixName("redisson_rwlock", name)
	rw := &ReadWriteLock{
		name:  name,
		read:  c.newLock(readLock, name, channel, ""),
		write: c.newLock(writeLock, name, channel, ""),
	}
	rw.read.pair = &rw.write.lockCore
	return rw
}

// Name returns the lock's name, the Redis key of its hash.
func (rw *ReadWriteLock) Name() string { return rw.name }

// ReadLock returns the read side. It has the surface of Lock: leases or the
// watchdog (which renews each read hold's own timeout key), Done and Err,
// but its holds are shared by the goroutines using it (see ReadWriteLock).
// IsHeld, HoldCount, Done and Err report the handle's own read holds or,
// when it has none, those taken under a write hold's context. Token returns 0: read holds take
// no fencing token. IsLocked reports whether anyone holds a read lock.
//
// Unlock given a read hold's context (Context or Do) releases a hold of
// that context's only: once its lease ran out it returns ErrLeaseLost (and
// ErrNotHeld once it was released) and leaves the handle's newer read holds
// alone. Unlock without such a context drops one of the handle's current
// read holds, whichever goroutine took it, or reports ErrLeaseLost when the
// handle's holds were lost and it has no newer one. Read holds that overlap
// share one owner, as in Redisson, and so one context: an Unlock of any of
// them drops the owner's latest one.
func (rw *ReadWriteLock) ReadLock() *Lock { return rw.read }

// WriteLock returns the write side. It has the surface of Lock, and every
// write acquisition takes a fencing token from redisson_lock_token:{name}.
// IsLocked reports whether the lock is in write mode.
func (rw *ReadWriteLock) WriteLock() *Lock { return rw.write }
