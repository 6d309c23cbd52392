package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Lock is a distributed reentrant lock, wire-compatible with Redisson's RLock:
// a hash at the lock's name whose field "<client uuid>:<owner number>" holds
// the hold count, a PEXPIRE'd lease, the channel redisson_lock__channel:{name}
// carrying the unlock message 0, and a fencing counter at
// redisson_lock_token:{name}.
//
// Each Lock value is one owner (what a thread is in Redisson): locking it again
// re-enters and increments the hold count, and only it can unlock its holds.
// Client.GetLock returns a new owner on every call, so getting the lock where
// it is used is the safe habit. A Lock is safe for concurrent use, but
// goroutines sharing one Lock share one owner: they re-enter each other's
// holds rather than exclude each other. Do not copy a Lock.
type Lock struct {
	c        *Client
	name     string
	field    string // owner field
	acqKeys  []string
	relKeys  []string // [2] is set per call to the hold's latch key
	latchPre string   // unlock latch key prefix
	channel  string
	tokenKey string

	mu       sync.Mutex // serializes this owner's acquire and release calls
	fieldArg any        // field, boxed once for script arguments
	count    int        // hold count as last reported by Redis
	lease    leaseArg   // lease of the latest acquisition
	token    int64      // fencing token of the latest acquisition
	hold     *hold      // current hold, nil when count == 0
	lastHold *hold      // the hold that ended last, for Done and Err
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

// GetLock returns a new owner handle for the lock called name. It does no
// I/O; an empty name makes every method return ErrEmptyName.
func (c *Client) GetLock(name string) *Lock {
	l := &Lock{
		c:        c,
		name:     name,
		channel:  prefixName("redisson_lock__channel", name),
		tokenKey: prefixName("redisson_lock_token", name),
		latchPre: prefixName("redisson_unlock_latch", name) + ":",
	}
	l.newIdentity()
	return l
}

// newIdentity gives the handle a fresh owner field. A handle whose hold was
// lost takes one, so that a stale field of its old identity that is still in
// Redis (a lease not yet run out there) is never taken for its own.
func (l *Lock) newIdentity() {
	l.field = l.c.newOwner()
	l.fieldArg = l.field
	l.acqKeys = []string{l.name, l.tokenKey, l.channel}
	l.relKeys = []string{l.name, l.channel, ""}
}

// Name returns the lock's name, the Redis key of its hash.
func (l *Lock) Name() string { return l.name }

// Owner returns the owner field this handle writes: "<client uuid>:<n>".
// A handle whose hold was lost takes a new owner number for its next
// acquisition.
func (l *Lock) Owner() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.field
}

func (l *Lock) check() error {
	if l.name == "" {
		return ErrEmptyName
	}
	if l.c.closed.Load() {
		return ErrClientClosed
	}
	return nil
}

// Lock waits until it holds the lock or ctx ends. The lease is the client's
// WatchdogTimeout, renewed by the watchdog until Unlock. It returns ctx.Err()
// (wrapped) when ctx ends first, leaving no hold and no subscription behind;
// ErrEmptyName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (l *Lock) Lock(ctx context.Context) error {
	if err := l.check(); err != nil {
		return err
	}
	_, err := l.tryLock(ctx, -1, 0)
	return err
}

// TryLock tries to hold the lock for up to wait and reports whether it
// does. wait == 0 makes a single attempt. lease > 0 is the lease, after
// which Redis drops the hold unless Unlock came first; lease == 0 lets the
// watchdog keep the lease alive until Unlock. It returns false, nil when the
// wait ran out; ErrNegativeDuration for a negative wait or lease; ctx.Err()
// (wrapped) when ctx ends first; ErrEmptyName, ErrWrongType, ErrClientClosed,
// or a Redis error otherwise. On every error the lock is left as it was.
func (l *Lock) TryLock(ctx context.Context, wait, lease time.Duration) (bool, error) {
	if err := l.check(); err != nil {
		return false, err
	}
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("%w: lock %q: wait %v, lease %v", ErrNegativeDuration, l.name, wait, lease)
	}
	return l.tryLock(ctx, wait, lease)
}

// tryLock acquires, waiting up to wait (wait < 0: until ctx ends).
func (l *Lock) tryLock(ctx context.Context, wait, lease time.Duration) (bool, error) {
	first := firstTry{}
	if !l.c.pubsub.listening(l.channel) {
		// Nobody here waits for this lock: a plain first try, with no
		// subscription and no allocation beyond the call itself.
		ok, retry, err := l.acquire(ctx, lease, waiting{})
		if err != nil || ok || wait == 0 {
			return ok, err
		}
		first = firstTry{done: true, retry: retry}
	}
	return l.c.await(ctx, "lock", l.name, l.channel, lockWakePolicy, wait, first,
		func(ctx context.Context, w waiting) (bool, time.Duration, error) {
			return l.acquire(ctx, lease, w)
		})
}

