package redisson

import (
	"context"
	"math"
	"sync/atomic"
)

const doubleAdderKind = "doubleadder"

// DoubleAdder is a distributed float64 sum, wire-compatible with Redisson's
// RDoubleAdder: LongAdder's protocol, with the parts added by INCRBYFLOAT
// in the decimal text Redisson writes (see AtomicDouble). What a crash or
// Close loses, the goroutine and the flushed mode are LongAdder's.
//
// A DoubleAdder is safe for concurrent use.
type DoubleAdder struct {
	*adderParts
	cell *doubleCell
}

// GetDoubleAdder returns a new instance of the double adder called name and
// starts its subscription in the background; see GetLongAdder.
func (c *Client) GetDoubleAdder(name string, opts ...AdderOption) *DoubleAdder {
	cell := &doubleCell{}
	return &DoubleAdder{adderParts: newAdder(c, doubleAdderKind, name, cell, true, opts), cell: cell}
}

// Name returns the adder's name.
func (a *DoubleAdder) Name() string { return a.name }

// Add adds x to this instance's part, in memory. NaN and infinities are
// ignored (Redisson's decimal text has neither), and so is an addition
// whose part would become infinite.
func (a *DoubleAdder) Add(x float64) { a.cell.add(x) }

// Increment adds 1 to this instance's part, in memory.
func (a *DoubleAdder) Increment() { a.cell.add(1) }

// Decrement subtracts 1 from this instance's part, in memory.
func (a *DoubleAdder) Decrement() { a.cell.add(-1) }

// Sum returns the sum of every instance's part; see LongAdder.Sum. It
// returns the errors of LongAdder.Sum.
func (a *DoubleAdder) Sum(ctx context.Context) (_ float64, err error) {
	ctx, rec := a.begin(ctx, opAdderSum)
	defer func() { rec.end(err, OutcomeOK) }()
	counter, flushed, err := a.request(ctx, "1")
	if err != nil {
		return 0, err
	}
	c, ok1 := parseDecimal(counter)
	f, ok2 := parseDecimal(flushed)
	if !ok1 || !ok2 {
		return 0, a.errorf("%w: counter %q, flushed part %q", ErrWrongType, counter, flushed)
	}
	return c + f, nil
}

// Reset sets every instance's part to zero; see LongAdder.Reset.
func (a *DoubleAdder) Reset(ctx context.Context) (err error) {
	ctx, rec := a.begin(ctx, opAdderReset)
	defer func() { rec.end(err, OutcomeOK) }()
	return a.reset(ctx)
}

// Close ends this instance; see LongAdder.Close.
func (a *DoubleAdder) Close() error { return a.close() }

// doubleCell is a DoubleAdder's part: a float64's bits.
type doubleCell struct{ bits atomic.Uint64 }

func (c *doubleCell) add(x float64) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return
	}
	for {
		old := c.bits.Load()
		v := math.Float64frombits(old) + x
		if math.IsInf(v, 0) || c.bits.CompareAndSwap(old, math.Float64bits(v)) {
			return
		}
	}
}

func (c *doubleCell) load() adderAcc     { return adderAcc{f: math.Float64frombits(c.bits.Load())} }
func (c *doubleCell) take() adderAcc     { return adderAcc{f: math.Float64frombits(c.bits.Swap(0))} }
func (c *doubleCell) restore(x adderAcc) { c.add(x.f) }
func (c *doubleCell) zero()              { c.bits.Store(0) }
