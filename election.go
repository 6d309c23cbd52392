package redisson

import (
	"context"
	"errors"
	"time"
)

// electionKind names an election in its errors and operations.
const electionKind = "election"

// Election is a leader election among the Clients that campaign under one
// name, after etcd's concurrency.Election: Campaign blocks until the caller
// leads, Leadership.Resign hands over, Leader reads the current leader and
// Observe streams the leaders as they take office.
//
// A candidate leads while it holds the election's lock, a plain Lock named
// as the election (Redisson's RLock layout, renewed by the watchdog with
// the client's WatchdogTimeout as lease), and it is the leader of record
// once it has written its value and term to the leader record beside the
// lock (redisson_election:{name}) and published them on the election's
// channel (redisson_election__channel:{name}). The term is the lock's
// fencing token (Lock.Token): it grows with every leadership, across
// FLUSHALL and restarts as lock tokens do. The record counts only while
// its owner still holds the lock, so a leader whose lease ran out is
// nobody's leader even before a successor writes its own.
//
// A Redisson (Java) service can take part through the lock alone: an RLock
// of the same name held by it keeps every Go candidate waiting and wakes
// the next one when unlocked (Leader reports ErrNoLeader meanwhile, as Java
// writes no record), and a Java RFencedLock continues the same term
// counter.
//
// An Election holds no state: it is safe for concurrent use, and any
// number of goroutines may campaign through one handle (each Campaign is a
// candidate of its own).
type Election struct {
	base
	lockChannel string // the lock's unlock channel: candidates wait on it
	record      string // the leader record: owner, term, value
	channel     string // the election's channel: "<term> <value>" per new leader
}

// GetElection returns a handle for the election called name. It does no
// I/O; an empty name makes every method return ErrEmptyName. On Redis
// Cluster a name containing '{' must carry a complete hash tag; other such
// names return ErrInvalidName.
func (c *Client) GetElection(name string) *Election {
	e := &Election{
		lockChannel: prefixName("redisson_lock__channel", name),
		record:      prefixName("redisson_election", name),
		channel:     prefixName("redisson_election__channel", name),
	}
	e.base = newBase(c, electionKind, name, nil, e.lockChannel, prefixName("redisson_lock_token", name), e.record, e.channel)
	return e
}

// Name returns the election's name, the Redis key of its lock.
func (e *Election) Name() string { return e.name }

// Campaign blocks until the caller leads the election with value (which
// Leader and Observe report as Leader.Value) or ctx ends. It waits for the
// election's lock as Lock.Lock does (woken by the unlock message when the
// leader resigns, or when the leader's lease runs out), then writes the
// leader record and announces it on the election's channel. The returned
// Leadership lasts until Resign, or until its lease is lost: its Done
// closes and its Context is cancelled (cause ErrLeadershipLost) a
// twentieth of the lease before Redis could let another candidate win.
//
// It returns ctx.Err() (wrapped) when ctx ends first, leaving no hold, no
// record and no subscription behind; ErrEmptyName, ErrInvalidName,
// ErrWrongType (a key of the election holds another type), ErrClientClosed,
// or a Redis error otherwise (the lock taken, if any, is released again).
func (e *Election) Campaign(ctx context.Context, value string) (_ *Leadership, err error) {
	ctx, rec, err := e.open(ctx, opElectionCampaign)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err != nil {
		return nil, err
	}
	for {
		l := e.c.newLock(plainLock, e.name, e.lockChannel, "")
		var h *hold
		if _, err := l.tryLock(ctx, -1, 0, &h); err != nil {
			return nil, err
		}
		lead := &Leadership{e: e, lock: l, h: h, value: value, term: l.Token()}
		ok, err := e.announce(ctx, lead)
		if err == nil && ok {
			lead.report()
			return lead, nil
		}
		// Not announced: give the lock back (nothing else was written).
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.c.opts.CleanupTimeout)
		uerr := l.Unlock(cctx)
		cancel()
		if err != nil {
			return nil, e.wrap(err)
		}
		if uerr != nil && !errors.Is(uerr, ErrNotHeld) {
			return nil, uerr
		}
		// The lease ran out between the acquisition and the announcement
		// (a long pause): campaign again.
	}
}

// announce writes lead's record and publishes it. It reports false when the
// candidate no longer holds the lock.
func (e *Election) announce(ctx context.Context, lead *Leadership) (bool, error) {
	res, err := e.c.scripts.run(ctx, scriptElectionAnnounce, []string{e.name, e.record, e.channel},
		lead.lock.ident().field, lead.term, lead.value, e.c.pubsub.publishArg(ctx)).Int64Slice()
	switch {
	case err != nil:
		return false, err
	case len(res) == 3 && res[0] == 1:
		lead.since = time.Unix(res[1], res[2]*1000)
		return true, nil
	case len(res) == 1 && res[0] == 0:
		return false, nil
	}
	return false, e.errorf("%w: announce returned %v", ErrUnexpectedReply, res)
}
