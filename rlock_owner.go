package redisson

import (
	"context"
	"strings"
	"time"
)

// Who may use a Lock's hold: the handle's gate between goroutines, re-entry
// through the hold's context, and a reader under a write hold (the
// downgrade). Methods of lockCore, on top of lockcore.go, below the public
// API in rlock.go.
//
// A handle of an exclusive kind (lock, fair lock, write lock) has a gate, a
// channel of one token: an acquisition that is not a re-entry puts the token
// in (waiting, while another acquisition or hold has it, for as long as its
// wait and ctx allow), takes a new owner number once the current one has had
// a hold, and acquires in Redis under it; the token comes out when the
// acquisition fails or its hold ends (endHold: final Unlock, or a loss found
// by a later call). A re-entry is recognised by its context: Context and Do
// put the hold in it under the key holdKey{handle}, and a call whose context
// names the handle's current hold raises its count without the gate.

// holdKey is the context key under which Context puts a handle's hold.
type holdKey struct{ l *lockCore }

// heldIn returns the hold of l that ctx carries, or nil.
func (l *lockCore) heldIn(ctx context.Context) *hold {
	h, _ := ctx.Value(holdKey{l}).(*hold)
	return h
}

// tryLock acquires as a re-entry when ctx carries l's hold, as a reader
// under the write hold ctx carries (read side), or else as a new
// acquisition, through the gate. wait < 0 waits until ctx ends. got, when
// not nil, is set to the hold acquired.
func (l *lockCore) tryLock(ctx context.Context, wait, lease time.Duration, got **hold) (bool, error) {
	if l.gate == nil {
		if l.pair != nil {
			if wh := l.pair.heldIn(ctx); wh != nil {
				return l.readUnder(ctx, wh, wait, lease, got)
			}
		}
		return l.take(ctx, wait, lease, got)
	}
	if h := l.heldIn(ctx); h != nil {
		return l.reenter(ctx, h, lease, got)
	}
	start := time.Now()
	if ok, err := l.enter(ctx, wait); !ok || err != nil {
		return false, err
	}
	if wait > 0 {
		wait = max(wait-time.Since(start), 0)
	}
	l.mu.Lock()
	if l.used {
		l.newIdentity("") // every acquisition its own owner number
		l.used = false
	}
	l.mu.Unlock()
	ok, err := l.take(ctx, wait, lease, got)
	if !ok || err != nil {
		l.leave()
	}
	return ok, err
}

// enter puts the gate's token in, waiting up to wait (< 0: until ctx ends)
// while another acquisition or hold of the handle has it. A hold that ends
// without Unlock frees the gate when a caller notices it: this wait does,
// watching the current hold's done channel (or, while an acquisition is
// under way, for its hold to start).
func (l *lockCore) enter(ctx context.Context, wait time.Duration) (bool, error) {
	select {
	case l.gate <- struct{}{}:
		return true, nil
	default:
	}
	t := l.c.blockStart()
	ok, err := enterGate(ctx, l.gate, wait, l.gateWatch)
	l.c.blockEnd(ctx, t)
	if err != nil {
		return false, objectErrorf(l.kind.what, l.name, "%w", err)
	}
	return ok, nil
}

// enterGate puts a token in gate (a channel of one), waiting up to wait
// (< 0: until ctx ends, whose error it returns). watch returns a channel
// that closes when the gate's holder changes state, after freeing the gate
// of a hold that was lost; it is asked again after each change and once
// more when the wait runs out.
func enterGate(ctx context.Context, gate chan struct{}, wait time.Duration, watch func() <-chan struct{}) (bool, error) {
	select {
	case gate <- struct{}{}:
		return true, nil
	default:
	}
	var timeout <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	for {
		changed := watch()
		select {
		case gate <- struct{}{}:
			return true, nil
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timeout:
			// One last look: a hold lost meanwhile frees the gate.
			watch()
			select {
			case gate <- struct{}{}:
				return true, nil
			default:
				return false, nil
			}
		}
	}
}

// gateWatch forgets a lost hold (which frees the gate) and returns a
// channel that closes when the gate's holder changes state: the current
// hold's done channel, or one closed when the next hold starts.
func (l *lockCore) gateWatch() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLost()
	if l.hold != nil {
		return l.hold.done
	}
	if l.holdSet == nil {
		l.holdSet = make(chan struct{})
	}
	return l.holdSet
}

// leave takes the gate's token out after an acquisition that left no hold.
func (l *lockCore) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == nil {
		select {
		case <-l.gate:
		default:
		}
	}
}

// reenter raises the count of hold h, which ctx carries: one acquire, no
// wait, no gate. It fails with ErrNotHeld when h was released, and with an
// error matching ErrLeaseLost too when h was lost.
func (l *lockCore) reenter(ctx context.Context, h *hold, lease time.Duration, got **hold) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLost()
	if l.hold != h {
		return false, l.notCurrent(h)
	}
	ok, _, err := l.acquireLocked(ctx, lease, -1, waitState{})
	switch {
	case err != nil:
		return false, err
	case !ok:
		// Redis knows another owner: the hold is gone.
		l.endHold(ErrLeaseLost)
		return false, &leaseLostError{kind: l.kind.what, name: l.name}
	}
	if got != nil {
		*got = l.hold
	}
	return true, nil
}

