package redisson

import (
	"context"
	"time"
)

// The Lock's public API, on top of its state and calls to Redis
// (lockcore.go: the lockCore that Lock embeds, and the machinery over it).
// GetFairLock and GetReadWriteLock build the other kinds on
// it (fairlock.go, rwlock.go).

// GetLock returns a new handle for the lock called name (see Lock for how
// goroutines sharing it are excluded). It does no
// I/O; an empty name makes every method return ErrEmptyName. On Redis
// Cluster a name containing '{' must carry a complete hash tag (as in
// "{order}:42"): Redisson's key naming then keeps every key of the lock in
// one slot; other such names return ErrInvalidName.
func (c *Client) GetLock(name string) *Lock {
	return c.newLock(plainLock, name, prefixName("redisson_lock__channel", name), "")
}

// Name returns the lock's name, the Redis key of its hash.
func (l *Lock) Name() string { return l.name }

// Owner returns the owner of the handle's current (or latest) hold:
// "<client uuid>:<n>" (a write lock's field adds ":write"). Each
// acquisition that is not a re-entry takes a new owner number; before the
// first one, Owner is the number the first will use.
func (l *Lock) Owner() string { return l.ident().owner }

// Lock waits until it holds the lock or ctx ends. The lease is the client's
// WatchdogTimeout, renewed by the watchdog until Unlock. While another
// goroutine's acquisition of this handle holds it, Lock waits for it as for
// any other owner; with a context from the current hold (Context, Do) it
// re-enters instead. It returns ctx.Err() (wrapped) when ctx ends first,
// leaving no hold and no subscription behind; ErrNotHeld (matching
// ErrLeaseLost too when lost) for a re-entry whose hold has ended;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (l *Lock) Lock(ctx context.Context) (err error) {
	ctx, rec, err := l.open(ctx, opLockAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err != nil {
		return err
	}
	_, err = l.tryLock(ctx, -1, 0, nil)
	return err
}