// lockWakePolicy: the unlock message 0 hands the lock to one waiter (across
// clients, see pubsubService); the read-unlock message 1 (read-write locks)
// wakes all. Numbers n >= 2 are ours (Redisson ignores them) and announce a
// new hold: 2 by a caller that had not waited, n >= 3 by a waiter that
// waited n-3 milliseconds.
func lockWakePolicy(payload string) wake {
	switch payload {
	case "0":
		return wake{n: 1, handoff: true}
	case "1":
		return wake{n: -1}
	}
	if n, err := strconv.ParseInt(payload, 10, 64); err == nil && n >= 2 {
		return wake{taken: true, age: time.Duration(n-3) * time.Millisecond}
	}
	return wake{ignored: true}
}

// syncLost forgets a hold that ended without Unlock. Caller holds l.mu.
func (l *Lock) syncLost() (lost error) {
	if l.hold == nil {
		return nil
	}
	if ended, err := l.hold.ended(); ended {
		l.endHold(err)
		return err
	}
	return nil
}

// acquire runs the acquire script once. It reports whether the owner holds
// the lock and, when not, the holder's remaining lease.
// A waiter's acquisition is announced on the channel (see lockWakePolicy).
func (l *Lock) acquire(ctx context.Context, lease time.Duration, w waiting) (bool, time.Duration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.syncLost()
	watched := lease == 0
	if watched {
		l.lease.set(l.c.opts.WatchdogTimeout.Milliseconds())
	} else {
		l.lease.set(max(lease.Milliseconds(), 1))
	}
	start := time.Now() // the lease deadline counts from before the send
	var pub, msg any = "", ""
	if w.subscribed {
		pub, msg = "publish", "2"
		if w.age >= 0 {
			msg = strconv.FormatInt(3+w.age.Milliseconds(), 10)
		}
	}
	res, err := l.c.scripts.run(ctx, scriptLockAcquire, l.acqKeys, l.lease.arg, l.fieldArg, l.count, pub, msg).Int64Slice()
	if err != nil {
		var rerr redis.Error
		if !errors.As(err, &rerr) {
			// The script may have run and its reply been lost: undo it.
			l.compensate(ctx)
		}
		return false, 0, classify(l.name, err)
	}
	if len(res) != 2 {
		return false, 0, fmt.Errorf("%w: lock %q: acquire returned %v", ErrUnexpectedReply, l.name, res)
	}
	if res[0] == 0 {
		if res[1] < 0 {
			return false, -1, nil // held without expiry
		}
		return false, time.Duration(res[1]) * time.Millisecond, nil
	}
	// The hold counts as lost a little before Redis would drop it, so that
	// the holder hears of it before any other owner can acquire.
	lease = time.Duration(l.lease.ms) * time.Millisecond
	expires := start.Add(lease - lossMargin(lease))
	if l.hold != nil && res[0] == 1 {
		// We thought we re-entered, but the old hold was gone: a new hold
		// (under the same identity, which Redis no longer knew).
		old := l.hold
		if old.timer != nil {
			old.timer.Stop()
		}
		l.c.watchdog.remove(old)
		old.end(ErrLeaseLost)
		l.hold = nil
	}
	if l.hold == nil {
		h := newHold(l.name, l.field, l.channel, l.c.slot(l.name))
		if watched {
			if !l.c.watchdog.add(h, expires) {
				h.end(ErrClientClosed)
			}
		} else {
			h.timer = time.AfterFunc(time.Until(expires), func() { h.end(ErrLeaseLost) })
		}
		l.hold = h
	} else if l.hold.timer != nil {
		l.hold.timer.Reset(time.Until(expires))
	} else {
		l.c.watchdog.extend(l.hold, expires)
	}
	l.count, l.token = int(res[0]), res[1]
	return true, 0, nil
}

// endHold ends the current hold with cause err and forgets it. Caller holds
// l.mu.
func (l *Lock) endHold(err error) {
	h := l.hold
	if h.timer != nil {
		h.timer.Stop()
	}
	l.c.watchdog.remove(h)
	h.end(err)
	l.count, l.hold, l.lastHold = 0, nil, h
	if err != ErrNotHeld {
		l.newIdentity()
	}
}

// compensate undoes an acquire whose reply never arrived, if it ran: a
// release sent with the count the acquire would have produced changes
// nothing when the acquire did not run. Caller holds l.mu.
func (l *Lock) compensate(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
	defer cancel()
	n, err := l.release(cctx, l.count+1, l.latchPre+"c:"+l.field+":"+l.c.newRequest())
	if err == nil && n >= 0 {
		l.count = int(n)
	}
}

