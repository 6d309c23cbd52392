package redisson

import (
	"context"
	"strconv"
	"strings"
	"time"
)

const fairKind = "fair lock"

// fairLock is the kind of the handles GetFairLock returns.
var fairLock = &lockKind{
	what:      fairKind,
	acquire:   scriptFairAcquire,
	release:   scriptFairRelease,
	force:     scriptFairForce,
	forceArgs: func(pub any) []any { return []any{pub} },
	state:     scriptLockState,
	renew:     scriptLockRenew,
	drop:      scriptLockDrop,
	identify:  fairIdentity,
	decode:    decodeLockState,
	queuePub:  "wait",
	tellsNext: true,
	queue:     fairQueueKey,
}

// fairQueueKey is the fair lock's queue of waiting owners.
func fairQueueKey(name string) string { return prefixName("redisson_lock_queue", name) }

// GetFairLock returns a new owner handle for the fair lock called name: a
// Lock (same surface, same ownership, leases, watchdog and fencing tokens)
// that is granted in request order across processes. It is wire-compatible
// with Redisson's RFairLock: the lock hash, the queue redisson_lock_queue:{name},
// the zset redisson_lock_timeout:{name} of waiter deadlines, and one channel
// per waiter, redisson_lock__channel:{name}:<owner>, on which the release
// wakes only the first waiter.
//
// A waiter joins the queue on its first blocking attempt and confirms it is
// alive every third of Options.FairWaiterTimeout while it waits (in the
// zset redisson_lock_alive:{name}, which Redisson does not read); one that
// stops (its process died) is dropped by this library's next call once that
// timeout passes, so a dead waiter delays the queue by about
// FairWaiterTimeout (5s by default), where Redisson waits up to five
// minutes. The queue deadlines Redisson reads follow Redisson's own
// arithmetic (an allowance per waiter: its TryLock wait, or five minutes,
// Redisson's fairLockWaitTimeout, for Lock; moved up on every
// acquisition), so Go and Java waiters share one consistent queue; a dead Go
// waiter is only dropped that fast by Go clients, and Java clients alone
// would wait for its Redisson deadline. A single attempt (wait == 0) never
// queues. A waiter that gives up leaves the queue at once. Time is read from
// the Redis server; Redisson uses its clients' clocks, which must therefore
// be synchronised with it.
func (c *Client) GetFairLock(name string) *Lock {
	return c.newLock(fairLock, name, prefixName("redisson_lock__channel", name), "")
}

// fairWakePolicy: a waiter's own channel carries 0 when it is its turn,
// and the lease-change message -1 - ms (a negative number) when the holder's
// lease is one it has not seen (fair_acquire.lua): it tries again, which
// re-arms its wait's bound with that lease.
func fairWakePolicy(payload string) wake {
	if payload == "0" || strings.HasPrefix(payload, "-") {
		return wake{n: 1}
	}
	return wake{ignored: true}
}

// fairIdentity is a fair waiter's identity. Its acquire takes the queue,
// the waiter deadlines and the liveness zset in place of the channel, and
// joins the queue when it waits; its release is given them too. It waits on
// the owner's own channel, joining the queue on its first blocking attempt
// and renewing its place every third of FairWaiterTimeout (each try does),
// and leaves the queue when it gives up.
func fairIdentity(c *Client, n lockNames, owner, field string) *identity {
	id := baseIdentity(n, owner, field)
	queue := fairQueueKey(n.key)
	timeouts := prefixName("redisson_lock_timeout", n.key)
	alive := prefixName("redisson_lock_alive", n.key)
	id.acqKeys = []string{n.key, n.tokenKey, alive, queue, timeouts, n.channel}
	id.relKeys = []string{n.key, n.channel, "", queue, timeouts, alive}
	id.acqKeysArg, id.relKeysArg = boxKeys(id.acqKeys), boxKeys(id.relKeys)
	id.acqExtra = []any{c.fairWaiterArg(), c.tokenTTLArg()}
	id.waitArg = fairAllowance
	leaveKeys := []string{n.key, n.channel, queue, timeouts, alive}
	id.wait = waitSpec{
		channel: n.channel + ":" + field,
		policy:  fairWakePolicy,
		own:     true,
		beat:    c.opts.FairWaiterTimeout / 3,
		onGiveUp: func(ctx context.Context, wait time.Duration) {
			// (A fair lock's field is its owner; leaveKeys[0] its name.)
			c.emit.emit(Event{Type: EventWaiterGaveUp, Kind: fairKind, Name: leaveKeys[0], Owner: field})
			c.leaveQueue(ctx, leaveKeys, field, wait)
		},
	}
	return id
}

// leaveQueue takes field out of the queue, within a bounded clean-up that
// outlives ctx; if that fails the entry is dropped at its deadline anyway.
// The waiters behind it move up by its allowance (wait: the caller's).
func (c *Client) leaveQueue(ctx context.Context, keys []string, field string, wait time.Duration) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.opts.CleanupTimeout)
	defer cancel()
	if err := c.scripts.run(cctx, scriptFairLeave, keys, field, c.pubsub.publishArg(cctx), fairAllowance(wait)).Err(); err != nil {
		// The next waiter is not woken: it finds its turn at its next
		// heartbeat, and the entry is dropped at its deadline.
		c.emit.emit(Event{Type: EventHandOffFailed, Kind: fairKind, Name: keys[0], Err: err})
	}
}

// fairLockWaitTimeout is Redisson's default fairLockWaitTimeout: the queue
// allowance of a waiter that gave no wait.
const fairLockWaitTimeout = 5 * time.Minute

// fairAllowance is a waiter's queue allowance in ms, the unit of the queue
// deadlines Redisson clients read, as Redisson reckons it: the caller's
// wait when it gave one (wait > 0), else fairLockWaitTimeout.
func fairAllowance(wait time.Duration) any {
	if wait <= 0 {
		wait = fairLockWaitTimeout
	}
	return strconv.FormatInt(max(wait.Milliseconds(), 1), 10)
}

// fairWaiterArg is FairWaiterTimeout in ms, for the acquire script.
func (c *Client) fairWaiterArg() any {
	return strconv.FormatInt(c.opts.FairWaiterTimeout.Milliseconds(), 10)
}
