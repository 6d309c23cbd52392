package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"time"
)

// PermitExpirableSemaphore is a distributed counting semaphore whose permits
// are identified and may carry a lease, wire-compatible with Redisson's
// RPermitExpirableSemaphore: the available count is a string at the
// semaphore's name, held permits are members of the sorted set
// {name}:timeout (the 16 raw bytes of the permit id, scored with the
// absolute expiry in milliseconds since the epoch, or 922337203685477 for a
// permit that never expires), and the channel redisson_sc:{name} carries the
// new available count when permits come back.
//
// A permit whose lease ends returns to the pool by itself, so the permits
// of a crashed holder are not lost; a waiter wakes when the nearest lease
// ends, not at its own timeout.
//
// Clock: expiry is decided on the Redis server's clock (TIME inside the
// scripts, which needs Redis 5 or later), never on this process's, so client
// clock skew cannot end a lease early or late. Redisson clients use their
// own wall clock instead; the scores are absolute epoch milliseconds either
// way, so Go and Java clients agree as long as their clocks and the server's
// are synchronised: a Java client whose clock runs d ahead of the server
// reclaims permits d early, and its own permits last d longer for Go
// clients.
//
// A PermitExpirableSemaphore is safe for concurrent use and holds no state
// of its own: permits belong to whoever has their id, not to a handle.
type PermitExpirableSemaphore struct {
	base
	keys     []string // [name, timeout zset, channel, queue, waiters, wake channel prefix]; never modified
	channel  string
	wake     string // this client's wake channel
	latchPre string
}

const (
	permitKind = "permit semaphore"
	// permitNoExpiry is Redisson's score of a permit that never expires.
	permitNoExpiry = 922337203685477
)

// GetPermitExpirableSemaphore returns the semaphore called name. It does no
// I/O; an empty name makes every method return ErrEmptyName. On Redis
// Cluster a name containing '{' must carry a complete hash tag (as in
// "{pool}:db"), so that the semaphore's keys share one slot; other such
// names return ErrInvalidName.
func (c *Client) GetPermitExpirableSemaphore(name string) *PermitExpirableSemaphore {
	channel := prefixName("redisson_sc", name)
	wakePre := prefixName("redisson_sc_wake", name) + ":"
	timeout := suffixName(name, "timeout")
	return &PermitExpirableSemaphore{
		base:    newBase(c, permitKind, name, nil, timeout, channel),
		channel: channel,
		wake:    wakePre + c.id,
		keys: []string{name, timeout, channel,
			prefixName("redisson_sc_queue", name), prefixName("redisson_sc_waiters", name), wakePre},
		latchPre: prefixName("redisson_permit_latch", name) + ":" + c.id + ":",
	}
}

// Name returns the semaphore's name, the Redis key of its available count.
func (s *PermitExpirableSemaphore) Name() string { return s.name }

// wrap replaces the base's: an overflowing count is ErrInvalidPermits.
func (s *PermitExpirableSemaphore) wrap(err error) error {
	if err != nil && overflows(err) {
		return objectErrorf(permitKind, s.name, "%w: the count would overflow: %w", ErrInvalidPermits, err)
	}
	return objectErr(permitKind, s.name, err)
}

// latch returns a latch key unique to one call: a script that changes the
// count sets it, so that the same call resent by go-redis after a lost reply
// is recognised (see the scripts).
func (s *PermitExpirableSemaphore) latch() string { return s.latchPre + s.c.newRequest() }

// returned queues the latch of a call that has returned for deletion, when
// the call set it or may have: go-redis will not resend the call now.
func (s *PermitExpirableSemaphore) returned(latch string, set bool, err error) {
	if set || mayHaveRun(err) {
		s.c.janitor.add(latch)
	}
}

