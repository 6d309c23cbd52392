package redisson

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Leader is the leader of an Election as Leader and Observe report it: the
// value it campaigned with and its term (Leadership.Term).
type Leader struct {
	Value string
	Term  int64
}

// Leader returns the election's current leader. It returns ErrNoLeader
// when nobody leads (or the lock's holder has not announced itself yet);
// ErrEmptyName, ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis
// error otherwise. One script call: the record is checked against the
// lock, so a leader whose lease ran out is not reported.
func (e *Election) Leader(ctx context.Context) (_ Leader, err error) {
	ctx, rec, err := e.open(ctx, opElectionLeader)
	defer func() {
		if errors.Is(err, ErrNoLeader) {
			rec.end(nil, OutcomeOK) // a read that found nobody: not a failure
			return
		}
		rec.end(err, OutcomeOK)
	}()
	if err != nil {
		return Leader{}, err
	}
	return e.leader(ctx)
}

// leader reads the leader of record, checked against the lock.
func (e *Election) leader(ctx context.Context) (Leader, error) {
	v, err := e.c.scripts.run(ctx, scriptElectionLeader, []string{e.name, e.record}).Slice()
	switch {
	case errors.Is(err, redis.Nil):
		return Leader{}, e.errorf("%w", ErrNoLeader)
	case err != nil:
		return Leader{}, e.wrap(err)
	}
	if len(v) == 2 {
		term, ok1 := v[0].(int64)
		value, ok2 := v[1].(string)
		if ok1 && ok2 {
			return Leader{Value: value, Term: term}, nil
		}
	}
	return Leader{}, e.errorf("%w: leader returned %v", ErrUnexpectedReply, v)
}

// Observe streams the election's leaders as they take office, to any
// caller, campaigning or not: first the current leader (if any), then each
// new one, in increasing term order. A slow reader may miss a term that
// was replaced before it read: the channel carries the latest leader it
// can, never an older one after a newer. It reports no vacancy (a leader
// that resigned or lost its lease with no successor yet); Leader does. A
// reconnect of the pub/sub connection, or a message the buffer dropped,
// makes it read the record again, so no newer leader is missed for good.
// The channel is closed when ctx ends or the client closes.
//
// It returns ErrNotSubscribed when Redis did not confirm the subscription
// within 10 s, ctx.Err() (wrapped) when ctx ends first, ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (e *Election) Observe(ctx context.Context) (_ <-chan Leader, err error) {
	parent := ctx
	ctx, rec, err := e.open(ctx, opElectionObserve)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	sharded, err := e.c.pubsub.objectsSharded(ctx)
	if err != nil {
		return nil, e.wrap(err)
	}
	l := &listener{ch: make(chan string, 64), resubscribed: make(chan struct{}, 1)}
	e.c.trip(ctx, 1) // SUBSCRIBE, and its confirmation
	sub, err := e.c.pubsub.listen(ctx, chanKey{name: e.channel, sharded: sharded}, l)
	if err != nil {
		return nil, e.wrap(err)
	}
	if !sub.ready(ctx, subscribeTimeout) {
		sub.close()
		if err := ctx.Err(); err != nil {
			return nil, e.errorf("observe: %w", err)
		}
		if e.c.closed.Load() {
			return nil, ErrClientClosed
		}
		return nil, e.errorf("%w after %v", ErrNotSubscribed, subscribeTimeout)
	}
	out := make(chan Leader, 1)
	if !e.c.handles.spawn(func(stop context.Context) { e.observe(parent, stop, sub, l, out) }) {
		sub.close()
		return nil, ErrClientClosed
	}
	return out, nil
}

// observe is the goroutine of one Observe: it hands each newer leader to
// out until ctx or stop (the client's close) ends, then closes out.
func (e *Election) observe(ctx, stop context.Context, sub *channelSub, l *listener, out chan Leader) {
	defer close(out)
	defer sub.close()
	var last int64
	var dropped int64
	send := func(ld Leader) bool {
		if ld.Term <= last {
			return true
		}
		// Replace an unread older leader: the reader gets the latest.
		select {
		case <-out:
		default:
		}
		select {
		case out <- ld:
			last = ld.Term
			return true
		case <-ctx.Done():
		case <-stop.Done():
		}
		return false
	}
	reread := func() bool {
		ld, err := e.leader(ctx)
		if err != nil {
			return true // nobody leads, or Redis failed: the next message or reconnect tells
		}
		return send(ld)
	}
	if !reread() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-stop.Done():
			return
		case <-l.resubscribed:
			if !reread() {
				return
			}
		case p := <-l.ch:
			if n := l.dropped.Load(); n != dropped {
				dropped = n
				if !reread() {
					return
				}
				continue
			}
			ts, value, ok := strings.Cut(p, " ")
			term, err := strconv.ParseInt(ts, 10, 64)
			if !ok || err != nil {
				continue // a resignation (empty) or a foreign message
			}
			if !send(Leader{Value: value, Term: term}) {
				return
			}
		}
	}
}
