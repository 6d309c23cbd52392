package redisson

import (
	"context"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// A MultiLock's hold and who may use it: the gate between goroutines (as a
// Lock's, rlock_owner.go), re-entry through the hold's context, and the end
// of the hold (Done, Err, Context) when too many of its locks' holds end.

// multiHold is one acquisition of a MultiLock, from the one that took its
// locks until the final Unlock or loss.
type multiHold struct {
	parts []*Lock
	holds []*hold // holds[i] is parts[i]'s hold
	depth int     // re-entries; guarded by the MultiLock's mu
	done  chan struct{}
	once  sync.Once
	err   error // why the hold ended; written once before done closes
}

// since returns when the earliest of its holds was taken.
func (mh *multiHold) since() time.Time {
	var t time.Time
	for _, h := range mh.holds {
		if h != nil && (t.IsZero() || h.since().Before(t)) {
			t = h.since()
		}
	}
	return t
}

func (mh *multiHold) end(err error) {
	mh.once.Do(func() {
		mh.err = err
		close(mh.done)
	})
}

func (mh *multiHold) ended() (bool, error) {
	select {
	case <-mh.done:
		return true, mh.err
	default:
		return false, nil
	}
}

// partsContext returns ctx carrying each part's hold, so that the parts'
// calls given it act on those holds (re-entry, Unlock).
func (mh *multiHold) partsContext(ctx context.Context) context.Context {
	for i, l := range mh.parts {
		ctx = context.WithValue(ctx, holdKey{&l.lockCore}, mh.holds[i])
	}
	return ctx
}

// multiKey is the context key under which Context puts a MultiLock's hold.
type multiKey struct{ m *MultiLock }

func (m *MultiLock) heldIn(ctx context.Context) *multiHold {
	mh, _ := ctx.Value(multiKey{m}).(*multiHold)
	return mh
}

// start makes the locks taken (with their holds) the current hold, and
// starts the goroutine that ends it when more of the holds end than the
// quorum allows. That goroutine stops when the hold ends (at the latest by
// the final Unlock, which ends every part's hold). Called with the gate held.
func (m *MultiLock) start(taken []*Lock, holds []*hold) {
	mh := &multiHold{parts: taken, holds: holds, done: make(chan struct{})}
	m.mu.Lock()
	m.cur = mh
	m.shown.Store(mh)
	if m.holdSet != nil {
		close(m.holdSet)
		m.holdSet = nil
	}
	m.mu.Unlock()
	tolerated := len(holds) - m.quorum
	go func() {
		cases := make([]reflect.SelectCase, len(holds)+1)
		for i, h := range holds {
			cases[i] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.done)}
		}
		cases[len(holds)] = reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(mh.done)}
		for lost := 0; ; {
			i, _, _ := reflect.Select(cases)
			if i == len(holds) {
				return // ended by Unlock
			}
			cases[i].Chan = reflect.Value{} // ignored from now on
			if lost++; lost > tolerated {
				_, err := holds[i].ended()
				mh.end(err)
				return
			}
		}
	}()
}

// enter takes the gate, waiting up to wait (< 0: until ctx ends). A hold
// that ended without Unlock (too many of its locks lost) is released and
// frees the gate when this wait notices it.
func (m *MultiLock) enter(ctx context.Context, wait time.Duration) (bool, error) {
	select {
	case m.gate <- struct{}{}:
		return true, nil
	default:
	}
	var c *Client
	var t time.Time
	if len(m.locks) > 0 {
		c = m.locks[0].c
		t = c.blockStart()
	}
	ok, err := enterGate(ctx, m.gate, wait, func() <-chan struct{} { return m.gateWatch(ctx) })
	if c != nil {
		c.blockEnd(ctx, t)
	}
	if err != nil {
		return false, m.errorf("%w", err)
	}
	return ok, nil
}

// gateWatch releases a lost current hold (what remains of it, within a
// bounded clean-up) and returns a channel that closes when the gate's
// holder changes state: the current hold's done, or one closed when the
// next hold starts.
func (m *MultiLock) gateWatch(ctx context.Context) <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if mh := m.cur; mh != nil {
		if ended, _ := mh.ended(); !ended {
			return mh.done
		}
		m.cur = nil
		cctx := mh.partsContext(context.WithoutCancel(ctx))
		for i, l := range mh.parts {
			if ended, _ := mh.holds[i].ended(); !ended {
				_ = l.Unlock(cctx) // bounded by each lock's call; errors: it expires
			}
		}
		<-m.gate
	}
	if m.holdSet == nil {
		m.holdSet = make(chan struct{})
	}
	return m.holdSet
}

// Done returns a channel that is closed when the current hold ends: by the
// final Unlock, or when one of a MultiLock's locks' holds ends (for a
// RedLock: when fewer than a quorum of them remain). Err then tells why.
// When nothing is held, the channel of the last hold is returned (closed),
// or a closed channel.
func (m *MultiLock) Done() <-chan struct{} {
	if mh := m.shown.Load(); mh != nil {
		return mh.done
	}
	return closedChan
}

