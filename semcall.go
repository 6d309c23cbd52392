package redisson

import (
	"context"
	"math"
	"strconv"
	"strings"
	"time"
)

// One semaphore acquisition (semCall: its try, wait and cancel) and the wait
// loop that both semaphores share (queueWait), with their wake policies.
// Below semaphore.go and permitsemaphore.go: a call carries the semaphore's
// base and channels, never its type.

// semPlaceTTL is how long a semaphore waiter's place in the queue outlives
// its last try (every wait is bounded by syncRecheck, so a live waiter
// confirms it three times as often), so that the place of a process that
// died holds the others back briefly.
const semPlaceTTL = 3 * syncRecheck

var semPlaceTTLArg = strconv.FormatInt(semPlaceTTL.Milliseconds(), 10)

// wait takes the permits, queuing in Redis, until deadline (zero: until ctx
// ends).
func (a *semCall) wait(ctx context.Context, deadline time.Time) (bool, error) {
	b := a.b
	return b.c.queueWait(ctx, b.kind, b.name, a.channel, a.wake, a.id[len(b.c.id)+1:], deadline,
		func(ctx context.Context) (bool, time.Duration, error) {
			ok, err := a.try(ctx, true)
			return ok, -1, err
		})
}

// semCall is one Acquire or TryAcquire call: its id names its call marker
// and its place in the queue.
type semCall struct {
	b       *base  // the semaphore's
	channel string // the semaphore's channel
	wake    string // its client's wake channel
	n       int64
	id      string
	keys    []string // semaphore, queue, waiters, channel, wake prefix, call marker
	start   time.Time
	queued  bool // a try of this call may have left it a place in the queue
}

// try runs the acquire script once; with queue, a try that takes nothing
// queues the call (or confirms its place). A try whose reply may have been
// lost is undone before it returns its error.
func (a *semCall) try(ctx context.Context, queue bool) (bool, error) {
	s := a.b
	q := "0"
	if queue {
		q = "1"
		a.queued = true
	}
	res, err := s.c.scripts.run(ctx, scriptSemAcquire, a.keys,
		a.n, a.id, q, s.c.retryWindowArg, semPlaceTTLArg, s.c.pubsub.publishArg(ctx)).Int64Slice()
	if err != nil {
		if mayHaveRun(err) {
			a.cancel(ctx, true) // the script may have run: undo it
		}
		return false, intKeyErr(s.kind, s.name, err)
	}
	switch {
	case len(res) >= 2 && res[0] == 1:
		a.queued = false
		s.c.janitor.add(a.keys[5])
		return true, nil
	case len(res) >= 3 && res[0] == 0:
		return false, nil
	}
	return false, objectErrorf(s.kind, s.name, "%w: acquire returned %v", ErrUnexpectedReply, res)
}

// cancel ends the call in Redis: it gives back permits a try took if its
// reply was lost, gives up the call's place in the queue, and, with
// inFlight, leaves a marker that refuses a resend still on its way. It
// outlives ctx, within the client's CleanupTimeout; if Redis cannot be
// reached, the place expires by itself, but permits taken by a lost reply
// stay taken.
func (a *semCall) cancel(ctx context.Context, inFlight bool) {
	s := a.b
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.c.opts.CleanupTimeout)
	defer cancel()
	var window any = "0"
	if inFlight {
		window = s.c.retryWindowArg
	}
	if err := s.c.scripts.run(cctx, scriptSemCancel, a.keys, a.n, a.id, window, s.c.pubsub.publishArg(cctx)).Err(); err != nil {
		// The place expires by itself; until then it holds up the waiters
		// behind it.
		s.c.emit.emit(Event{Type: EventHandOffFailed, Kind: s.kind, Name: s.name, Err: err})
	}
	a.queued = false
}

