package redisson

import (
	"context"
	"time"
)

// Semaphore is a distributed counting semaphore, wire-compatible with
// Redisson's RSemaphore: the number of available permits is a string at the
// semaphore's name (a missing key is 0 permits; the value may go negative
// through AddPermits), and every change that adds permits publishes the new
// value on the channel redisson_sc:{name}. Permits have no owner and no
// lease: a holder that never releases keeps them (PermitExpirableSemaphore
// is the object for holders that may vanish).
//
// Setting up. A semaphore never set up has 0 permits, and Acquire waits
// until permits are added. Call TrySetPermits(ctx, n) at start-up from
// every instance: the first call sets n permits, every other call (later,
// concurrent, or resent by go-redis) leaves the count alone, so the pool is
// sized once however many instances start.
//
// Fairness. The waiters of this library queue in Redis, first come, first
// served (redisson_sc_queue:{name}, a sorted set of calls by when they
// queued, and redisson_sc_waiters:{name}, each call's permits and deadline;
// the server's clock): an acquirer takes permits only when enough are
// available for it and for every waiter queued ahead of it, so newcomers
// never overtake a waiter, whatever they ask for. A call that finds too few
// permits queues in the same script. A change that adds permits wakes, on
// the wake channel of its client (redisson_sc_wake:{name}:<client uuid>),
// exactly the queued waiters it serves, in order; within one client, its
// waiters take its places in the order they arrived. A waiter confirms its
// place at every try (at least every second) and gives it up when it is
// served or gives up; a place not confirmed for 3s expires (its process
// died). Java Redisson clients do not read the queue and may take permits
// ahead of it; their releases wake this library's waiters through the
// semaphore's channel. A waiter asking for more permits than will ever be
// available holds back every waiter behind it until its wait ends, as in a
// fair java.util.concurrent.Semaphore.
//
// Messages. Redisson's channel redisson_sc:{name} carries the new number of
// available permits after every change that adds some, as Redisson's
// release does; this library writes it with a '+' sign ("+3"), which
// Redisson reads as the number (Long.valueOf) and which tells this
// library's waiters that the wake channels carry their wake-ups.
//
// Exactly once per call. go-redis resends a command whose reply was lost;
// every call that changes the count leaves a call marker
// redisson_sc_call:{name}:<id> (deleted in the background once the call has
// returned, expiring after the client's RetryWindow otherwise), so a resent
// call is counted once.
//
// A Semaphore is safe for concurrent use and holds no state of its own.
type Semaphore struct {
	base
	channel string
	wake    string   // this client's wake channel
	keys    []string // semaphore, queue, waiters, channel, wake channel prefix; never modified
	callPre string   // call marker prefix: redisson_sc_call:{name}:<client uuid>:
}

const semKind = "semaphore"

// GetSemaphore returns the semaphore called name. It does no I/O; an empty
// name makes every method return ErrEmptyName. On Redis Cluster a name
// containing '{' must carry a complete hash tag (as in "{pool}:db"), so
// that the semaphore's keys share one slot; other such names return
// ErrInvalidName.
func (c *Client) GetSemaphore(name string) *Semaphore {
	channel := prefixName("redisson_sc", name)
	wakePre := prefixName("redisson_sc_wake", name) + ":"
	return &Semaphore{
		base:    newBase(c, semKind, name, nil, channel),
		channel: channel,
		wake:    wakePre + c.id,
		keys:    []string{name, prefixName("redisson_sc_queue", name), prefixName("redisson_sc_waiters", name), channel, wakePre},
		callPre: prefixName("redisson_sc_call", name) + ":" + c.id + ":",
	}
}

// Name returns the semaphore's name, the Redis key of its available permits.
func (s *Semaphore) Name() string { return s.name }

// check replaces the base's for a call asking n permits: a usable name
// with n < 0 is ErrInvalidPermits, even on a closed client.
func (s *Semaphore) check(n int64) error {
	if s.name != "" && s.badName == nil && n < 0 {
		return s.wrap(invalidOption(ErrInvalidPermits, "permits", n, "at least 0"))
	}
	return s.base.check()
}

// wrap replaces the base's: WRONGTYPE replies, and replies saying the key
// holds no integer, match ErrWrongType.
func (s *Semaphore) wrap(err error) error { return intKeyErr(semKind, s.name, err) }

// marker returns a fresh call marker key.
func (s *Semaphore) marker() string { return s.callPre + s.c.newRequest() }

// keysWith returns the keys of the queue scripts with marker last.
func (s *Semaphore) keysWith(marker string) []string {
	return append(s.keys[:len(s.keys):len(s.keys)], marker)
}

// TrySetPermits sets the number of available permits to n if the semaphore
// does not exist (it was never set up, or was deleted), publishes it, and
// reports whether it did so; an existing semaphore is left alone, whatever
// its count. It is the set-up call safe to make from every instance at
// start-up: one atomic script, so of concurrent calls exactly one sets the
// permits, and a call resent by go-redis after a lost reply reports its
// first result. It returns ErrInvalidPermits for n < 0;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (s *Semaphore) TrySetPermits(ctx context.Context, n int64) (_ bool, err error) {
	ctx, rec := s.begin(ctx, opSemTrySetPermits)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(n); err != nil {
		return false, err
	}
	m := s.marker()
	set, err := s.c.scripts.run(ctx, scriptSemSet, s.keysWith(m), n, s.c.retryWindowArg, s.c.pubsub.publishArg(ctx)).Int64()
	forgetCallMarker(s.c, m, err)
	return set == 1, s.wrap(err)
}

