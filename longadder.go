package redisson

import (
	"context"
	"strconv"
	"sync/atomic"
)

const longAdderKind = "longadder"

// LongAdder is a distributed int64 sum, wire-compatible with Redisson's
// RLongAdder: Add, Increment and Decrement change this instance's part in
// memory only (no round trip: millions per second), and Sum asks every
// instance listening, Go or Java, for its part by message and adds them up
// (see Sum). A Java service and a Go one using the same name count
// together.
//
// What is lost. As in Redisson, a part lives in its instance's memory: a
// process that crashes, or an instance that is closed, takes its part with
// it, and later sums no longer include it. WithFlushInterval (this library
// only) moves the part into Redis on a timer, on Close and at every sum,
// so that a crash loses at most the additions of the last interval.
//
// Each client subscribes once to {name}:adder-topic, in the background from
// its first instance's creation until Client.Close, with a goroutine that
// answers each request once for all the client's instances of the name.
// An instance's part counts in sums once that subscription is confirmed
// (Sum on the instance waits for it; a sum published before it, by any
// instance, Go or Java, does not see the part, as with Redisson). Close an
// instance when done. A LongAdder is safe for concurrent use.
type LongAdder struct {
	*adderParts
	cell *longCell
}

// GetLongAdder returns a new instance of the long adder called name and
// starts its subscription in the background. An empty name makes Sum and
// Reset return ErrEmptyName (and the instance count nothing anywhere); a
// negative flush interval makes them return ErrInvalidOption.
func (c *Client) GetLongAdder(name string, opts ...AdderOption) *LongAdder {
	cell := &longCell{}
	return &LongAdder{adderParts: newAdder(c, longAdderKind, name, cell, false, opts), cell: cell}
}

// Name returns the adder's name.
func (a *LongAdder) Name() string { return a.name }

// Add adds n to this instance's part, in memory.
func (a *LongAdder) Add(n int64) { a.cell.v.Add(n) }

// Increment adds 1 to this instance's part, in memory.
func (a *LongAdder) Increment() { a.cell.v.Add(1) }

// Decrement subtracts 1 from this instance's part, in memory.
func (a *LongAdder) Decrement() { a.cell.v.Add(-1) }

// Sum returns the sum of every instance's part, Redisson's way: it
// publishes a sum request and waits until as many instances answered as
// Redis counted receivers (a receiver that never answers, such as a
// PSUBSCRIBE client, makes it wait until ctx ends, as Redisson waits for
// its timeout; give ctx a deadline). In flushed mode the flushed parts are
// added. It returns the context's error, ErrEmptyName, ErrInvalidName,
// ErrInvalidOption, ErrClientClosed, ErrHandleClosed (after Close), or a
// Redis error.
func (a *LongAdder) Sum(ctx context.Context) (_ int64, err error) {
	ctx, rec := a.begin(ctx, opAdderSum)
	defer func() { rec.end(err, OutcomeOK) }()
	counter, flushed, err := a.request(ctx, "1")
	if err != nil {
		return 0, err
	}
	c, err1 := strconv.ParseInt(counter, 10, 64)
	f, err2 := strconv.ParseInt(flushed, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, a.errorf("%w: counter %q, flushed part %q", ErrWrongType, counter, flushed)
	}
	return c + f, nil
}

// Reset sets every instance's part to zero (and deletes the flushed
// parts): it waits for the answers as Sum does. Additions made while it
// runs may survive it. It returns the errors of Sum.
func (a *LongAdder) Reset(ctx context.Context) (err error) {
	ctx, rec := a.begin(ctx, opAdderReset)
	defer func() { rec.end(err, OutcomeOK) }()
	return a.reset(ctx)
}

// Close ends this instance (Redisson's destroy): in flushed mode it flushes
// its part first (bounded by 10 seconds), then unsubscribes and stops its
// goroutine. Later sums no longer include an unflushed part. Sum and Reset
// return ErrHandleClosed afterwards; Add still counts, in memory only. It
// returns the last flush's error. Close is safe to call more than once.
func (a *LongAdder) Close() error { return a.close() }

// longCell is a LongAdder's part.
type longCell struct{ v atomic.Int64 }

func (c *longCell) load() adderAcc     { return adderAcc{i: c.v.Load()} }
func (c *longCell) take() adderAcc     { return adderAcc{i: c.v.Swap(0)} }
func (c *longCell) restore(x adderAcc) { c.v.Add(x.i) }
func (c *longCell) zero()              { c.v.Store(0) }
