package redisson

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Lock's calls to Redis: acquire, release, the undo of an acquire whose
// reply was lost, and the start of a hold's tracking. They run with l.mu
// held (acquire and track take it themselves or are called under it), and
// build on the state and hold bookkeeping of lockcore.go. Like all the
// machinery they are methods of lockCore, never of the public Lock.

// acquire runs the acquire script once. It reports whether the owner holds
// the lock and, when not, the holder's remaining lease (-1: no expiry). A
// waiter's acquisition is announced on the channel, and a re-entry that
// shortens the lease tells the waiters (see lockWakePolicy). wait is the
// caller's (< 0: none), for a kind whose identity has a waitArg.
func (l *lockCore) acquire(ctx context.Context, lease, wait time.Duration, w waitState, got **hold) (bool, time.Duration, error) {
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
func (l *lockCore) acquireLocked(ctx context.Context, lease, wait time.Duration, w waitState) (bool, time.Duration, error) {
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
	if l.kind.tellsNext {
		msg = l.c.pubsub.publishArg(ctx)
	}
	start := time.Now() // the lease deadline counts from before the send
	// The hold counts as lost a little before Redis would drop it, so that
	// the holder hears of it before any other owner can acquire.
	expires := start.Add(lease - lossMargin(lease))
	id := l.ident()
	argv := l.kind.acquire.Argv(id.acqKeysArg, 6+len(id.acqExtra))
	argv = append(argv, l.lease.arg, id.fieldArg, l.count, pub, msg)
	argv = append(argv, id.acqExtra...)
	if id.waitArg != nil {
		argv = append(argv, id.waitArg(wait))
	}
	var acked int64
	var cmd *redis.Cmd
	ack := l.c.opts.ReplicaAck
	if ack.Replicas > 0 {
		cmd, acked = l.c.scripts.runWait(ctx, l.kind.acquire, id.acqKeys, ack.Replicas, ack.Timeout, argv[3+len(id.acqKeys):]...)
	} else {
		cmd = l.c.scripts.runArgv(ctx, l.kind.acquire, id.acqKeys, argv, nil)
	}
	var buf [2]int64
	res, err := int64s(cmd, buf[:0])
	if err != nil {
		if mayHaveRun(err) {
			// The script may have run and its reply been lost: undo it.
			l.compensate(ctx, expires)
		}
		return false, 0, objectErr(l.kind.what, l.name, err)
	}
	if len(res) != 2 {
		// A copy, so that res (and buf) can stay on the stack.
		return false, 0, objectErrorf(l.kind.what, l.name, "%w: acquire returned %v", ErrUnexpectedReply, append([]int64(nil), res...))
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
		old.lose(l.c.emit, lostFound, 0)
		l.hold = nil
	}
	h := l.hold
	switch {
	case h == nil:
		h = l.newHold()
		h.taken = start.Sub(epoch)
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

// track starts keeping h: the watchdog renews it, or a timer ends it at its
// lease deadline. If the client closed meanwhile, the hold just taken is
// released again and ended with ErrClientClosed.
func (l *lockCore) track(ctx context.Context, h *hold, watched bool, expires time.Time) {
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
func (l *lockCore) compensate(ctx context.Context, expires time.Time) {
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
func (l *lockCore) release(ctx context.Context, count int, latch string) (int64, error) {
	if l.lease.arg == nil {
		l.lease.set(l.c.opts.WatchdogTimeout.Milliseconds())
	}
	id := l.ident()
	id.relKeys[2] = latch
	argv := l.kind.release.Argv(id.relKeysArg, 5)
	argv[3+2] = latch
	argv = append(argv, id.fieldArg, count, l.lease.arg, l.c.retryWindowArg, l.c.pubsub.publishArg(ctx))
	sent := time.Now()
	var buf [2]int64
	res, err := int64s(l.c.scripts.runArgv(ctx, l.kind.release, id.relKeys, argv, nil), buf[:0])
	if err != nil {
		return 0, err
	}
	if len(res) != 2 {
		return 0, objectErrorf(l.kind.what, l.name, "%w: release returned %v", ErrUnexpectedReply, append([]int64(nil), res...))
	}
	if res[0] == 0 {
		l.c.janitor.add(latch)
		if res[1] > 1 {
			// Other clients listen: give their waiters the first chance
			// before this client takes the lock again.
			l.c.pubsub.yield(l.channel, sent)
		}
	}
	return res[0], nil
}

// latchKey names the latch of the current hold's full release: the latest
// fencing token (unique per acquisition of the name), or for read holds,
// which take no token, the owner and the hold's number.
func (l *lockCore) latchKey() string {
	var buf [128]byte // built on the stack: one allocation, the string
	b := append(buf[:0], l.latchPre...)
	if l.kind.untokened {
		b = append(append(b, l.ident().field...), ':')
		return string(strconv.AppendUint(b, l.hold.seq, 10))
	}
	return string(strconv.AppendInt(b, l.token.Load(), 10))
}

// unlock is Unlock with l.mu held.
func (l *lockCore) unlock(ctx context.Context) error {
	if err := l.syncLost(); err != nil {
		return &leaseLostError{kind: l.kind.what, name: l.name}
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
		return &leaseLostError{kind: l.kind.what, name: l.name}
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
// lease, renewed from then on), through the hold's renewal script.
func (l *lockCore) extend(ctx context.Context, lease time.Duration) error {
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
	res, err := l.c.scripts.run(ctx, h.renewal.script, []string{h.key}, append([]any{arg}, h.renewArgs...)...).Int64Slice()
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
		return &leaseLostError{kind: l.kind.what, name: l.name}
	}
	l.lease.set(ms)
	h.watched = false
	l.track(ctx, h, watched, expires)
	return nil
}
