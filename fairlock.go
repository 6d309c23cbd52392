package redisson

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// fairLock is the kind of the handles GetFairLock returns.
var fairLock = &lockKind{
	what:      "fair lock",
	acquire:   mustScript("fair_acquire"),
	release:   mustScript("fair_release"),
	force:     mustScript("fair_force_unlock"),
	forceArgs: func(pub any) []any { return []any{pub} },
	state:     scriptLockState,
	renew:     scriptLockRenew,
	drop:      scriptLockDrop,
}

var scriptFairLeave = mustScript("fair_leave")

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
// arithmetic (a five-minute allowance per waiter, moved up on every
// acquisition), so Go and Java waiters share one consistent queue; a dead Go
// waiter is only dropped that fast by Go clients, and Java clients alone
// would wait for its Redisson deadline. A single attempt (wait == 0) never
// queues. A waiter that gives up leaves the queue at once. Time is read from
// the Redis server; Redisson uses its clients' clocks, which must therefore
// be synchronised with it.
func (c *Client) GetFairLock(name string) *Lock {
	return c.newLock(fairLock, name, prefixName("redisson_lock__channel", name), "")
}

// fairWakePolicy: a waiter's own channel carries 0 when it is its turn.
func fairWakePolicy(payload string) wake {
	if payload == "0" {
		return wake{n: 1}
	}
	return wake{ignored: true}
}

// fairTryLock is tryLock for fair locks: one attempt without queueing, then
// (for a wait) subscribe to the owner's own channel, join the queue and wait
// for its turn, renewing the place in the queue as it waits.
func (l *Lock) fairTryLock(ctx context.Context, wait, lease time.Duration) (ok bool, err error) {
	ok, _, err = l.acquire(ctx, lease, waiting{})
	if err != nil || ok || wait == 0 {
		return ok, err
	}
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	beat := l.c.opts.FairWaiterTimeout / 3
	bound := func(retry time.Duration) (time.Duration, bool) {
		d := beat
		if retry > 0 {
			d = min(d, retry)
		}
		if deadline.IsZero() {
			return d, true
		}
		left := time.Until(deadline)
		return min(d, left), left > 0
	}
	l.mu.Lock()
	channel, field := l.channel+":"+l.field, l.field
	l.mu.Unlock()
	sub, err := l.c.pubsub.subscribe(ctx, objectChannel{name: channel}, fairWakePolicy)
	if err != nil {
		return false, err
	}
	defer sub.close()
	defer func() {
		if !ok {
			l.leaveQueue(ctx, field)
		}
	}()
	d, _ := bound(-1)
	sub.ready(ctx, d)
	for {
		var retry time.Duration
		if ok, retry, err = l.acquire(ctx, lease, waiting{subscribed: true}); err != nil || ok {
			return ok, err
		}
		d, more := bound(retry)
		if !more {
			return false, nil
		}
		if _, err := sub.wait(ctx, d); err != nil {
			return false, l.c.waitErr(l.kind.what, l.name, err)
		}
	}
}

// leaveQueue takes field out of the queue, within a bounded clean-up that
// outlives ctx; if that fails the entry is dropped at its deadline anyway.
func (l *Lock) leaveQueue(ctx context.Context, field string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), l.c.opts.CleanupTimeout)
	defer cancel()
	_ = l.c.scripts.run(cctx, scriptFairLeave, []string{l.name, l.channel, l.queueKey, l.timeoutKey, l.aliveKey}, field, l.c.pubsub.publishArg(cctx), fairAllowanceArg).Err()
}

// QueueLength returns how many owners wait in a fair lock's queue (0 for
// other locks).
func (l *Lock) QueueLength(ctx context.Context) (int64, error) {
	if err := l.check(); err != nil {
		return 0, err
	}
	if l.kind != fairLock {
		return 0, nil
	}
	n, err := l.c.rdb.LLen(ctx, l.queueKey).Result()
	if err != nil {
		return 0, classify(l.name, fmt.Errorf("fair lock queue: %w", err))
	}
	return n, nil
}

// fairAllowanceArg is Redisson's default fairLockWaitTimeout (5 min) in ms:
// the wait allowance of the queue deadlines Redisson clients read.
const fairAllowanceArg = "300000"

// fairWaiterArg is FairWaiterTimeout in ms, for the acquire script.
func (c *Client) fairWaiterArg() any {
	return strconv.FormatInt(c.opts.FairWaiterTimeout.Milliseconds(), 10)
}
