package redisson

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// The Lock's state and the bookkeeping of its hold, at the bottom of the
// lock files: rlock_calls.go (its calls to Redis), rlock_owner.go (the gate
// between goroutines and re-entry) and rlock.go (the public API) build on
// it, and it reads only the kinds of lockkind.go and the hold of hold.go (a
// hold it starts carries its kind's renewal spec, so the watchdog reads no
// kind). Every method here runs with l.mu held, except ident, and init and
// newIdentity while the handle is being built.

// lockCore is what every Lock handle is underneath: its identity, the gate
// between the goroutines sharing it, and the state of its hold. The lock
// machinery (this file, rlock_calls.go, rlock_owner.go) works on it; the
// public API (rlock.go) embeds it, so the machinery never reaches back up.
type lockCore struct {
	base      // kind: kind.what
	lockNames // the keys
	kind      *lockKind
	latchPre  string // unlock latch key prefix

	// gate holds a token from the start of an acquisition that is not a
	// re-entry until its hold ends (final Unlock, or loss): the goroutines
	// sharing the handle wait for it in turn (rlock_owner.go). nil for the
	// read side of a read-write lock, whose holds are shared.
	gate chan struct{}
	// Read side of a read-write lock: pair is the write side, fixedOwner
	// marks a reader under a write hold's owner (it never changes owner).
	pair       *lockCore
	fixedOwner bool

	mu      sync.Mutex          // serializes this owner's script calls; guards what follows
	count   int                 // hold count as last reported by Redis
	lease   leaseArg            // lease of the latest acquisition
	hold    *hold               // current hold, nil when count == 0
	leases  []time.Time         // kind.stackedLeases, explicit leases: each hold's deadline, latest last
	used    bool                // the current owner has had a hold: the next one takes a new owner
	holdSet chan struct{}       // closed when a hold starts (for gate waiters); nil when nobody waits
	downs   map[*hold]*lockCore // read side: readers under the pair's write holds, by write hold

	// Read without mu, so that they never wait for a call in flight.
	token atomic.Int64             // fencing token of the latest acquisition
	shown atomic.Pointer[hold]     // the current hold, or the one that ended last
	id    atomic.Pointer[identity] // the owner, as the kind addresses it; stored with mu held
}

// leaseArg is a lease in milliseconds with its script argument, boxed once.
type leaseArg struct {
	ms  int64
	arg any
}

func (a *leaseArg) set(ms int64) {
	if a.arg == nil || a.ms != ms {
		a.ms, a.arg = ms, strconv.FormatInt(ms, 10)
	}
}

// newIdentity gives the handle a fresh owner field. Every acquisition that
// is not a re-entry takes one once the current owner has had a hold, and a
// handle whose hold was lost, or whose undo of an acquire failed, takes one
// at once, so that a stale field of its old identity that is still in Redis
// is never taken for its own (except a reader under a write hold's owner,
// which must stay that owner: a stale field of its is adopted by the acquire
// script's resend path, which gives it the lease asked for).
func (l *lockCore) newIdentity(owner string) {
	if owner == "" {
		owner = l.c.newOwner()
	}
	l.id.Store(l.kind.identify(l.c, l.lockNames, owner, owner+l.kind.suffix))
}

// ident returns the handle's current identity. It changes only in
// newIdentity, with l.mu held (or before the handle is shared).
func (l *lockCore) ident() *identity { return l.id.Load() }

// syncLost forgets a hold that ended without Unlock and returns why it
// ended (nil while it lasts).
func (l *lockCore) syncLost() error {
	if l.hold == nil {
		return nil
	}
	if ended, err := l.hold.ended(); ended {
		l.endHold(err)
		return err
	}
	return nil
}

// endHold ends the current hold with cause err and forgets it; a hold that
// did not end by Unlock also retires the owner field.
func (l *lockCore) endHold(err error) {
	h := l.hold
	l.stopTracking(h)
	h.end(err)
	l.count, l.hold, l.leases = 0, nil, l.leases[:0]
	if err != ErrNotHeld && !l.fixedOwner {
		l.newIdentity("")
		l.used = false
	}
	if l.gate != nil {
		select {
		case <-l.gate: // the handle is free for the next acquisition
		default:
		}
	}
}

// stopTracking stops the watchdog renewing h and h's lease timer.
func (l *lockCore) stopTracking(h *hold) {
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	l.c.watchdog.remove(h)
}

// endAt makes h end with ErrLeaseLost at deadline (its lease, as known
// here), for a hold nobody renews, and registers it with the watchdog so that
// Client.Close ends it.
func (l *lockCore) endAt(h *hold, deadline time.Time) {
	if h.timer != nil {
		h.timer.Stop()
	}
	h.deadline = deadline
	w := l.c.watchdog
	// The timer fires at the deadline: the loss is not late.
	h.timer = time.AfterFunc(time.Until(deadline), func() { l.c.watchdog.remove(h); h.lose(l.c.emit, lostTimer, 0) })
	if !w.keep(h) { // Close ends every live hold; after it, this one at once
		h.end(ErrClientClosed)
	}
}

// newHold starts a hold of l's current owner, with what the watchdog needs
// to renew it: the kind's renewal spec, the owner's renewal arguments and,
// for a kind that drops stale fields, the publish command.
func (l *lockCore) newHold() *hold {
	id := l.ident()
	h := newHold(l.name, id.field, l.channel, l.c.slot(l.name))
	h.renewal = l.kind.holdRenewal()
	if h.renewal.drop != nil {
		h.pub = l.c.pubsub.publishArgBackground()
	}
	h.seq = l.c.requests.Add(1)
	h.renewArgs = append(append(h.renewBuf[:0], id.fieldArg), id.renewExtra...)
	return h
}

// latest returns the latest of deadlines (not empty).
func latest(deadlines []time.Time) time.Time {
	d := deadlines[0]
	for _, t := range deadlines[1:] {
		if t.After(d) {
			d = t
		}
	}
	return d
}

// init makes l a handle of the given kind; owner "" takes a new owner.
func (l *lockCore) init(c *Client, kind *lockKind, name, channel, owner string) {
	l.base = newBase(c, kind.what, name, nil, channel)
	l.lockNames = lockNames{
		key:      name,
		channel:  channel,
		tokenKey: prefixName("redisson_lock_token", name),
	}
	l.kind = kind
	l.latchPre = prefixName("redisson_unlock_latch", name) + ":"
	l.keys = newBaseKeys(name, l.tokenKey, channel)
	if !kind.shared {
		l.gate = make(chan struct{}, 1)
	}
	l.newIdentity(owner)
}
