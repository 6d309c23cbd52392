package redisson

import (
	"context"
	"errors"
	"sync"
	"time"
)

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
// ctx ends; with a context from the current hold it re-enters. Leases are
// kept alive by each lock's watchdog.
func (m *MultiLock) Lock(ctx context.Context) (err error) {
	ctx, rec := m.begin(ctx, opMultiAcquire)
	defer func() { rec.end(err, OutcomeAcquired) }()
	if err := m.check(); err != nil {
		return err
	}
	_, err = m.tryLock(ctx, -1, 0, nil)
	return err
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
func (m *MultiLock) TryLock(ctx context.Context, wait, lease time.Duration) (ok bool, err error) {
	ctx, rec := m.begin(ctx, opMultiAcquire)
	defer func() { rec.end(err, acquiredIf(ok)) }()
	if err := m.check(); err != nil {
		return false, err
	}
	if wait < 0 || lease < 0 {
		return false, m.errorf("%w: wait %v, lease %v", ErrNegativeDuration, wait, lease)
	}
	return m.tryLock(ctx, wait, lease, nil)
}

// tryLock re-enters when ctx carries the current hold, and otherwise takes
// the gate and then the locks, waiting up to wait (< 0: until ctx ends).
func (m *MultiLock) tryLock(ctx context.Context, wait, lease time.Duration, got **multiHold) (bool, error) {
	if mh := m.heldIn(ctx); mh != nil {
		return m.reenter(ctx, mh, lease, got)
	}
	start := time.Now()
	if ok, err := m.enter(ctx, wait); !ok || err != nil {
		return false, err
	}
	var ok bool
	var err error
	if wait < 0 {
		for !ok && err == nil {
			ok, err = m.rounds(ctx, 1500*time.Millisecond*time.Duration(len(m.locks)), lease)
		}
	} else {
		ok, err = m.rounds(ctx, max(wait-time.Since(start), 0), lease)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ok || err != nil {
		<-m.gate
		return false, err
	}
	if got != nil {
		*got = m.cur
	}
	return true, nil
}

// rounds makes acquisition rounds for up to wait; the gate is held.
func (m *MultiLock) rounds(ctx context.Context, wait, lease time.Duration) (bool, error) {
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
				return false, m.errorf("%w", ctx.Err())
			case <-time.After(min(pause, max(time.Until(deadline), 0))):
			}
		}
	}
}

// reenter takes every lock of hold mh once more, through their holds'
// contexts (they are this hold's, so no waiting).
func (m *MultiLock) reenter(ctx context.Context, mh *multiHold, lease time.Duration, got **multiHold) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur != mh {
		return false, m.errorf("%w", ErrNotHeld)
	}
	pctx := mh.partsContext(ctx)
	var again []*Lock
	for _, l := range mh.parts {
		ok, err := l.tryLock(pctx, 0, lease, nil)
		if err != nil || !ok {
			_ = m.unlockEach(context.WithoutCancel(pctx), again)
			return false, err
		}
		again = append(again, l)
	}
	mh.depth++
	if got != nil {
		*got = mh
	}
	return true, nil
}