// notCurrent is the error of a call naming hold h (through its context)
// after h ended.
func (l *lockCore) notCurrent(h *hold) error {
	if _, err := h.ended(); err == nil || err == ErrNotHeld {
		return objectErrorf(l.kind.what, l.name, "%w", ErrNotHeld)
	}
	return &leaseLostError{kind: l.kind.what, name: l.name}
}

// readUnder takes a read hold under the owner of write hold wh (the write
// side's owner may also read, as in Redisson): through the reader kept for
// wh, which is created on first use and dropped when it holds nothing.
func (l *lockCore) readUnder(ctx context.Context, wh *hold, wait, lease time.Duration, got **hold) (bool, error) {
	l.mu.Lock()
	d := l.downs[wh]
	if d == nil {
		d = new(lockCore)
		d.init(l.c, readLock, l.name, l.channel, strings.TrimSuffix(wh.field, writeLock.suffix))
		d.fixedOwner = true
		if l.downs == nil {
			l.downs = make(map[*hold]*lockCore)
		}
		l.downs[wh] = d
	}
	l.mu.Unlock()
	ok, err := d.take(ctx, wait, lease, got)
	if !ok {
		l.dropUnder(wh, d)
	}
	return ok, err
}

// dropUnder forgets the reader d kept for write hold wh if it holds nothing.
func (l *lockCore) dropUnder(wh *hold, d *lockCore) {
	d.mu.Lock()
	idle := d.hold == nil
	d.mu.Unlock()
	if idle {
		l.mu.Lock()
		if l.downs[wh] == d {
			delete(l.downs, wh)
		}
		l.mu.Unlock()
	}
}

// unlockRead is the read side's Unlock: a read hold under the write hold
// ctx carries, else one of the handle's own read holds, else one taken
// under a write hold. Given the context of a read hold that is no longer
// the handle's (lost, or released), it releases nothing: the handle's
// newer holds are someone else's.
func (l *lockCore) unlockRead(ctx context.Context) error {
	var wh *hold
	var d *lockCore
	l.mu.Lock()
	if h := l.pair.heldIn(ctx); h != nil && l.downs[h] != nil {
		wh, d = h, l.downs[h]
	} else if l.count == 0 {
		for h, r := range l.downs {
			wh, d = h, r
			break
		}
	}
	if d == nil {
		defer l.mu.Unlock()
		if _, err := l.target(ctx); err != nil {
			return err
		}
		return l.unlock(ctx)
	}
	l.mu.Unlock()
	d.mu.Lock()
	err := d.unlock(ctx)
	d.mu.Unlock()
	l.dropUnder(wh, d)
	return err
}

// view is the handle whose state the read side reports: itself, or, when
// it has no read hold of its own, a reader it keeps under a write hold (the
// writer's reads). Other kinds report themselves.
func (l *lockCore) view() *lockCore {
	if l.pair == nil {
		return l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == nil {
		for _, d := range l.downs {
			return d
		}
	}
	return l
}

// target returns the hold a call given ctx is about: the one ctx carries,
// or the current one (nil when none). Caller holds l.mu.
func (l *lockCore) target(ctx context.Context) (*hold, error) {
	h := l.heldIn(ctx)
	if h != nil && h != l.hold {
		return nil, l.notCurrent(h)
	}
	return l.hold, nil
}

// take acquires for the handle's current owner, waiting up to wait (wait <
// 0: until ctx ends), the way the owner's kind waits (its identity's
// waitSpec); got, when not nil, is set to the hold acquired. A fair waiter,
// which waits on a channel of its own, also makes the plain first try.
func (l *lockCore) take(ctx context.Context, wait, lease time.Duration, got **hold) (bool, error) {
	recheck, retry, start := false, time.Duration(0), time.Now()
	if w := &l.ident().wait; w.own || !l.c.pubsub.listening(w.channel) {
		// Nobody here waits for this lock: a plain first try, with no
		// subscription and no allocation beyond the call itself.
		tctx, cancel := tryContext(ctx, waitEnd(start, wait))
		ok, r, err := l.acquire(tctx, lease, wait, waitState{}, got)
		cancel()
		if err != nil || ok || wait == 0 {
			return ok, err
		}
		recheck, retry = true, r
	}
	// Read after the first try, which may have given the handle a new
	// owner (a fair waiter's channel and queue entry are its owner's).
	spec := l.ident().wait
	spec.what, spec.name, spec.wait = l.kind.what, l.name, wait
	spec.recheck, spec.retry, spec.start = recheck, retry, start
	return l.c.await(ctx, spec,
		func(ctx context.Context, w waitState) (bool, time.Duration, error) {
			return l.acquire(ctx, lease, wait, w, got)
		})
}