// TrySetPermits sets the number of available permits to n if it was never
// set (or the semaphore was deleted), and reports whether it did so; a set
// count is left alone. It is the set-up call safe to make from every
// instance at start-up: of concurrent calls exactly one sets the permits (a
// semaphore never set up has 0 permits, and Acquire waits until some are
// added). It returns
// ErrInvalidPermits for n < 0, ErrWrongType when the key holds another
// Redis type, ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error. A call resent by go-redis after a lost reply reports its first
// result.
func (s *PermitExpirableSemaphore) TrySetPermits(ctx context.Context, n int64) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opPermitTrySetPermits)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if n < 0 {
		return false, objectErr(permitKind, s.name, invalidOption(ErrInvalidPermits, "permits", n, "at least 0"))
	}
	latch := s.latch()
	ok, err := s.c.scripts.run(ctx, scriptPermitSet, append(s.keys[:len(s.keys):len(s.keys)], latch),
		n, s.c.pubsub.publishArg(ctx), s.c.retryWindowArg).Int64()
	s.returned(latch, ok == 1, err)
	return ok == 1, s.wrap(err)
}

// AddPermits adds n permits to the available count, or removes -n of them
// when n is negative (the count may then drop below zero, as in Redisson,
// and acquisitions wait until releases bring it above). Adding wakes the
// queued waiters of this library the permits serve, first come first
// served, and Redisson's waiters through the count it publishes. It
// returns the new available count, and ErrWrongType when the key holds
// another Redis type or a string that is not an integer,
// ErrInvalidPermits when the count would overflow an int64 (leaving it
// unchanged), ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error. A call
// resent by go-redis after a lost reply adds once.
func (s *PermitExpirableSemaphore) AddPermits(ctx context.Context, n int64) (_ int64, err error) {
	ctx, rec, err := s.open(ctx, opPermitAddPermits)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	latch := s.latch()
	v, err := s.c.scripts.run(ctx, scriptPermitAdd, append(s.keys[:len(s.keys):len(s.keys)], latch),
		n, s.c.pubsub.publishArg(ctx), s.c.retryWindowArg).Int64()
	s.returned(latch, err == nil, err)
	return v, s.wrap(err)
}

// AvailablePermits returns the number of permits that can be acquired now
// (0 when the semaphore was never set; negative after AddPermits took more
// than were available). Permits whose lease ended are counted as available
// again first, and waiters are told. It returns ErrWrongType, ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (s *PermitExpirableSemaphore) AvailablePermits(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.open(ctx, opPermitAvailable)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	available, _, err := s.counts(ctx)
	return available, err
}

// AcquiredPermits returns the number of permits held now, by any client
// (permits whose lease ended are counted as available again first). It
// returns ErrWrongType, ErrEmptyName, ErrInvalidName, ErrClientClosed, or a
// Redis error.
func (s *PermitExpirableSemaphore) AcquiredPermits(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := s.open(ctx, opPermitAcquired)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	_, held, err := s.counts(ctx)
	return held, err
}

// counts returns the available and the held permits.
func (s *PermitExpirableSemaphore) counts(ctx context.Context) (available, held int64, err error) {
	res, err := s.c.scripts.run(ctx, scriptPermitAvailable, s.keys, s.c.pubsub.publishArg(ctx)).Int64Slice()
	if err != nil {
		return 0, 0, s.wrap(err)
	}
	if len(res) != 2 {
		return 0, 0, objectErrorf(permitKind, s.name, "%w: available returned %v", ErrUnexpectedReply, res)
	}
	return res[0], res[1], nil
}

// Delete deletes the semaphore's keys, its count and its held permits, and
// reports whether there was anything to delete (a Delete resent by go-redis
// after a lost reply reports false). Held permit ids become unknown; waiters
// wait until permits are set or added again. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (s *PermitExpirableSemaphore) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opPermitDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	s.c.trip(ctx, 1)
	n, err := s.c.rdb.Del(ctx, s.keys[0], s.keys[1], s.keys[3], s.keys[4]).Result()
	return n > 0, s.wrap(err)
}

// newPermitID returns 16 random bytes, the raw form of a permit id.
func newPermitID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand crashes the program instead)
	return string(b[:])
}

// parsePermitID turns a permit id as shown to users (32 hex digits) into
// its raw form.
func parsePermitID(id string) (string, bool) {
	if len(id) != 32 {
		return "", false
	}
	b, err := hex.DecodeString(id)
	return string(b), err == nil
}

// leaseMs is lease as a script argument: whole ms, at least 1; 0 = never
// expires.
func leaseMs(lease time.Duration) int64 {
	if lease == 0 {
		return 0
	}
	return max(lease.Milliseconds(), 1)
}