// round makes one acquisition attempt over all locks; the gate is held.
func (m *MultiLock) round(ctx context.Context, left, lease time.Duration) (bool, error) {
	if m.quorum < len(m.locks) {
		return m.roundParallel(ctx, left, lease)
	}
	start := time.Now()
	var taken []*Lock
	var holds []*hold
	var errs []error
	answered := 0
	for i, l := range m.locks {
		per := max(left-time.Since(start), 0)
		if m.quorum < len(m.locks) {
			per = max(left/time.Duration(len(m.locks)), time.Millisecond) // RedLock: a share each
		}
		var h *hold
		ok, err := l.tryLock(ctx, per, lease, &h)
		if err != nil {
			if ctx.Err() != nil {
				m.releaseAll(ctx, taken)
				return false, m.errorf("%w", ctx.Err())
			}
			errs = append(errs, err)
		} else {
			answered++
		}
		if ok {
			taken, holds = append(taken, l), append(holds, h)
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
	return m.settle(ctx, start, lease, taken, holds, answered, errs)
}

// roundParallel is a RedLock round: the locks live on independent servers,
// so all of them are asked at once, each for a share of the wait, and the
// round costs about one server's round trip instead of one per server.
func (m *MultiLock) roundParallel(ctx context.Context, left, lease time.Duration) (bool, error) {
	start := time.Now()
	per := max(left/time.Duration(len(m.locks)), time.Millisecond)
	type result struct {
		ok  bool
		h   *hold
		err error
	}
	results := make([]result, len(m.locks))
	var wg sync.WaitGroup
	for i, l := range m.locks {
		wg.Go(func() {
			r := &results[i]
			r.ok, r.err = l.tryLock(ctx, per, lease, &r.h)
		})
	}
	wg.Wait()
	var taken []*Lock
	var holds []*hold
	var errs []error
	answered := 0
	for i, r := range results {
		if r.ok {
			taken, holds = append(taken, m.locks[i]), append(holds, r.h)
		}
		if r.err != nil {
			errs = append(errs, r.err)
		} else {
			answered++
		}
	}
	if ctx.Err() != nil {
		m.releaseAll(ctx, taken)
		return false, m.errorf("%w", ctx.Err())
	}
	return m.settle(ctx, start, lease, taken, holds, answered, errs)
}

// settle ends a round that took the locks taken: held if they make a
// quorum with lease time left (Redlock's validity check), released
// otherwise; ErrNoQuorum when too few locks answered without an error.
func (m *MultiLock) settle(ctx context.Context, start time.Time, lease time.Duration, taken []*Lock, holds []*hold, answered int, errs []error) (bool, error) {
	if len(taken) >= m.quorum {
		elapsed := time.Since(start)
		if lease == 0 || lease-elapsed-(lease/100+2*time.Millisecond) > 0 {
			m.start(taken, holds)
			return true, nil
		}
	}
	m.releaseAll(ctx, taken)
	if answered < m.quorum && len(errs) > 0 {
		return false, m.errorf("%w: %w", ErrNoQuorum, errors.Join(errs...))
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

// Unlock releases every lock of the current hold (one level of them after a
// re-entry); any goroutine may call it. Given a context from a hold
// (Context, Do) it releases that hold only. It returns ErrNotHeld when there
// is no such hold, and otherwise the first error of a lock that was held
// but could not be released (the others are released all the same; an
// error matching ErrLeaseLost means that lock's hold had been lost). After
// the final Unlock the MultiLock is free for the next acquisition.
func (m *MultiLock) Unlock(ctx context.Context) (err error) {
	ctx, rec := m.begin(ctx, opMultiRelease)
	defer func() { rec.end(err, OutcomeOK) }()
	if err := m.check(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	mh := m.cur
	if in := m.heldIn(ctx); in != nil && in != mh {
		if _, err := in.ended(); err != nil && err != ErrNotHeld {
			return &leaseLostError{kind: m.what, name: m.lockNames()}
		}
		mh = nil
	}
	if mh == nil {
		return m.errorf("%w", ErrNotHeld)
	}
	first := m.unlockEach(mh.partsContext(ctx), mh.parts)
	if mh.depth > 0 {
		mh.depth--
		return first
	}
	m.cur = nil
	rec.held(mh.since())
	mh.end(ErrNotHeld)
	<-m.gate
	return first
}

// Held returns how many of its locks the current acquisition holds, as far
// as this process knows (locks whose lease was lost no longer count). A
// MultiLock is intact while Held equals the number of locks, a RedLock
// while Held reaches its quorum.
func (m *MultiLock) Held() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cur == nil {
		return 0
	}
	n := 0
	for _, h := range m.cur.holds {
		if ended, _ := h.ended(); !ended {
			n++
		}
	}
	return n
}

// Quorum returns how many locks must be held: all of them for a MultiLock,
// N/2+1 for a RedLock.
func (m *MultiLock) Quorum() int { return m.quorum }

// Do holds the locks while fn runs, as Lock.Do does: it acquires as
// TryLock(ctx, wait, lease), runs fn with a context from the hold
// (cancelled when the hold ends, re-entry with it), and always releases. It
// returns ErrNotAcquired (wrapped) when the wait ran out, TryLock's errors
// when the acquisition failed, and otherwise fn's error joined with
// Unlock's.
func (m *MultiLock) Do(ctx context.Context, wait, lease time.Duration, fn func(ctx context.Context) error) error {
	if err := m.check(); err != nil {
		m.reject(ctx, err)
		return err
	}
	if wait < 0 || lease < 0 {
		err := m.errorf("%w: wait %v, lease %v", ErrNegativeDuration, wait, lease)
		m.reject(ctx, err)
		return err
	}
	var mh *multiHold
	actx, rec := m.begin(ctx, opMultiAcquire)
	ok, err := m.tryLock(actx, wait, lease, &mh)
	if err == nil && !ok {
		err = m.errorf("%w of %v", ErrNotAcquired, wait)
	}
	rec.end(err, OutcomeAcquired)
	if err != nil {
		return err
	}
	hctx, cancel := m.contextOf(ctx, mh)
	return doLocked(hctx, cancel, fn, m.Unlock)
}
