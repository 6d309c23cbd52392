package redisson

import (
	"context"
	"math"
	"strconv"
	"time"
)

// reservationRecheck bounds the waits of the semaphore waiter holding the
// reservation: it is woken by release messages like any waiter, but the
// message goes to the first waiter of each client, which it may not be.
// One waiter per semaphore polls at this rate.
const reservationRecheck = 100 * time.Millisecond

// reservationTTL is how long a semaphore reservation outlives the last try
// of the waiter holding it, so that the reservation of a process that died
// holds others back briefly.
const reservationTTL = 2 * time.Second

var (
	reservationTTLArg = strconv.FormatInt(reservationTTL.Milliseconds(), 10)
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
// Fairness. A release message wakes, in every client, as many local
// waiters as it says permits are available, in arrival order. Across
// clients, the waiter of this library that started waiting first holds a
// reservation in Redis (redisson_sc_reservation:{name}: its call, its number
// of permits, and when it started waiting, by the server's clock): while it
// stands, no other acquirer of this library takes permits that would leave
// fewer than the reserved number available, and an older waiter takes it
// over. The guarantee: a waiter is never starved by acquirers of this
// library, whatever they ask for; once it is the oldest it is served as
// soon as its permits are available, and newcomers queue behind it. Waiters
// reserve from their first re-check on (after a release message or a
// second); the holder re-checks every 100ms even without a message, drops
// the reservation when it is served or gives up, and a reservation not
// refreshed for 2s expires (its process died). Java Redisson clients do not
// read the reservation and may take permits ahead of it. A waiter asking
// for more permits than will ever be available holds back every other
// acquirer of this library until its wait ends, as in a fair
// java.util.concurrent.Semaphore.
//
// Exactly once per call. go-redis resends a command whose reply was lost;
// every call that changes the count leaves a call marker
// redisson_sc_call:{name}:<id> (deleted in the background once the call has
// returned, expiring after the client's RetryWindow otherwise), so a resent
// call is counted once.
//
// A Semaphore is safe for concurrent use and holds no state of its own.
type Semaphore struct {
	c       *Client
	name    string
	channel string
	resKey  string
	callPre string // call marker prefix: redisson_sc_call:{name}:<client uuid>:
	badName error
}

const semKind = "semaphore"

// GetSemaphore returns the semaphore called name. It does no I/O; an empty
// name makes every method return ErrEmptyName. On Redis Cluster a name
// containing '{' must carry a complete hash tag (as in "{pool}:db"), so
// that the semaphore's keys share one slot; other such names return
// ErrInvalidName.
func (c *Client) GetSemaphore(name string) *Semaphore {
	s := &Semaphore{
		c:       c,
		name:    name,
		channel: prefixName("redisson_sc", name),
		resKey:  prefixName("redisson_sc_reservation", name),
		callPre: prefixName("redisson_sc_call", name) + ":" + c.id + ":",
	}
	s.badName = c.nameError(semKind, name, s.channel)
	return s
}

// Name returns the semaphore's name, the Redis key of its available permits.
func (s *Semaphore) Name() string { return s.name }

func (s *Semaphore) check(n int64) error {
	if s.name != "" && s.badName == nil && n < 0 {
		return objectErrorf(semKind, s.name, "%w: %d", ErrInvalidPermits, n)
	}
	return s.c.checkObject(s.name, s.badName)
}

// wrap names the semaphore in err; WRONGTYPE replies, and replies saying the
// key holds no integer, match ErrWrongType.
func (s *Semaphore) wrap(err error) error { return intKeyErr(semKind, s.name, err) }

// marker returns a fresh call marker key.
func (s *Semaphore) marker() string { return s.callPre + s.c.newRequest() }

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
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemTrySetPermits)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(n); err != nil {
		return false, err
	}
	m := s.marker()
	set, err := s.c.scripts.run(ctx, scriptSemSet, []string{s.name, m, s.channel}, n, s.c.retryWindowArg, s.c.pubsub.publishArg(ctx)).Int64()
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
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemAddPermits)
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
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemRelease)
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
	err := s.c.scripts.run(ctx, scriptSemAdd, []string{s.name, m, s.channel}, n, s.c.retryWindowArg, s.c.pubsub.publishArg(ctx)).Err()
	forgetCallMarker(s.c, m, err)
	return s.wrap(err)
}

// AvailablePermits returns the number of available permits: 0 when the
// semaphore does not exist, negative after AddPermits took more than were
// available. It returns ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error.
func (s *Semaphore) AvailablePermits(ctx context.Context) (_ int64, err error) {
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemAvailable)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(0); err != nil {
		return 0, err
	}
	return readIntKey(ctx, s.c, semKind, s.name)
}

// DrainPermits takes every available permit and returns how many there were
// (0 when the semaphore does not exist, which it leaves missing). It returns
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error.
func (s *Semaphore) DrainPermits(ctx context.Context) (_ int64, err error) {
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemDrain)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(0); err != nil {
		return 0, err
	}
	m := s.marker()
	v, err := s.c.scripts.run(ctx, scriptSemDrain, []string{s.name, m}, s.c.retryWindowArg).Int64()
	forgetCallMarker(s.c, m, err)
	return v, s.wrap(err)
}