// Err returns nil while the current hold lasts; after it ended, the cause
// of the lock hold whose end ended it (ErrLeaseLost, ErrClientClosed), and
// ErrNotHeld when it was released by Unlock or never taken.
func (m *MultiLock) Err() error {
	mh := m.shown.Load()
	if mh == nil {
		return ErrNotHeld
	}
	_, err := mh.ended()
	return err
}

// Context returns a context that is cancelled, with Err's value as its
// cause, when the current hold ends (or parent ends), and that carries the
// hold: Lock and TryLock given it re-enter, Unlock given it releases that
// hold only. Call it in the goroutine that acquired, right after acquiring,
// or use Do. Call cancel to release its resources.
func (m *MultiLock) Context(parent context.Context) (context.Context, context.CancelFunc) {
	return m.contextOf(parent, m.shown.Load())
}

func (m *MultiLock) contextOf(parent context.Context, mh *multiHold) (context.Context, context.CancelFunc) {
	if mh == nil {
		ctx, cancel := context.WithCancelCause(parent)
		cancel(ErrNotHeld)
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(mh.partsContext(context.WithValue(parent, multiKey{m}, mh)))
	go func() {
		select {
		case <-mh.done:
			_, err := mh.ended()
			cancel(err)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// MultiLock holds several locks as one: all of them or none. The locks may
// live on different clients and servers. It is Redisson's RedissonMultiLock.
// Between goroutines it behaves like a Lock: one acquisition at a time holds
// it (another goroutine's Lock waits, its TryLock returns false, nil when
// its wait runs out), Unlock may come from any goroutine, and re-entry is
// explicit, through a context from the hold (Context, Do). Its locks are
// its own: use them only through it. A MultiLock is safe for concurrent
// use; do not copy it.
type MultiLock struct {
	locks  []*Lock
	quorum int // locks that must be held: all for MultiLock
	what   string
	gate   chan struct{} // a token while an acquisition or its hold runs

	mu      sync.Mutex                // guards what follows; never held while waiting
	cur     *multiHold                // the current hold, nil when none
	holdSet chan struct{}             // closed when a hold starts (for gate waiters)
	shown   atomic.Pointer[multiHold] // the current hold, or the one that ended last
}

// NewMultiLock returns a MultiLock over locks, which should be distinct
// handles (GetLock calls) of distinct names.
func NewMultiLock(locks ...*Lock) *MultiLock {
	return &MultiLock{locks: locks, quorum: len(locks), what: "multilock", gate: make(chan struct{}, 1)}
}

// RedLock is the Redlock algorithm over independent Redis masters: a lock is
// held when a majority (N/2+1) of its locks, one per master, are acquired
// within the lease's validity. Prefer a single Redis with a FencedLock-style
// token (Lock.Token) where you can: Redlock's safety rests on bounded clock
// drift and process pauses. It shares MultiLock's surface and ownership
// rule. Unlike a MultiLock, which takes its locks in order, a RedLock asks
// all its masters at once (each for a share of the wait) and releases them
// at once. Its hold ends (Done, Err, Context) when fewer than a quorum of
// its locks' holds remain.
type RedLock struct{ MultiLock }

// NewRedLock returns a RedLock over locks, one per independent master.
func NewRedLock(locks ...*Lock) *RedLock {
	return &RedLock{MultiLock{locks: locks, quorum: len(locks)/2 + 1, what: "redlock", gate: make(chan struct{}, 1)}}
}

// begin starts observing an operation through the first lock's client (a
// RedLock's locks belong to several clients; the first one's Observer sees
// the set's operations). The name is the locks' names, comma-separated.
func (m *MultiLock) begin(ctx context.Context, op string) (context.Context, *opRecord) {
	if len(m.locks) == 0 || !m.locks[0].c.observed {
		return ctx, nil
	}
	return m.locks[0].c.beginObserved(ctx, m.what, m.label(), op)
}

// reject reports an operation refused before it began.
func (m *MultiLock) reject(ctx context.Context, err error) {
	_, rec := m.begin(ctx, opMultiAcquire)
	rec.end(err, OutcomeOK)
}

func (m *MultiLock) label() string {
	names := make([]string, len(m.locks))
	for i, l := range m.locks {
		names[i] = l.name
	}
	return strings.Join(names, ",")
}

// lockNames is the MultiLock's name in its errors: its locks' names, joined
// by commas in the order given.
func (m *MultiLock) lockNames() string {
	names := make([]string, len(m.locks))
	for i, l := range m.locks {
		names[i] = l.Name()
	}
	return strings.Join(names, ",")
}

// errorf is an error of the set's own in the one shape: its kind and its
// locks' names, comma-separated, as its lost-lease error names them.
func (m *MultiLock) errorf(format string, args ...any) error {
	return objectErrorf(m.what, m.lockNames(), format, args...)
}
