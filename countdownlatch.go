package redisson

import (
	"context"
	"strings"
	"time"
)

// CountDownLatch is a distributed count-down latch, wire-compatible with
// Redisson's RCountDownLatch: the count is a string at the latch's name,
// deleted when it reaches zero, and the channel
// redisson_countdownlatch__channel__{name} (literal braces around the
// name, as Redisson names it) carries 0 when the count reached zero and 1
// when a count was set or the latch deleted.
//
// Waiters in every process are released together when the count reaches
// zero; every waiter also re-checks the count every second, so a message it
// missed delays it but never strands it.
//
// On Redis Cluster a name with braces puts Redisson's channel in another
// slot than the count (Redisson's own scripts then fail with CROSSSLOT);
// this library publishes there all the same, with a plain PUBLISH, which
// reaches every node.
//
// Exactly once per call: TrySetCount and CountDown leave a call marker
// redisson_countdownlatch_call:{name}:<id> (deleted in the background once
// the call has returned, expiring after the client's RetryWindow
// otherwise), so a call that go-redis resends after a lost reply counts
// once.
//
// A CountDownLatch is safe for concurrent use and holds no state of its own.
type CountDownLatch struct {
	base
	channel string
	callPre string // call marker prefix
	inKeys  bool   // the channel may go in KEYS (same slot as the name)
}

const latchKind = "countdownlatch"

// GetCountDownLatch returns the latch called name. It does no I/O; an empty
// name makes every method return ErrEmptyName. On Redis Cluster a name
// containing '{' must carry a complete hash tag (as in "{job}:7"); other
// such names return ErrInvalidName.
func (c *Client) GetCountDownLatch(name string) *CountDownLatch {
	callPre := prefixName("redisson_countdownlatch_call", name) + ":" + c.id + ":"
	l := &CountDownLatch{
		base:    newBase(c, latchKind, name, nil, callPre),
		channel: "redisson_countdownlatch__channel__{" + name + "}",
		callPre: callPre,
		inKeys:  true,
	}
	if c.topo.isCluster() && strings.Contains(name, "{") {
		l.inKeys = hashSlot(l.channel) == hashSlot(name)
	}
	return l
}

// publishArg is the publish command of the latch's scripts: a channel in
// another slot than the count can only be reached with a plain PUBLISH.
func (l *CountDownLatch) publishArg(ctx context.Context) any {
	if !l.inKeys {
		return "publish"
	}
	return l.c.pubsub.publishArg(ctx)
}

// Name returns the latch's name, the Redis key of its count.
func (l *CountDownLatch) Name() string { return l.name }

// keys returns the script keys (count, then keys after it, then the channel
// when it may go in KEYS) and the channel argument ("" when in KEYS).
func (l *CountDownLatch) keys(more ...string) ([]string, string) {
	keys := append(append(make([]string, 0, 3), l.name), more...)
	if l.inKeys {
		return append(keys, l.channel), ""
	}
	return keys, l.channel
}

// TrySetCount sets the count to n if the latch does not exist (its count is
// zero), publishes the new-count message, and reports whether it did so; a
// latch still counting is left alone. It returns ErrInvalidCount for n < 1;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (l *CountDownLatch) TrySetCount(ctx context.Context, n int64) (_ bool, err error) {
	ctx, rec, err := l.open(ctx, opLatchTrySetCount)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	if n < 1 {
		return false, objectErr(latchKind, l.name, invalidOption(ErrInvalidCount, "count", n, "at least 1"))
	}
	m := l.callPre + l.c.newRequest()
	keys, ch := l.keys(m)
	set, err := l.c.scripts.run(ctx, scriptLatchSet, keys, n, l.c.retryWindowArg, l.publishArg(ctx), ch).Int64()
	forgetCallMarker(l.c, m, err)
	return set == 1, intKeyErr(latchKind, l.name, err)
}