// Delete deletes the semaphore (whatever type its key holds, like
// Redisson) and any reservation, and reports whether the semaphore existed.
// Waiters keep waiting: a missing semaphore has no permits. A call resent
// after a lost reply may report false. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (s *Semaphore) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := s.check(0); err != nil {
		return false, err
	}
	n, err := s.c.scripts.run(ctx, scriptSemDelete, []string{s.name, s.resKey}).Int64()
	return n == 1, s.wrap(err)
}

// Acquire takes n permits, waiting until they are available or ctx ends.
// n == 0 returns at once without I/O, as in Redisson. It returns ctx.Err()
// (wrapped) when ctx ends first, leaving no permit taken, no reservation and
// no subscription behind; ErrInvalidPermits for n < 0; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error otherwise.
// See Semaphore for the order in which waiters are served; a semaphore never
// set up (see TrySetPermits) has 0 permits.
func (s *Semaphore) Acquire(ctx context.Context, n int64) (err error) {
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemAcquire)
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
	ctx, rec := s.c.begin(ctx, semKind, s.name, opSemAcquire)
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
	a := &semCall{s: s, n: n, id: s.c.id + ":" + req, start: time.Now()}
	a.keys = []string{s.name, s.resKey, s.callPre + req, s.channel}
	if wait == 0 || !s.c.pubsub.listening(s.channel) {
		// A plain first try, with no subscription.
		tctx, cancel := tryContext(ctx, waitEnd(a.start, wait))
		ok, err := a.try(tctx, -1)
		cancel()
		if err != nil || ok || wait == 0 {
			return ok, err
		}
	}
	// recheck makes await try once before its first wait, at once when it
	// joins this client's subscription, after subscribing otherwise, and
	// bound every wait by syncRecheck. (Its queued path, which waits behind
	// local waiters without trying, does not suit a semaphore: a newcomer
	// may need fewer permits than are free.)
	ok, err := s.c.await(ctx, waitSpec{
		what: semKind, name: s.name, channel: s.channel, policy: semaphoreWakePolicy, wait: wait, start: a.start,
		recheck: true, retry: syncRecheck,
	},
		func(ctx context.Context, w waiting) (bool, time.Duration, error) {
			waited := int64(-1)
			if w.age >= 0 { // has waited once: may reserve
				waited = time.Since(a.start).Milliseconds()
			}
			ok, err := a.try(ctx, waited)
			if a.reserved {
				return ok, reservationRecheck, err
			}
			return ok, syncRecheck, err
		})
	if !ok && a.reserved {
		a.cancel(ctx, false)
	}
	return ok, err
}

// semaphoreWakePolicy (Semaphore and PermitExpirableSemaphore, which share
// Redisson's channel format): a message is the new number of available permits v
// (Redisson's release message); it wakes up to v local waiters, none when v
// <= 0.
func semaphoreWakePolicy(payload string) wake {
	v, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return wake{ignored: true}
	}
	return wake{n: int(min(max(v, 0), math.MaxInt32))}
}

// semCall is one Acquire or TryAcquire call: its id names its call marker
// and its reservation.
type semCall struct {
	s        *Semaphore
	n        int64
	id       string
	keys     []string // semaphore, reservation, call marker, channel
	start    time.Time
	reserved bool // the latest try left this call holding the reservation
}

// try runs the acquire script once; waited >= 0 lets it reserve. A try
// whose reply may have been lost is undone before it returns its error.
func (a *semCall) try(ctx context.Context, waited int64) (bool, error) {
	s := a.s
	res, err := s.c.scripts.run(ctx, scriptSemAcquire, a.keys,
		a.n, a.id, waited, s.c.retryWindowArg, reservationTTLArg, s.c.pubsub.publishArg(ctx)).Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			a.cancel(ctx, true) // the script may have run: undo it
		}
		return false, s.wrap(err)
	}
	switch {
	case len(res) >= 2 && res[0] == 1:
		a.reserved = false
		s.c.janitor.add(a.keys[2])
		return true, nil
	case len(res) >= 3 && res[0] == 0:
		a.reserved = res[2] == 1
		return false, nil
	}
	return false, objectErrorf(semKind, s.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
}

// cancel ends the call in Redis: it gives back permits a try took if its
// reply was lost, drops the call's reservation, and, with inFlight, leaves
// a marker that refuses a resend still on its way. It outlives ctx, within
// the client's CleanupTimeout; if Redis cannot be reached, the reservation
// expires by itself, but permits taken by a lost reply stay taken.
func (a *semCall) cancel(ctx context.Context, inFlight bool) {
	s := a.s
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	var window any = "0"
	if inFlight {
		window = s.c.retryWindowArg
	}
	if err := s.c.scripts.run(cctx, scriptSemCancel, a.keys, a.n, a.id, window, s.c.pubsub.publishArg(cctx)).Err(); err != nil {
		// The reservation expires by itself; until then it holds up the
		// waiters behind it.
		s.c.emit.emit(Event{Type: EventHandOffFailed, Kind: semKind, Name: s.name, Err: err})
	}
	a.reserved = false
}