// LockLease is Lock with a lease: it waits until it holds the lock or ctx
// ends, and the hold ends lease after it was taken unless Unlock (or Extend)
// comes first, as Redisson's lock(leaseTime). lease == 0 is Lock (the
// watchdog keeps the lease alive). Errors as Lock's, and ErrNegativeDuration
// for a negative lease.
func (l *Lock) LockLease(ctx context.Context, lease time.Duration) (err error) {
	ctx, rec, err := l.open(ctx, opLockAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err != nil {
		return err
	}
	if lease < 0 {
		return objectErrorf(l.kind.what, l.name, "%w: lease %v", ErrNegativeDuration, lease)
	}
	_, err = l.tryLock(ctx, -1, lease, nil)
	return err
}

// TryLock tries to hold the lock for up to wait and reports whether it
// does. wait == 0 makes a single attempt. lease > 0 is the lease, after
// which Redis drops the hold unless Unlock came first; lease == 0 lets the
// watchdog keep the lease alive until Unlock. The wait covers waiting for
// another goroutine's hold of this handle too; with a context from the
// current hold (Context, Do) TryLock re-enters at once instead. A re-entry
// into a hold the watchdog keeps stays under the watchdog whatever its
// lease; a re-entry with lease == 0 into a hold with a lease puts it under
// the watchdog. It returns false, nil when the wait ran out;
// ErrNegativeDuration for a negative wait or lease; ctx.Err() (wrapped)
// when ctx ends first; ErrNotHeld (matching ErrLeaseLost too when lost) for
// a re-entry whose hold has ended; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise. An error leaves
// no hold of this call behind (when Redis cannot be reached to undo an
// acquire whose reply was lost, that hold expires with its lease under an
// owner number the handle no longer uses).
func (l *Lock) TryLock(ctx context.Context, wait, lease time.Duration) (ok bool, err error) {
	ctx, rec, err := l.open(ctx, opLockAcquire)
	defer func() { rec.end(err, acquiredIf(ok)) }()
	if err != nil {
		return false, err
	}
	if wait < 0 || lease < 0 {
		return false, objectErrorf(l.kind.what, l.name, "%w: wait %v, lease %v", ErrNegativeDuration, wait, lease)
	}
	return l.tryLock(ctx, wait, lease, nil)
}

// Do holds the lock while fn runs: it acquires as TryLock(ctx, wait, lease)
// does, runs fn with a context that carries the hold (a nested acquisition
// with it re-enters) and is cancelled, with Err's value as its cause, when
// the hold is lost, and then releases the hold whatever fn returned (even
// if fn panics). It returns ErrNotAcquired (wrapped) when the wait ran out,
// TryLock's errors when the acquisition failed (fn did not run), and
// otherwise fn's error joined with Unlock's (an error matching ErrLeaseLost
// means the hold was lost before fn returned).
func (l *Lock) Do(ctx context.Context, wait, lease time.Duration, fn func(ctx context.Context) error) error {
	if err := l.check(); err != nil {
		l.reject(ctx, opLockAcquire, err)
		return err
	}
	if wait < 0 || lease < 0 {
		err := objectErrorf(l.kind.what, l.name, "%w: wait %v, lease %v", ErrNegativeDuration, wait, lease)
		l.reject(ctx, opLockAcquire, err)
		return err
	}
	var h *hold
	actx, rec := l.begin(ctx, opLockAcquire)
	ok, err := l.tryLock(actx, wait, lease, &h)
	if err == nil && !ok {
		err = objectErrorf(l.kind.what, l.name, "%w of %v", ErrNotAcquired, wait)
	}
	rec.end(err, OutcomeAcquired)
	if err != nil {
		return err
	}
	hctx, cancel := l.contextOf(ctx, h)
	return doLocked(hctx, cancel, fn, l.Unlock)
}

// Unlock drops one hold of the handle's current hold (any goroutine may
// call it, as with sync.Mutex); given a context from a hold (Context, Do) it
// drops one of that hold only. On the read side of a read-write lock it
// drops one read hold: one taken under the write hold ctx carries, else one
// of the handle's own, else one taken under a write hold. When the hold
// count reaches zero it deletes the lock and publishes the unlock message,
// waking one waiter, and the handle is free for the next acquisition. It
// stops the watchdog for the lock before the release reaches Redis. It
// returns ErrNotHeld when there is no such hold (an error matching
// ErrLeaseLost too when its lease ran out). Unlock still runs when ctx is
// already cancelled, within the client's CleanupTimeout. A call resent by
// go-redis after a lost reply, or an Unlock repeated after an error, is
// counted once. After an error the hold is no longer renewed; if it still
// exists it ends (Done, ErrLeaseLost) at its lease deadline.
func (l *Lock) Unlock(ctx context.Context) (err error) {
	ctx, rec, err := l.open(ctx, opLockRelease)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
		defer cancel()
	}
	if l.pair != nil {
		return l.unlockRead(ctx)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.target(ctx); err != nil {
		return err
	}
	h := l.hold
	err = l.unlock(ctx)
	if rec != nil && err == nil && h != nil && l.hold != h {
		rec.held(h.since()) // the final release: the hold ended
	}
	return err
}

// Extend sets the lease of the handle's current hold (or of the hold ctx
// carries, from Context or Do) to lease from now: the hold ends then unless
// Unlock or another Extend comes first. A hold the watchdog kept leaves it
// and has that lease from now on; lease == 0 puts the hold under the
// watchdog (a lease of WatchdogTimeout, renewed until Unlock). Done, Err and
// Context follow the new deadline. It returns ErrNotHeld when there is no
// such hold, an error matching ErrLeaseLost too when the hold was lost
// (found gone in Redis, or its deadline passed), ErrNegativeDuration for a
// negative lease, ErrClientClosed, or a Redis error (the hold then keeps its
// old lease). On the read side it extends the handle's own read holds.
func (l *Lock) Extend(ctx context.Context, lease time.Duration) (err error) {
	ctx, rec, err := l.open(ctx, opLockExtend)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	if lease < 0 {
		return objectErrorf(l.kind.what, l.name, "%w: lease %v", ErrNegativeDuration, lease)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	h, err := l.target(ctx)
	switch {
	case err != nil:
		return err
	case l.syncLost() != nil:
		return &leaseLostError{kind: l.kind.what, name: l.name}
	case h == nil:
		return objectErrorf(l.kind.what, l.name, "%w", ErrNotHeld)
	}
	return l.extend(ctx, lease)
}

// ForceUnlock deletes the lock whoever holds it and wakes one waiter. It
// reports whether there was a lock to delete.
func (l *Lock) ForceUnlock(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := l.open(ctx, opLockForceUnlock)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	keys := []string{l.name, l.channel}
	if l.kind.queue != nil {
		keys = append(keys, l.kind.queue(l.name))
	}
	n, err := l.c.scripts.run(ctx, l.kind.force, keys, l.kind.forceArgs(l.c.pubsub.publishArg(ctx))...).Int64()
	if err != nil {
		return false, objectErr(l.kind.what, l.name, err)
	}
	return n == 1, nil
}

// Token returns the fencing token of this owner's latest acquisition: a
// number that grows with every acquisition of the lock by any owner (it is
// Redisson's RFencedLock counter, redisson_lock_token:{name}). Pass it to the
// resource the lock protects, which should refuse a token lower than one it
// has already seen: a holder whose lease ran out during a pause is refused
// downstream. 0 before the first acquisition.
//
// Each token is max(previous token + 1, the Redis server's clock in
// microseconds), and the counter's key expires Options.TokenIdleTTL (24h by
// default) after the name's latest acquisition. A counter created anew (its
// key expired, or was lost to a restart without persistence, a FLUSHALL or a
// failover to a replica without it) therefore starts above every token
// handed out before, provided the clock of the server that creates it reads
// later than the last token handed out: with this library's acquisitions
// alone, unless that clock is behind the one that gave the last token by
// more than the time since the name's last acquisition (at least
// TokenIdleTTL when the key expired). Java RFencedLock acquisitions on the
// same name INCR the counter and continue from it.
func (l *Lock) Token() int64 { return l.token.Load() }

// Done returns a channel that is closed when this owner's current hold ends:
// by its final Unlock, or by losing it. A hold with a watchdog lease is
// found lost when a renewal finds the key gone or held by another owner, or
// when no renewal was confirmed before its lease deadline; a hold with an
// explicit lease ends at that lease's deadline; every hold ends when the
// client closes. Err then tells which. When the owner holds nothing, the
// channel of the last hold is returned (closed), or a closed channel.
func (l *Lock) Done() <-chan struct{} {
	if h := l.view().shown.Load(); h != nil {
		return h.done
	}
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns nil while this owner holds the lock; after the hold ended,
// ErrLeaseLost when it was lost, ErrClientClosed when the client closed, and
// ErrNotHeld when it was released by Unlock or never taken.
func (l *Lock) Err() error {
	h := l.view().shown.Load()
	if h == nil {
		return ErrNotHeld
	}
	_, err := h.ended()
	return err
}

// Context returns a context that is cancelled, with Err's value as its
// cause, when the current hold ends (or parent ends), and that carries the
// hold: an acquisition of this handle given it (or a context derived from
// it) re-enters the hold instead of waiting for it, and Unlock and Extend
// given it act on that hold only. Call it in the goroutine that acquired,
// right after acquiring, or use Do. Use it for work that must stop as soon
// as the lock is no longer held. Call cancel to release its resources.
func (l *Lock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return l.contextOf(parent, l.shown.Load())
}

// contextOf is Context for hold h (nil: none).
func (l *Lock) contextOf(parent context.Context, h *hold) (context.Context, context.CancelFunc) {
	if h == nil {
		ctx, cancel := context.WithCancelCause(parent)
		cancel(ErrNotHeld)
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(parent, holdKey{&l.lockCore}, h))
	go func() {
		select {
		case <-h.done:
			_, err := h.ended()
			cancel(err)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

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
//
// Sizing: after its last Unlock a name leaves only its fencing counter in
// Redis, for Options.TokenIdleTTL (24h by default) after its latest
// acquisition: 88 bytes by MEMORY USAGE, about 150 bytes of used_memory with
// its expiry entry (Redis 7.0). A million distinct names a day (one per
// order id) thus keep about 150 MB at the default; a shorter TokenIdleTTL
// shrinks that in proportion. docs/locks.md has the measurements and the
// trade-offs.
type Lock struct {
	lockCore
}

// newLock returns a handle of the given kind; owner "" takes a new owner.
func (c *Client) newLock(kind *lockKind, name, channel, owner string) *Lock {
	l := new(Lock)
	l.init(c, kind, name, channel, owner)
	return l
}