// release runs the release script once and returns the new hold count
// (-1: not held). latch is the key that marks this hold's full release for
// a resent call; once a full release has returned it is queued for deletion.
// Caller holds l.mu.
func (l *Lock) release(ctx context.Context, count int, latch string) (int64, error) {
	if l.lease.arg == nil {
		l.lease.set(l.c.opts.WatchdogTimeout.Milliseconds())
	}
	l.relKeys[2] = latch
	res, err := l.c.scripts.run(ctx, scriptLockRelease, l.relKeys,
		l.fieldArg, count, l.lease.arg, l.c.retryWindowArg, "publish").Int64Slice()
	if err != nil {
		return 0, err
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("%w: lock %q: release returned %v", ErrUnexpectedReply, l.name, res)
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

// Unlock drops one hold of this owner; when the hold count reaches zero it
// deletes the lock and publishes the unlock message, waking one waiter. It
// stops the watchdog for the lock before the release reaches Redis. It
// returns ErrNotHeld when this owner holds no hold (an error matching
// ErrLeaseLost too when its lease ran out). Unlock still runs when ctx is
// already cancelled, within the client's CleanupTimeout. A call resent by
// go-redis after a lost reply, or an Unlock repeated after an error, is
// counted once.
func (l *Lock) Unlock(ctx context.Context) error {
	if err := l.check(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
		defer cancel()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.syncLost(); err != nil {
		return &leaseLostError{name: l.name}
	}
	if l.count == 0 {
		return fmt.Errorf("%w: lock %q", ErrNotHeld, l.name)
	}
	if l.count == 1 {
		l.c.watchdog.remove(l.hold)
	}
	// The latest acquisition's fencing token identifies this hold's full
	// release: a resent call, or an Unlock repeated after an error, uses the
	// same latch.
	n, err := l.release(ctx, l.count, l.latchPre+strconv.FormatInt(l.token, 10))
	if err != nil {
		return classify(l.name, err)
	}
	switch {
	case n < 0:
		l.endHold(ErrLeaseLost)
		return &leaseLostError{name: l.name}
	case n == 0:
		l.endHold(ErrNotHeld)
	default:
		l.count = int(n)
	}
	return nil
}

// ForceUnlock deletes the lock whoever holds it and wakes one waiter. It
// reports whether there was a lock to delete.
func (l *Lock) ForceUnlock(ctx context.Context) (bool, error) {
	if err := l.check(); err != nil {
		return false, err
	}
	n, err := l.c.scripts.run(ctx, scriptLockForce, []string{l.name, l.channel}, "publish").Int64()
	if err != nil {
		return false, classify(l.name, err)
	}
	return n == 1, nil
}

type lockState struct {
	locked bool
	count  int
	pttl   int64
}

func (l *Lock) state(ctx context.Context) (lockState, error) {
	if err := l.check(); err != nil {
		return lockState{}, err
	}
	res, err := l.c.scripts.run(ctx, scriptLockState, []string{l.name}, l.field).Int64Slice()
	if err != nil {
		return lockState{}, classify(l.name, err)
	}
	if len(res) != 3 {
		return lockState{}, fmt.Errorf("%w: lock %q: state returned %v", ErrUnexpectedReply, l.name, res)
	}
	return lockState{locked: res[0] == 1, count: int(res[1]), pttl: res[2]}, nil
}

// IsLocked reports whether any owner, in any process, holds the lock.
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	s, err := l.state(ctx)
	return s.locked, err
}

// IsHeld reports whether this owner holds the lock.
func (l *Lock) IsHeld(ctx context.Context) (bool, error) {
	s, err := l.state(ctx)
	return s.count > 0, err
}

// HoldCount returns how many holds this owner has on the lock (0 when none).
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	s, err := l.state(ctx)
	return s.count, err
}

// RemainingLease returns the time until the lock's lease runs out, whoever
// holds it: 0 when the lock is free. A lock key without expiry (written by
// something other than a lock client) returns ErrUnexpectedReply.
func (l *Lock) RemainingLease(ctx context.Context) (time.Duration, error) {
	s, err := l.state(ctx)
	switch {
	case err != nil:
		return 0, err
	case !s.locked:
		return 0, nil
	case s.pttl < 0:
		return 0, fmt.Errorf("%w: lock %q has no expiry", ErrUnexpectedReply, l.name)
	}
	return time.Duration(s.pttl) * time.Millisecond, nil
}

// Token returns the fencing token of this owner's latest acquisition: a
// number that grows with every acquisition of the lock by any owner (it is
// Redisson's RFencedLock counter). Pass it to the resource the lock protects,
// which should refuse a token lower than one it has already seen: a holder
// whose lease ran out during a pause is refused downstream. 0 before the
// first acquisition.
func (l *Lock) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.token
}

// Done returns a channel that is closed when this owner's current hold ends:
// by its final Unlock, or by losing it (the lease ran out, the key was
// deleted, the watchdog could not renew it in time, or the client closed).
// Err then tells which. When the owner holds nothing, the channel of the
// last hold is returned (closed), or a closed channel.
func (l *Lock) Done() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.hold != nil:
		return l.hold.done
	case l.lastHold != nil:
		return l.lastHold.done
	}
	return closedChan
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Err returns nil while this owner holds the lock; after the hold ended,
// ErrLeaseLost when it was lost, ErrClientClosed when the client closed, and
// ErrNotHeld when it was released by Unlock or never taken.
func (l *Lock) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hold
	if h == nil {
		h = l.lastHold
	}
	if h == nil {
		return ErrNotHeld
	}
	_, err := h.ended()
	return err
}

// Context returns a context that is cancelled, with Err's value as its
// cause, when the current hold ends (or parent ends). Use it for work that
// must stop as soon as the lock is no longer held. Call cancel to release
// its resources.
func (l *Lock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	done := l.Done()
	go func() {
		select {
		case <-done:
			cancel(l.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
