package redisson

import (
	"context"
	"time"
)

func (l *Lock) state(ctx context.Context) (lockState, error) {
	if err := l.check(); err != nil {
		return lockState{}, err
	}
	res, err := l.c.scripts.run(ctx, l.kind.state, []string{l.name}, l.view().ident().field).Int64Slice()
	if err != nil {
		return lockState{}, objectErr(l.kind.what, l.name, err)
	}
	if s, ok := l.kind.decode(res); ok {
		return s, nil
	}
	return lockState{}, objectErrorf(l.kind.what, l.name, "%w: state returned %v", ErrUnexpectedReply, res)
}

// QueueLength returns how many owners wait in a fair lock's queue (0 for
// other locks).
func (l *Lock) QueueLength(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := l.open(ctx, opLockQueueLength)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	if l.kind.queue == nil {
		return 0, nil
	}
	l.c.trip(ctx, 1)
	n, err := l.c.rdb.LLen(ctx, l.kind.queue(l.name)).Result()
	if err != nil {
		return 0, objectErr(l.kind.what, l.name, err)
	}
	return n, nil
}

// IsLocked reports whether any owner, in any process, holds the lock (for
// a read-write lock's handles: holds its read side, or its write side).
func (l *Lock) IsLocked(ctx context.Context) (bool, error) {
	ctx, rec := l.begin(ctx, opLockIsLocked)
	s, err := l.state(ctx)
	rec.end(err, OutcomeOK)
	return s.locked, err
}

// IsHeld reports whether this owner holds the lock.
func (l *Lock) IsHeld(ctx context.Context) (bool, error) {
	ctx, rec := l.begin(ctx, opLockIsHeld)
	s, err := l.state(ctx)
	rec.end(err, OutcomeOK)
	return s.count > 0, err
}

// HoldCount returns how many holds this owner has on the lock (0 when none).
func (l *Lock) HoldCount(ctx context.Context) (int, error) {
	ctx, rec := l.begin(ctx, opLockHoldCount)
	s, err := l.state(ctx)
	rec.end(err, OutcomeOK)
	return s.count, err
}

// RemainingLease returns the time until the lock's lease runs out, whoever
// holds it: 0 when the lock is free. A lock key without expiry (written by
// something other than a lock client) returns ErrUnexpectedReply.
func (l *Lock) RemainingLease(ctx context.Context) (_ time.Duration, err error) {
	ctx, rec := l.begin(ctx, opLockRemainingLease)
	defer func() { rec.end(err, OutcomeOK) }()
	s, err := l.state(ctx)
	switch {
	case err != nil:
		return 0, err
	case !s.locked:
		return 0, nil
	case s.pttl < 0:
		return 0, objectErrorf(l.kind.what, l.name, "%w: no expiry", ErrUnexpectedReply)
	}
	return time.Duration(s.pttl) * time.Millisecond, nil
}