// CountDown decrements the count; when it reaches zero the latch is deleted
// and every waiter, in every process, is released. Counting down a latch
// that does not exist does nothing, as in Redisson. It returns ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error.
func (l *CountDownLatch) CountDown(ctx context.Context) (err error) {
	ctx, rec, err := l.open(ctx, opLatchCountDown)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	m := l.callPre + l.c.newRequest()
	keys, ch := l.keys(m)
	err = l.c.scripts.run(ctx, scriptLatchCountDown, keys, l.c.retryWindowArg, l.publishArg(ctx), ch).Err()
	forgetCallMarker(l.c, m, err)
	return intKeyErr(latchKind, l.name, err)
}

// Count returns the current count: 0 when the latch does not exist. It
// returns ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a
// Redis error.
func (l *CountDownLatch) Count(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := l.open(ctx, opLatchCount)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	return readIntKey(ctx, l.c, latchKind, l.name)
}

// Delete deletes the latch (whatever type its key holds, like Redisson),
// which releases its waiters, and reports whether it existed; when it did,
// the new-count message 1 is published, as Redisson does. A call resent
// after a lost reply may report false. It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (l *CountDownLatch) Delete(ctx context.Context) (_ bool, err error) {
	ctx, rec, err := l.open(ctx, opLatchDelete)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	keys, ch := l.keys()
	n, err := l.c.scripts.run(ctx, scriptLatchDelete, keys, l.publishArg(ctx), ch).Int64()
	return n == 1, intKeyErr(latchKind, l.name, err)
}

// Await waits until the count is zero (the latch does not exist) or ctx
// ends. It returns nil at once when the count is already zero. It returns
// ctx.Err() (wrapped) when ctx ends first, leaving no subscription behind;
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise.
func (l *CountDownLatch) Await(ctx context.Context) (err error) {
	ctx, rec := l.begin(ctx, opLatchAwait)
	defer func() { rec.end(err, OutcomeOK) }()
	_, err = l.await(ctx, -1)
	return err
}

// TryAwait waits up to wait until the count is zero, and reports whether it
// is (Redisson's await with a timeout). wait == 0 checks once. It returns
// false, nil when the wait ran out; ErrNegativeDuration for wait < 0;
// otherwise the errors of Await.
func (l *CountDownLatch) TryAwait(ctx context.Context, wait time.Duration) (ok bool, err error) {
	ctx, rec := l.begin(ctx, opLatchAwait)
	defer func() { rec.end(err, okIf(ok)) }()
	if wait < 0 {
		return false, objectErrorf(latchKind, l.name, "%w: wait %v", ErrNegativeDuration, wait)
	}
	return l.await(ctx, wait)
}

// await waits up to wait (wait < 0: until ctx ends).
func (l *CountDownLatch) await(ctx context.Context, wait time.Duration) (bool, error) {
	if err := l.check(); err != nil {
		return false, err
	}
	open := func(ctx context.Context) (bool, error) {
		n, err := readIntKey(ctx, l.c, latchKind, l.name)
		return n <= 0, err
	}
	if ok, err := open(ctx); err != nil || ok || wait == 0 {
		return ok, err
	}
	// After the failed first check, await checks again once subscribed
	// and then after every message and at least every syncRecheck.
	return l.c.await(ctx, waitSpec{
		// A channel outside the count's slot is published plain
		// (publishArg), so it is subscribed plain whatever the mode.
		what: latchKind, name: l.name, channel: l.channel, plain: !l.inKeys, policy: latchWakePolicy, wait: wait,
		recheck: true, retry: syncRecheck,
	},
		func(ctx context.Context, _ waitState) (bool, time.Duration, error) {
			ok, err := open(ctx)
			return ok, syncRecheck, err
		})
}

// latchWakePolicy: 0 (the count reached zero) and 1 (a new count was set,
// or the latch deleted) wake every local waiter to re-check the count.
func latchWakePolicy(payload string) wake {
	switch payload {
	case "0", "1":
		return wake{n: -1}
	}
	return wake{ignored: true}
}
