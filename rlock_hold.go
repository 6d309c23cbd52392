package redisson

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Lock's state, its calls to Redis and the bookkeeping of its hold,
// below the public API in rlock.go and built on the kinds of lockkind.go.
// Every method here runs with l.mu held, except acquire (which takes it),
// ident, and newIdentity while the handle is being built.

// Lock is a distributed reentrant lock, wire-compatible with Redisson's RLock:
// a hash at the lock's name whose field "<client uuid>:<owner number>" holds
// the hold count, a PEXPIRE'd lease, the channel redisson_lock__channel:{name}
// carrying the unlock message 0, and a fencing counter at
// redisson_lock_token:{name}.
//
// Between goroutines a Lock behaves like a sync.Mutex: while one goroutine's
// acquisition holds it, another goroutine's Lock waits and its TryLock
// returns false, nil once its wait runs out, whether it uses the same handle
// or another one, in this process or elsewhere. Unlock may come from any
// goroutine. Re-entry is explicit: a nested acquisition re-enters (the hold
// count grows, as in Redisson) only when its context comes from the hold,
// through Context or Do; without it a nested call waits like any other
// owner. Every acquisition that is not a re-entry takes an owner number of
// its own, so Owner changes from hold to hold. A hold that is lost (Done
// closes, Err reports ErrLeaseLost) frees the handle for the next acquisition;
// an Unlock given the lost hold's context then reports ErrLeaseLost and
// leaves the next hold alone. A Lock is safe for concurrent use; do not copy
// it.
type Lock struct {
	c *Client
	lockNames
	kind     *lockKind
	latchPre string // unlock latch key prefix
	badName  error  // set when the name cannot work on this topology

	// gate holds a token from the start of an acquisition that is not a
	// re-entry until its hold ends (final Unlock, or loss): the goroutines
	// sharing the handle wait for it in turn (rlock_owner.go). nil for the
	// read side of a read-write lock, whose holds are shared.
	gate chan struct{}
	// Read side of a read-write lock: pair is the write side, fixedOwner
	// marks a reader under a write hold's owner (it never changes owner).
	pair       *Lock
	fixedOwner bool

	mu      sync.Mutex      // serializes this owner's script calls; guards what follows
	count   int             // hold count as last reported by Redis
	lease   leaseArg        // lease of the latest acquisition
	hold    *hold           // current hold, nil when count == 0
	leases  []time.Time     // kind.stackedLeases, explicit leases: each hold's deadline, latest last
	used    bool            // the current owner has had a hold: the next one takes a new owner
	holdSet chan struct{}   // closed when a hold starts (for gate waiters); nil when nobody waits
	downs   map[*hold]*Lock // read side: readers under the pair's write holds, by write hold

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
func (l *Lock) newIdentity(owner string) {
	if owner == "" {
		owner = l.c.newOwner()
	}
	l.id.Store(l.kind.identify(l.c, l.lockNames, owner, owner+l.kind.suffix))
}

// ident returns the handle's current identity. It changes only in
// newIdentity, with l.mu held (or before the handle is shared).
func (l *Lock) ident() *identity { return l.id.Load() }

// syncLost forgets a hold that ended without Unlock and returns why it
// ended (nil while it lasts).
func (l *Lock) syncLost() error {
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
func (l *Lock) endHold(err error) {
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
func (l *Lock) stopTracking(h *hold) {
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	l.c.watchdog.remove(h)
}

// endAt makes h end with ErrLeaseLost at deadline (its lease, as known
// here), for a hold nobody renews, and registers it with the watchdog so that
// Client.Close ends it.
func (l *Lock) endAt(h *hold, deadline time.Time) {
	if h.timer != nil {
		h.timer.Stop()
	}
	h.deadline = deadline
	w := l.c.watchdog
	h.timer = time.AfterFunc(time.Until(deadline), func() { w.remove(h); h.end(ErrLeaseLost) })
	if !w.keep(h) { // Close ends every live hold; after it, this one at once
		h.end(ErrClientClosed)
	}
}

// acquire runs the acquire script once. It reports whether the owner holds
// the lock and, when not, the holder's remaining lease (-1: no expiry). A
// waiter's acquisition is announced on the channel, and a re-entry that
// shortens the lease tells the waiters (see lockWakePolicy). wait is the
// caller's (< 0: none), for a kind whose identity has a waitArg.
func (l *Lock) acquire(ctx context.Context, lease, wait time.Duration, w waiting, got **hold) (bool, time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLost()
	if l.hold == nil && l.used && l.gate == nil && !l.fixedOwner {
		// A reader's new hold after all its holds ended: a new owner.
		l.newIdentity("")
		l.used = false
	}
	ok, retry, err := l.acquireLocked(ctx, lease, wait, w)
	if ok && got != nil {
		*got = l.hold
	}
	return ok, retry, err
}

// acquireLocked is acquire with l.mu held and lost holds synced.
func (l *Lock) acquireLocked(ctx context.Context, lease, wait time.Duration, w waiting) (bool, time.Duration, error) {
	// A re-entry into a watchdog hold keeps the watchdog lease: a shorter
	// PEXPIRE would let the key expire while the watchdog counts on more.
	watched := lease == 0 || (l.hold != nil && l.hold.watched)
	if watched {
		lease = l.c.opts.WatchdogTimeout
	}
	l.lease.set(max(lease.Milliseconds(), 1))
	lease = time.Duration(l.lease.ms) * time.Millisecond
	var pub, msg any = "", ""
	if w.subscribed && l.kind.queuePub != "" {
		pub = l.kind.queuePub
	} else if l.kind.announce {
		pub = l.c.pubsub.publishArg(ctx)
		if w.subscribed {
			msg = "2"
			if w.age >= 0 {
				msg = strconv.FormatInt(3+w.age.Milliseconds(), 10)
			}
		}
	}
	start := time.Now() // the lease deadline counts from before the send
	// The hold counts as lost a little before Redis would drop it, so that
	// the holder hears of it before any other owner can acquire.
	expires := start.Add(lease - lossMargin(lease))
	id := l.ident()
	args := append([]any{l.lease.arg, id.fieldArg, l.count, pub, msg}, id.acqExtra...)
	if id.waitArg != nil {
		args = append(args, id.waitArg(wait))
	}
	var acked int64
	var cmd *redis.Cmd
	ack := l.c.opts.ReplicaAck
	if ack.Replicas > 0 {
		cmd, acked = l.c.scripts.runWait(ctx, l.kind.acquire, id.acqKeys, ack.Replicas, ack.Timeout, args...)
	} else {
		cmd = l.c.scripts.run(ctx, l.kind.acquire, id.acqKeys, args...)
	}
	res, err := cmd.Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			// The script may have run and its reply been lost: undo it.
			l.compensate(ctx, expires)
		}
		return false, 0, objectErr(l.kind.what, l.name, err)
	}
	if len(res) != 2 {
		return false, 0, objectErrorf(l.kind.what, l.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
	}
	if res[0] == 0 {
		if res[1] < 0 {
			return false, -1, nil // held without expiry
		}
		return false, time.Duration(res[1]) * time.Millisecond, nil
	}
	if ack.Replicas > 0 && acked < int64(ack.Replicas) {
		l.compensate(ctx, expires)
		return false, 0, objectErrorf(l.kind.what, l.name, "%w: %d of %d replicas acknowledged within %v", ErrNotReplicated, acked, ack.Replicas, ack.Timeout)
	}
	if l.hold != nil && res[0] == 1 {
		// We thought we re-entered, but Redis no longer knew the old hold:
		// it was lost, and this is a new hold under the same field.
		old := l.hold
		l.stopTracking(old)
		old.end(ErrLeaseLost)
		l.hold = nil
	}
	h := l.hold
	switch {
	case h == nil:
		h = l.newHold()
		l.hold, l.used = h, true
		l.leases = l.leases[:0]
		if l.kind.stackedLeases && !watched {
			l.leases = append(l.leases, expires)
		}
		l.shown.Store(h)
		if l.holdSet != nil {
			close(l.holdSet)
			l.holdSet = nil
		}
		l.track(ctx, h, watched, expires)
	case h.watched:
		l.c.watchdog.extend(h, expires)
	case watched:
		// Re-entered with a watchdog lease: the watchdog takes over.
		l.leases = l.leases[:0]
		l.track(ctx, h, true, expires)
	case l.kind.stackedLeases:
		l.leases = append(l.leases, expires)
		l.endAt(h, latest(l.leases))
	default:
		l.endAt(h, expires) // the new lease replaces the old one, shorter or not
	}
	l.count = int(res[0])
	l.token.Store(res[1])
	return true, 0, nil
}

// newHold starts a hold of l's current owner, with what the watchdog needs
// to renew it.
func (l *Lock) newHold() *hold {
	id := l.ident()
	h := newHold(l.name, id.field, l.channel, l.c.slot(l.name))
	h.renew, h.drop = l.kind.renew, l.kind.drop
	if h.drop != nil {
		h.pub = l.c.pubsub.publishArgBackground()
	}
	h.seq = l.c.requests.Add(1)
	h.renewArgs = append([]any{id.fieldArg}, id.renewExtra...)
	return h
}

// track starts keeping h: the watchdog renews it, or a timer ends it at its
// lease deadline. If the client closed meanwhile, the hold just taken is
// released again and ended with ErrClientClosed.
func (l *Lock) track(ctx context.Context, h *hold, watched bool, expires time.Time) {
	if !watched {
		l.endAt(h, expires)
		return
	}
	if h.timer != nil {
		h.timer.Stop()
		h.timer = nil
	}
	h.watched = true
	if !l.c.watchdog.add(h, expires) {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
		defer cancel()
		_, _ = l.release(cctx, 1, l.latchPre+"c:"+l.ident().field+":"+l.c.newRequest())
		h.end(ErrClientClosed)
	}
}

// compensate undoes an acquire whose reply never arrived, if it ran: a
// release sent with the count the acquire would have produced changes
// nothing when the acquire did not run. If the undo fails too, a re-entry
// may have shortened the hold's lease (its timer is moved to the earlier
// deadline), and a first acquisition may have left a field behind: the
// handle then takes a new owner field, so that it never adopts it.
func (l *Lock) compensate(ctx context.Context, expires time.Time) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
	defer cancel()
	n, err := l.release(cctx, l.count+1, l.latchPre+"c:"+l.ident().field+":"+l.c.newRequest())
	switch {
	case err == nil && n >= 0:
		l.count = int(n)
	case l.hold == nil:
		// A first acquisition may have left a field behind: a handle of
		// its own takes a new one; the two sides of a read-write lock keep
		// theirs and adopt it (see newIdentity).
		if !l.fixedOwner {
			l.newIdentity("")
			l.used = false
		}
	case !l.hold.watched && expires.Before(l.hold.deadline):
		l.endAt(l.hold, expires)
	}
}

// release runs the release script once and returns the new hold count
// (-1: not held). latch is the key that marks this hold's full release for
// a resent call; once a full release has returned it is queued for deletion.
func (l *Lock) release(ctx context.Context, count int, latch string) (int64, error) {
	if l.lease.arg == nil {
		l.lease.set(l.c.opts.WatchdogTimeout.Milliseconds())
	}
	id := l.ident()
	id.relKeys[2] = latch
	res, err := l.c.scripts.run(ctx, l.kind.release, id.relKeys,
		id.fieldArg, count, l.lease.arg, l.c.retryWindowArg, l.c.pubsub.publishArg(ctx)).Int64Slice()
	if err != nil {
		return 0, err
	}
	if len(res) != 2 {
		return 0, objectErrorf(l.kind.what, l.name, "%w: release returned %v", ErrUnexpectedReply, res)
	}
	if res[0] == 0 {
		l.c.janitor.add(latch)
		if res[1] > 1 {
			// Other clients listen: give their waiters the first chance
			// before this client takes the lock again.
			l.c.pubsub.yield(l.channel)
		}
	}
	return res[0], nil
}

// latchKey names the latch of the current hold's full release: the latest
// fencing token (unique per acquisition of the name), or for read holds,
// which take no token, the owner and the hold's number.
func (l *Lock) latchKey() string {
	if l.kind.untokened {
		return l.latchPre + l.ident().field + ":" + strconv.FormatUint(l.hold.seq, 10)
	}
	return l.latchPre + strconv.FormatInt(l.token.Load(), 10)
}

// unlock is Unlock with l.mu held.
func (l *Lock) unlock(ctx context.Context) error {
	if err := l.syncLost(); err != nil {
		return &leaseLostError{name: l.name}
	}
	if l.count == 0 {
		return objectErrorf(l.kind.what, l.name, "%w", ErrNotHeld)
	}
	h := l.hold
	final := l.count == 1
	var deadline time.Time
	if final && h.watched {
		// Renewal must never outlive Unlock: stop it before the release.
		deadline = l.c.watchdog.forget(h)
	}
	// The latest acquisition's fencing token identifies this hold's full
	// release: a resent call, or an Unlock repeated after an error, uses the
	// same latch.
	n, err := l.release(ctx, l.count, l.latchKey())
	switch {
	case err != nil:
		if final && h.watched {
			l.endAt(h, deadline) // nobody renews it now: report its end
		}
		return objectErr(l.kind.what, l.name, err)
	case n < 0:
		l.endHold(ErrLeaseLost)
		return &leaseLostError{name: l.name}
	case n == 0:
		l.endHold(ErrNotHeld)
	case final:
		// Redis counted more holds than this owner knew of (a re-entry
		// whose reply was lost and whose undo failed): the caller meant to
		// let go, so release those too.
		for i := 0; n > 0 && i < 64 && err == nil; i++ {
			n, err = l.release(ctx, int(n), l.latchKey())
		}
		if err != nil || n > 0 {
			if h.watched {
				l.endAt(h, deadline)
			}
			if err == nil {
				err = objectErrorf(l.kind.what, l.name, "%w: %d holds left", ErrUnexpectedReply, n)
			}
			return objectErr(l.kind.what, l.name, err)
		}
		l.endHold(ErrNotHeld)
	default:
		l.count = int(n)
		if l.kind.stackedLeases && !h.watched && len(l.leases) > 1 {
			// Redis dropped the latest hold's lease: the owner holds until
			// the longest of the others ends.
			l.leases = l.leases[:min(len(l.leases)-1, l.count)]
			l.endAt(h, latest(l.leases))
		}
	}
	return nil
}

// extend sets the current hold's lease to lease from now (0: the watchdog's
// lease, renewed from then on), through the kind's renewal script.
func (l *Lock) extend(ctx context.Context, lease time.Duration) error {
	h := l.hold
	watched := lease == 0
	if watched {
		lease = l.c.opts.WatchdogTimeout
	}
	ms := max(lease.Milliseconds(), 1)
	lease = time.Duration(ms) * time.Millisecond
	var deadline time.Time
	wasWatched := h.watched
	if wasWatched {
		// The watchdog must not renew it with its own lease meanwhile.
		deadline = l.c.watchdog.forget(h)
	}
	start := time.Now()
	expires := start.Add(lease - lossMargin(lease))
	arg := strconv.FormatInt(ms, 10)
	res, err := l.c.scripts.run(ctx, h.renew, []string{h.key}, append([]any{arg}, h.renewArgs...)...).Int64Slice()
	if err == nil && len(res) != 1 {
		err = objectErrorf(l.kind.what, l.name, "%w: extend returned %v", ErrUnexpectedReply, res)
	} else if err != nil {
		err = objectErr(l.kind.what, l.name, err)
	}
	if err != nil {
		if wasWatched && !l.c.watchdog.add(h, deadline) {
			l.endAt(h, deadline)
		}
		return err
	}
	if res[0] != 1 {
		l.endHold(ErrLeaseLost)
		return &leaseLostError{name: l.name}
	}
	l.lease.set(ms)
	h.watched = false
	l.track(ctx, h, watched, expires)
	return nil
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