// Acquire waits until it holds a permit or ctx ends, and returns the
// permit's id (32 lowercase hex digits, as Redisson shows them). lease > 0
// is the permit's lease, after which it returns to the pool by itself unless
// released or extended first; lease == 0 makes a permit that is held until
// Release. It returns ErrNegativeDuration for a negative lease; ctx.Err()
// (wrapped) when ctx ends first, leaving no permit of this call and no
// subscription behind; ErrWrongType, ErrEmptyName, ErrInvalidName,
// ErrClientClosed, or a Redis error otherwise.
func (s *PermitExpirableSemaphore) Acquire(ctx context.Context, lease time.Duration) (_ string, err error) {
	ctx, rec, err := s.open(ctx, opPermitAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err != nil {
		return "", err
	}
	if lease < 0 {
		return "", objectErrorf(permitKind, s.name, "%w: lease %v", ErrNegativeDuration, lease)
	}
	id, _, err := s.tryAcquire(ctx, -1, lease)
	return id, err
}

// TryAcquire tries to take a permit for up to wait and returns its id and
// true when it did; "", false, nil when the wait ran out. wait == 0 makes a
// single attempt. lease is as for Acquire. While it waits it wakes when
// another client releases or adds permits, and when the nearest lease of a
// held permit ends. It returns ErrNegativeDuration for a negative wait or
// lease; ctx.Err() (wrapped) when ctx ends first; ErrWrongType,
// ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error
// otherwise. An error leaves no permit of this call behind: an acquire whose
// reply was lost is undone (when Redis cannot be reached to undo it, a
// permit with a lease returns when its lease ends; one without a lease stays
// taken).
//
// A call resent by go-redis after a lost reply takes one permit, not two:
// the id is chosen before the first send and a resend finds it held.
func (s *PermitExpirableSemaphore) TryAcquire(ctx context.Context, wait, lease time.Duration) (_ string, ok bool, err error) {
	ctx, rec, err := s.open(ctx, opPermitAcquire)
	defer func() { rec.end(err, acquiredIf(ok)) }()
	if err != nil {
		return "", false, err
	}
	if wait < 0 || lease < 0 {
		return "", false, objectErrorf(permitKind, s.name, "%w: wait %v, lease %v", ErrNegativeDuration, wait, lease)
	}
	return s.tryAcquire(ctx, wait, lease)
}

// tryAcquire takes a permit, waiting up to wait (wait < 0: until ctx ends).
// A waiting call queues in Redis with this library's other waiters (see
// Semaphore), first come, first served; its place is given up when it
// returns without a permit.
func (s *PermitExpirableSemaphore) tryAcquire(ctx context.Context, wait, lease time.Duration) (string, bool, error) {
	id, ms := newPermitID(), leaseMs(lease)
	deadline := waitEnd(time.Now(), wait)
	if wait == 0 || !s.c.pubsub.listening(s.channel) {
		// A plain first try, with no subscription and no place in the
		// queue (so no call id).
		tctx, cancel := tryContext(ctx, deadline)
		ok, _, err := s.acquire(tctx, id, ms, "", false)
		cancel()
		if err != nil || ok || wait == 0 {
			return permitHex(id, ok), ok, err
		}
	}
	req := s.c.newRequest()
	call := s.c.id + ":" + req
	ok, err := s.c.queueWait(ctx, permitKind, s.name, s.channel, s.wake, req, deadline,
		func(ctx context.Context) (bool, time.Duration, error) {
			return s.acquire(ctx, id, ms, call, true)
		})
	if !ok {
		s.leave(ctx, call)
	}
	return permitHex(id, ok), ok, err
}

// leave gives up the queue place of the call (when it has one), within the
// client's CleanupTimeout; if Redis cannot be reached, the place expires by
// itself.
func (s *PermitExpirableSemaphore) leave(ctx context.Context, call string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	if err := s.c.scripts.run(cctx, scriptPermitLeave, s.keys, call, s.c.pubsub.publishArg(cctx)).Err(); err != nil {
		s.c.emit.emit(Event{Type: EventHandOffFailed, Kind: permitKind, Name: s.name, Err: err})
	}
}

func permitHex(raw string, ok bool) string {
	if !ok {
		return ""
	}
	return hex.EncodeToString([]byte(raw))
}

// acquire runs the acquire script once for the call; with queue, a try
// that takes nothing queues it (or confirms its place). It reports whether
// the permit id is held and, when not, how long until the nearest lease
// ends (-1: none ends).
func (s *PermitExpirableSemaphore) acquire(ctx context.Context, id string, leaseMs int64, call string, queue bool) (bool, time.Duration, error) {
	q := "0"
	if queue {
		q = "1"
	}
	res, err := s.c.scripts.run(ctx, scriptPermitAcquire, s.keys, id, leaseMs, s.c.pubsub.publishArg(ctx),
		call, q, semPlaceTTLArg).Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			// The script may have run and its reply been lost: undo it.
			s.compensate(ctx, id)
		}
		return false, 0, s.wrap(err)
	}
	switch {
	case len(res) != 2:
		return false, 0, objectErrorf(permitKind, s.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
	case res[0] == 1:
		return true, 0, nil
	case res[1] < 0:
		return false, -1, nil
	}
	return false, time.Duration(res[1]) * time.Millisecond, nil
}