// AddPermits adds n permits, n < 0 taking permits away (the count may go
// negative: acquirers then wait until releases bring it above what they
// ask), and publishes the new count, waking up to that many waiters. n == 0
// does nothing. It returns ErrInvalidPermits when the count would overflow
// an int64 (leaving it unchanged); ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise.
func (s *Semaphore) AddPermits(ctx context.Context, n int64) (err error) {
	ctx, rec := s.begin(ctx, opSemAddPermits)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(0); err != nil || n == 0 {
		return err
	}
	return s.add(ctx, n)
}

// Release returns n permits to the semaphore (creating it when missing) and
// publishes the new count, waking up to that many waiters in every client.
// Any caller may release: permits have no owner. n == 0 does nothing.
// Release still runs when ctx is already cancelled, within the client's
// CleanupTimeout. It returns ErrInvalidPermits for n < 0 or when the count
// would overflow an int64 (leaving it unchanged); ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
// After a network error the release may or may not have happened.
func (s *Semaphore) Release(ctx context.Context, n int64) (err error) {
	ctx, rec := s.begin(ctx, opSemRelease)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(n); err != nil || n == 0 {
		return err
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
		defer cancel()
	}
	return s.add(ctx, n)
}

// add runs the add script: n permits more (or fewer), the new count
// published.
func (s *Semaphore) add(ctx context.Context, n int64) error {
	m := s.marker()
	err := s.c.scripts.run(ctx, scriptSemAdd, s.keysWith(m), n, s.c.retryWindowArg, s.c.pubsub.publishArg(ctx)).Err()
	forgetCallMarker(s.c, m, err)
	return s.wrap(err)
}

// AvailablePermits returns the number of available permits: 0 when the
// semaphore does not exist, negative after AddPermits took more than were
// available. It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (s *Semaphore) AvailablePermits(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.open(ctx, opSemAvailable)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	return readIntKey(ctx, s.c, semKind, s.name)
}

// DrainPermits takes every available permit and returns how many there were
// (0 when the semaphore does not exist, which it leaves missing). It returns
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error.
func (s *Semaphore) DrainPermits(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.open(ctx, opSemDrain)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	m := s.marker()
	v, err := s.c.scripts.run(ctx, scriptSemDrain, []string{s.name, m}, s.c.retryWindowArg).Int64()
	forgetCallMarker(s.c, m, err)
	return v, s.wrap(err)
}

// Delete deletes the semaphore (whatever type its key holds, like
// Redisson) and the queue of its waiters, and reports whether the semaphore existed.
// Waiters keep waiting: a missing semaphore has no permits. A call resent
// after a lost reply may report false. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (s *Semaphore) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opSemDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	n, err := s.c.scripts.run(ctx, scriptSemDelete, s.keys[:3]).Int64()
	return n == 1, s.wrap(err)
}

// Acquire takes n permits, waiting until they are available or ctx ends.
// n == 0 returns at once without I/O, as in Redisson. It returns ctx.Err()
// (wrapped) when ctx ends first, leaving no permit taken, no place in the queue
// and no subscription behind; ErrInvalidPermits for n < 0; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
// See Semaphore for the order in which waiters are served; a semaphore never
// set up (see TrySetPermits) has 0 permits.
func (s *Semaphore) Acquire(ctx context.Context, n int64) (err error) {
	ctx, rec := s.begin(ctx, opSemAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err := s.check(n); err != nil || n == 0 {
		return err
	}
	_, err = s.acquire(ctx, n, -1)
	return err
}

// TryAcquire takes n permits if they become available within wait, and
// reports whether it took them. wait == 0 makes a single attempt. n == 0
// returns true at once without I/O. It returns false, nil when the wait ran
// out; ErrInvalidPermits for n < 0 and ErrNegativeDuration for wait < 0;
// ctx.Err() (wrapped) when ctx ends first; ErrEmptyName, ErrInvalidName,
// ErrWrongType, ErrClientClosed, or a Redis error otherwise. A call that
// returns false or an error leaves no permit taken, no reservation and no
// subscription behind (when Redis cannot be reached to undo an attempt whose
// reply was lost, its permits may stay taken).
func (s *Semaphore) TryAcquire(ctx context.Context, n int64, wait time.Duration) (ok bool, err error) {
	ctx, rec := s.begin(ctx, opSemAcquire)
	defer func() { rec.end(err, acquiredIf(ok)) }()
	if err := s.check(n); err != nil {
		return false, err
	}
	if wait < 0 {
		return false, objectErrorf(semKind, s.name, "%w: wait %v", ErrNegativeDuration, wait)
	}
	if n == 0 {
		return true, nil
	}
	return s.acquire(ctx, n, wait)
}

// acquire takes n permits, waiting up to wait (wait < 0: until ctx ends).
func (s *Semaphore) acquire(ctx context.Context, n int64, wait time.Duration) (bool, error) {
	req := s.c.newRequest()
	a := &semCall{b: &s.base, channel: s.channel, wake: s.wake, n: n, id: s.c.id + ":" + req, start: time.Now()}
	a.keys = s.keysWith(s.callPre + req)
	deadline := waitEnd(a.start, wait)
	if wait == 0 || !s.c.pubsub.listening(s.channel) {
		// A plain first try, with no subscription and no place in the
		// queue.
		tctx, cancel := tryContext(ctx, deadline)
		ok, err := a.try(tctx, false)
		cancel()
		if err != nil || ok || wait == 0 {
			return ok, err
		}
	}
	ok, err := a.wait(ctx, deadline)
	if !ok && a.queued {
		a.cancel(ctx, false)
	}
	return ok, err
}
