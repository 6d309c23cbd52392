package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// MultiLock holds several locks as one: all of them or none. The locks may
// live on different clients and servers. It is Redisson's RedissonMultiLock.
// A MultiLock is one owner made of its locks' owners; it is safe for
// concurrent use, with the same caveat as Lock (goroutines sharing it share
// the owner).
type MultiLock struct {
	locks  []*Lock
	quorum int // locks that must be held: all for MultiLock
	mu     sync.Mutex
	held   []*Lock // the locks of the current acquisition
	depth  int     // re-entries of the current acquisition
	what   string
}

// NewMultiLock returns a MultiLock over locks, which should be distinct
// owner handles (GetLock calls) of distinct names.
func NewMultiLock(locks ...*Lock) *MultiLock {
	return &MultiLock{locks: locks, quorum: len(locks), what: "multilock"}
}

// RedLock is the Redlock algorithm over independent Redis masters: a lock is
// held when a majority (N/2+1) of its locks, one per master, are acquired
// within the lease's validity. Prefer a single Redis with a FencedLock-style
// token (Lock.Token) where you can: Redlock's safety rests on bounded clock
// drift and process pauses. It shares MultiLock's surface. Unlike a
// MultiLock, which takes its locks in order, a RedLock asks all its masters
// at once (each for a share of the wait) and releases them at once.
type RedLock struct{ MultiLock }

// NewRedLock returns a RedLock over locks, one per independent master.
func NewRedLock(locks ...*Lock) *RedLock {
	return &RedLock{MultiLock{locks: locks, quorum: len(locks)/2 + 1, what: "redlock"}}
}

func (m *MultiLock) check() error {
	if len(m.locks) == 0 {
		return ErrNoLocks
	}
	for _, l := range m.locks {
		if l == nil {
			return ErrNoLocks
		}
		if err := l.check(); err != nil {
			return err
		}
	}
	return nil
}

// Lock waits until it holds the locks (all, or a quorum for a RedLock) or
// ctx ends. Leases are kept alive by each lock's watchdog.
func (m *MultiLock) Lock(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	for {
		ok, err := m.tryLock(ctx, 1500*time.Millisecond*time.Duration(len(m.locks)), 0)
		if ok || err != nil {
			return err
		}
	}
}

// TryLock tries to hold the locks for up to wait and reports whether it
// does; lease as in Lock.TryLock (0: watchdog). A MultiLock takes its locks
// in order and, on any failure, releases what it took and starts again while
// wait remains, so that it never keeps a partial set. A RedLock tries every
// lock once per round with a share of the wait, and holds when a quorum
// succeeded with lease validity left (the lease less the time taken and a
// clock drift allowance of 1% + 2ms). On every false or error return no lock
// of the set is left held by this call. Errors: ErrNoLocks,
// ErrNegativeDuration, ErrNoQuorum (RedLock), the locks' errors, and ctx's.
func (m *MultiLock) TryLock(ctx context.Context, wait, lease time.Duration) (bool, error) {
	if err := m.check(); err != nil {
		return false, err
	}
	if wait < 0 || lease < 0 {
		return false, fmt.Errorf("%w: %s: wait %v, lease %v", ErrNegativeDuration, m.what, wait, lease)
	}
	return m.tryLock(ctx, wait, lease)
}

func (m *MultiLock) tryLock(ctx context.Context, wait, lease time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.held) > 0 {
		return m.reenter(ctx, lease)
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := m.round(ctx, time.Until(deadline), lease)
		if ok || err != nil || time.Until(deadline) <= 0 {
			return ok, err
		}
		if m.quorum < len(m.locks) {
			// RedLock: a short random pause before another round, so that
			// competing owners do not split the votes again.
			pause := time.Duration(1+time.Now().UnixNano()%20) * time.Millisecond
			select {
			case <-ctx.Done():
				return false, fmt.Errorf("redisson: %s: %w", m.what, ctx.Err())
			case <-time.After(min(pause, max(time.Until(deadline), 0))):
			}
		}
	}
}

// reenter takes every held lock once more (they are this owner's, so no
// waiting). Caller holds m.mu.
func (m *MultiLock) reenter(ctx context.Context, lease time.Duration) (bool, error) {
	var again []*Lock
	for _, l := range m.held {
		ok, err := l.TryLock(ctx, 0, lease)
		if err != nil || !ok {
			m.releaseAll(ctx, again)
			return false, err
		}
		again = append(again, l)
	}
	m.depth++
	return true, nil
}

