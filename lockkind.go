package redisson

// lockKind is what differs between the lock handles: the plain reentrant
// Lock, and the read and write sides of a ReadWriteLock. Everything else
// (ownership, hold counting, idempotent calls, leases, the watchdog, waiting)
// is shared.
type lockKind struct {
	what      string  // in errors: "lock", "read lock", "write lock"
	acquire   *script // KEYS [name, token or timeouts, channel]; ARGV [lease, field, count, pub, msg, extra...]
	release   *script // KEYS [name, channel, latch, extra...]; ARGV [field, count, lease, latch ttl, pub]
	force     *script
	forceArgs func(pub any) []any // ARGV of force, given the publish command
	state     *script
	renew     *script // watchdog batch renewal; per hold: key + renewArgs(hold)
	drop      *script // removes a stale field after a late renewal; nil: leave it to expire
	announce  bool    // a waiter's acquisition is announced on the channel
}

var (
	plainLock = &lockKind{
		what:      "lock",
		acquire:   scriptLockAcquire,
		release:   scriptLockRelease,
		force:     scriptLockForce,
		forceArgs: func(pub any) []any { return []any{pub} },
		state:     scriptLockState,
		renew:     scriptLockRenew,
		drop:      scriptLockDrop,
		announce:  true,
	}
	readLock = &lockKind{
		what:      "read lock",
		acquire:   mustScript("rw_read_acquire"),
		release:   mustScript("rw_read_release"),
		force:     scriptRWForce,
		forceArgs: func(pub any) []any { return []any{"read", pub, "0"} },
		state:     scriptRWState,
		renew:     mustScript("rw_read_renew"),
	}
	writeLock = &lockKind{
		what:      "write lock",
		acquire:   mustScript("rw_write_acquire"),
		release:   mustScript("rw_write_release"),
		force:     scriptRWForce,
		forceArgs: func(pub any) []any { return []any{"write", pub, "1"} },
		state:     scriptRWState,
		renew:     scriptLockRenew,
		drop:      mustScript("rw_write_drop"),
		announce:  true,
	}
	scriptRWForce = mustScript("rw_force_unlock")
	scriptRWState = mustScript("rw_state")
)

// sharedOwner reports whether the kind's handles come in pairs sharing one
// owner (the two sides of a read-write lock): such a handle keeps its owner
// after a lost hold, or the pair would no longer be one owner.
func (k *lockKind) sharedOwner() bool { return k == readLock || k == writeLock }

// rwKeyPrefix is the prefix of every owner's read-hold timeout keys,
// "{name}" (or name itself when it has braces), as Redisson builds them.
func rwKeyPrefix(name string) string {
	s := suffixName(name, "x")
	return s[:len(s)-2]
}

// newHold starts a hold of l's current owner, with what the watchdog needs
// to renew it.
func (l *Lock) newHold() *hold {
	h := newHold(l.name, l.field, l.channel, l.c.slot(l.name))
	h.renew, h.drop = l.kind.renew, l.kind.drop
	if h.drop != nil {
		h.pub = l.c.pubsub.publishArgBackground()
	}
	h.seq = l.c.requests.Add(1)
	h.renewArgs = []any{l.fieldArg}
	if l.kind == readLock {
		h.renewArgs = append(h.renewArgs, l.timeouts)
	}
	return h
}