// compensate releases id, in case an acquire whose outcome is unknown took
// it, within the client's CleanupTimeout.
func (s *PermitExpirableSemaphore) compensate(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	_, _ = s.release(cctx, id)
}

// Release returns the permit called permitID to the pool and wakes a
// waiter. It returns ErrUnknownPermit when that permit is not held: never
// issued, already released, or its lease ended (its permit then already
// came back to the pool); Redis is left unchanged. It returns ErrWrongType,
// ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis error otherwise.
// Release still runs when ctx is already cancelled, within the client's
// CleanupTimeout. A call resent by go-redis after a lost reply reports the
// first run's success; a second Release of the same id is ErrUnknownPermit.
func (s *PermitExpirableSemaphore) Release(ctx context.Context, permitID string) (err error) {
	ctx, rec, err := s.open(ctx, opPermitRelease)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	raw, ok := parsePermitID(permitID)
	if !ok {
		return objectErrorf(permitKind, s.name, "%w: permit %q is not 32 hex digits", ErrUnknownPermit, permitID)
	}
	if ctx.Err() != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
		defer cancel()
	}
	released, err := s.release(ctx, raw)
	switch {
	case err != nil:
		return s.wrap(err)
	case !released:
		return objectErrorf(permitKind, s.name, "%w: permit %s", ErrUnknownPermit, permitID)
	}
	return nil
}

// release runs the release script once with a fresh latch and reports
// whether the permit was held.
func (s *PermitExpirableSemaphore) release(ctx context.Context, raw string) (bool, error) {
	latch := s.latch()
	n, err := s.c.scripts.run(ctx, scriptPermitRelease, append(s.keys[:len(s.keys):len(s.keys)], latch),
		raw, s.c.retryWindowArg, s.c.pubsub.publishArg(ctx)).Int64()
	s.returned(latch, n == 1, err)
	return n == 1, err
}

// UpdateLease sets the lease of the held permit called permitID to lease,
// counted from now (lease == 0: the permit no longer expires), and reports
// whether the permit was held; false, nil for a permit that is not held
// (never issued, released, or its lease already ended), as Redisson's
// updateLeaseTime. It returns ErrNegativeDuration for a negative lease;
// ErrWrongType, ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error otherwise.
func (s *PermitExpirableSemaphore) UpdateLease(ctx context.Context, permitID string, lease time.Duration) (_ bool, err error) {
	ctx, rec, err := s.open(ctx, opPermitUpdateLease)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if lease < 0 {
		return false, objectErrorf(permitKind, s.name, "%w: lease %v", ErrNegativeDuration, lease)
	}
	raw, ok := parsePermitID(permitID)
	if !ok {
		return false, nil
	}
	n, err := s.c.scripts.run(ctx, scriptPermitUpdate, s.keys, raw, leaseMs(lease), s.c.pubsub.publishArg(ctx)).Int64()
	return n == 1, s.wrap(err)
}
