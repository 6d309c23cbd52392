package redisson

// ReadWriteLock is a distributed read-write lock, wire-compatible with
// Redisson's RReadWriteLock: one hash at the lock's name with field "mode"
// ("read" or "write"), the writer's field "<owner>:write" and each reader's
// field "<owner>", each read hold's lease in its own key
// "{name}:<owner>:rwlock_timeout:<n>", and the channel redisson_rwlock:{name}.
//
// Many readers may hold the read lock at once; a writer excludes readers and
// other writers. The owner that holds the write lock may also take the read
// lock, and downgrade by releasing the write lock while it still reads.
// Readers get no priority over waiting writers and writers none over
// readers (as in Redisson), so a steady stream of readers can delay a
// writer.
//
// A ReadWriteLock value is one owner; its ReadLock and WriteLock share it.
// Client.GetReadWriteLock returns a new owner on every call. Safe for
// concurrent use; do not copy.
type ReadWriteLock struct {
	name  string
	read  *Lock
	write *Lock
}

// GetReadWriteLock returns a new owner handle for the read-write lock called
// name. It does no I/O; an empty name makes every method of its locks
// return ErrEmptyName.
func (c *Client) GetReadWriteLock(name string) *ReadWriteLock {
	owner := c.newOwner()
	channel := prefixName("redisson_rwlock", name)
	return &ReadWriteLock{
		name:  name,
		read:  c.newLock(readLock, name, channel, owner),
		write: c.newLock(writeLock, name, channel, owner),
	}
}

// Name returns the lock's name, the Redis key of its hash.
func (rw *ReadWriteLock) Name() string { return rw.name }

// ReadLock returns the read side. It has the surface of Lock: reentrant,
// leases or the watchdog (which renews each read hold's own timeout key),
// Done and Err. Token returns 0: read holds take no fencing token. IsLocked
// reports whether anyone holds a read lock.
func (rw *ReadWriteLock) ReadLock() *Lock { return rw.read }

// WriteLock returns the write side. It has the surface of Lock, and every
// write acquisition takes a fencing token from redisson_lock_token:{name}.
// IsLocked reports whether the lock is in write mode.
func (rw *ReadWriteLock) WriteLock() *Lock { return rw.write }