// queueWait is the wait of a Semaphore's or PermitExpirableSemaphore's
// acquire call tagged tag (its call number), queued in Redis by try: it
// runs try until it succeeds, deadline passes (false, nil; zero: never) or
// ctx ends (an error wrapping ctx.Err()). It listens on the object's
// channel (a Redisson client's release wakes it) and on its client's wake
// channel (this library's changes wake exactly the waiters they serve),
// both subscribed before its first try so that no wake-up sent after it is
// missed. Every wait lasts at most syncRecheck (so each try confirms the
// waiter's place), or the retry try reported when shorter (> 0).
//
// It is the library's second wait loop, beside await (wait.go), on purpose:
// its waiter is queued in Redis by its own try, so it must listen on two
// channels at once, both confirmed before that first try, and its wake-ups
// are addressed to it by tag; it never queues behind local waiters or yields
// to other clients, and no holder's lease bounds its waits. Each of these is
// the opposite of what await does for locks and latches; folding them in
// would give await modes that only this caller uses.
func (c *Client) queueWait(ctx context.Context, kind, name, channel, wakeChannel, tag string, deadline time.Time,
	try func(context.Context) (bool, time.Duration, error)) (ok bool, err error) {
	p := c.pubsub
	sub, err := p.subscribe(ctx, objectChannel{name: channel}, semaphoreWakePolicy)
	if err != nil {
		return false, c.waitErr(kind, name, err)
	}
	defer sub.close()
	wake, err := p.subscribe(ctx, objectChannel{name: wakeChannel}, semWakeChannelPolicy)
	if err != nil {
		return false, c.waitErr(kind, name, err)
	}
	defer wake.close()
	wake.setTag(tag)
	// A waiter that leaves without its permits passes a wake-up from a
	// Redisson client's release it may have had on to the next local one
	// (runs before close). Its place's wake-ups need no passing on: giving
	// up the place wakes the waiters behind it that it held back.
	defer func() {
		if !ok {
			sub.passOn()
		}
	}()
	bound := func(retry time.Duration) time.Duration {
		d := syncRecheck
		if retry > 0 {
			d = min(d, retry)
		}
		if !deadline.IsZero() {
			d = min(d, time.Until(deadline))
		}
		return d
	}
	// A message published before Redis confirmed a subscription is lost:
	// wait for both confirmations (no time when they are old) first.
	t := c.blockStart()
	if sub.ready(ctx, max(bound(-1), time.Millisecond)) {
		wake.ready(ctx, max(bound(-1), time.Millisecond))
	}
	c.blockEnd(ctx, t)
	for {
		tctx, cancel := tryContext(ctx, deadline)
		ok, retry, err := try(tctx)
		cancel()
		if err != nil || ok {
			return ok, err
		}
		d := bound(retry)
		if d <= 0 {
			return false, nil
		}
		t := c.blockStart()
		_, err = sub.waitEither(ctx, d, wake)
		c.blockEnd(ctx, t)
		if err != nil {
			return false, c.waitErr(kind, name, err)
		}
		if err := ctx.Err(); err != nil {
			return false, objectErrorf(kind, name, "%w", err)
		}
	}
}

// semaphoreWakePolicy (Semaphore and PermitExpirableSemaphore, which share
// Redisson's channel format): a message is the new number v of available
// permits (Redisson's release message); it wakes up to v local waiters,
// none when v <= 0. A number with a '+' sign is this library's Semaphore's:
// its wake channels carry the wake-ups, so it wakes nobody.
func semaphoreWakePolicy(payload string) wake {
	if strings.HasPrefix(payload, "+") {
		return wake{ignored: true}
	}
	v, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		return wake{ignored: true}
	}
	return wake{n: int(min(max(v, 0), math.MaxInt32))}
}

// semWakeChannelPolicy (a Semaphore's wake channel): a message is the call
// numbers of the waiters to wake, separated by spaces.
func semWakeChannelPolicy(payload string) wake {
	if strings.TrimSpace(payload) == "" {
		return wake{ignored: true}
	}
	return wake{tags: payload}
}