// round makes one acquisition attempt over all locks. Caller holds m.mu.
func (m *MultiLock) round(ctx context.Context, left, lease time.Duration) (bool, error) {
	if m.quorum < len(m.locks) {
		return m.roundParallel(ctx, left, lease)
	}
	start := time.Now()
	var taken []*Lock
	var errs []error
	answered := 0
	for i, l := range m.locks {
		per := max(left-time.Since(start), 0)
		if m.quorum < len(m.locks) {
			per = max(left/time.Duration(len(m.locks)), time.Millisecond) // RedLock: a share each
		}
		ok, err := l.TryLock(ctx, per, lease)
		if err != nil {
			if ctx.Err() != nil {
				m.releaseAll(ctx, taken)
				return false, fmt.Errorf("redisson: %s: %w", m.what, ctx.Err())
			}
			errs = append(errs, err)
		} else {
			answered++
		}
		if ok {
			taken = append(taken, l)
		}
		if m.quorum == len(m.locks) && !ok {
			m.releaseAll(ctx, taken)
			if err != nil {
				return false, err
			}
			return false, nil
		}
		if len(m.locks)-(i+1)+len(taken) < m.quorum {
			break // a quorum is out of reach
		}
	}
	return m.settle(ctx, start, lease, taken, answered, errs)
}

// roundParallel is a RedLock round: the locks live on independent servers,
// so all of them are asked at once, each for a share of the wait, and the
// round costs about one server's round trip instead of one per server.
func (m *MultiLock) roundParallel(ctx context.Context, left, lease time.Duration) (bool, error) {
	start := time.Now()
	per := max(left/time.Duration(len(m.locks)), time.Millisecond)
	type result struct {
		ok  bool
		err error
	}
	results := make([]result, len(m.locks))
	var wg sync.WaitGroup
	for i, l := range m.locks {
		wg.Go(func() {
			ok, err := l.TryLock(ctx, per, lease)
			results[i] = result{ok, err}
		})
	}
	wg.Wait()
	var taken []*Lock
	var errs []error
	answered := 0
	for i, r := range results {
		if r.ok {
			taken = append(taken, m.locks[i])
		}
		if r.err != nil {
			errs = append(errs, r.err)
		} else {
			answered++
		}
	}
	if ctx.Err() != nil {
		m.releaseAll(ctx, taken)
		return false, fmt.Errorf("redisson: %s: %w", m.what, ctx.Err())
	}
	return m.settle(ctx, start, lease, taken, answered, errs)
}

// settle ends a round that took the locks taken: held if they make a
// quorum with lease time left (Redlock's validity check), released
// otherwise; ErrNoQuorum when too few locks answered without an error.
func (m *MultiLock) settle(ctx context.Context, start time.Time, lease time.Duration, taken []*Lock, answered int, errs []error) (bool, error) {
	if len(taken) >= m.quorum {
		elapsed := time.Since(start)
		if lease == 0 || lease-elapsed-(lease/100+2*time.Millisecond) > 0 {
			m.held = taken
			return true, nil
		}
	}
	m.releaseAll(ctx, taken)
	if answered < m.quorum && len(errs) > 0 {
		return false, fmt.Errorf("%w: %s: %w", ErrNoQuorum, m.what, errors.Join(errs...))
	}
	return false, nil
}

// unlockEach unlocks each of locks, all at once for a RedLock (independent
// servers), in order for a MultiLock, and returns the first error.
func (m *MultiLock) unlockEach(ctx context.Context, locks []*Lock) error {
	errs := make([]error, len(locks))
	if m.quorum < len(m.locks) {
		var wg sync.WaitGroup
		for i, l := range locks {
			wg.Go(func() { errs[i] = l.Unlock(ctx) })
		}
		wg.Wait()
	} else {
		for i, l := range locks {
			errs[i] = l.Unlock(ctx)
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// releaseAll releases each lock once, within a bounded clean-up even when
// ctx has ended, and ignores errors: an undone hold that cannot reach Redis
// expires with its lease.
func (m *MultiLock) releaseAll(ctx context.Context, locks []*Lock) {
	_ = m.unlockEach(context.WithoutCancel(ctx), locks)
}

// Unlock releases every lock the last acquisition took (one level of them
// after a re-entry: TryLock while held re-enters each held lock). It returns
// ErrNotHeld when this MultiLock holds nothing, and otherwise the first
// error of a lock that was held but could not be released (the others are
// released all the same).
func (m *MultiLock) Unlock(ctx context.Context) error {
	if err := m.check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.held) == 0 {
		return fmt.Errorf("%w: %s", ErrNotHeld, m.what)
	}
	first := m.unlockEach(ctx, m.held)
	if m.depth > 0 {
		m.depth--
	} else {
		m.held = nil
	}
	return first
}

// Held returns how many of its locks the current acquisition holds, as far
// as this process knows (locks whose lease was lost no longer count). A
// MultiLock is intact while Held equals the number of locks, a RedLock
// while Held reaches its quorum.
func (m *MultiLock) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, l := range m.held {
		if l.Err() == nil {
			n++
		}
	}
	return n
}

// Quorum returns how many locks must be held: all of them for a MultiLock,
// N/2+1 for a RedLock.
func (m *MultiLock) Quorum() int { return m.quorum }
