// Package history records the acquisitions and releases of distributed locks
// and semaphores made by many goroutines and processes, and checks the
// recorded history: directly (never more than n holders at once, fencing
// tokens increasing in grant order) and, for locks, for linearizability
// against a mutual-exclusion model with porcupine. For elections it checks
// recorded leaderships (terms.go): no leader acts once a later term has
// started, and terms increase in the order they start. For schedulers it
// checks the recorded decisions of a job's instants (fires.go): each
// instant decided once, none missed, tokens rising with the instants. For
// transactions it checks committed read-modify-writes of versioned records
// (versions.go): one chain of versions per record, no lost update. For
// caches it checks the reads of a register against its writes (reads.go):
// no read returns a value certainly replaced before it began, beyond a
// window for writes made by others.
//
// Times are wall-clock Unix nanoseconds, so that histories recorded by
// processes on one machine can be merged.
package history

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
)

// Kind is what an operation did.
type Kind uint8

// The kinds of operation.
const (
	Acquire Kind = iota + 1
	Release
)

func (k Kind) String() string {
	switch k {
	case Acquire:
		return "acquire"
	case Release:
		return "release"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Op is one call: who made it on which object, its outcome and its
// real-time bounds.
type Op struct {
	Owner  string // the lock owner (or semaphore caller) that made the call
	Key    string // the object
	Kind   Kind
	OK     bool  // Acquire: the hold was taken; Release: it succeeded
	Token  int64 // Acquire: the fencing token of the hold (0 when none)
	Invoke int64 // Unix nanoseconds just before the call
	Return int64 // Unix nanoseconds just after it returned
	// Lost is, for a successful Acquire, when the owner was told that the
	// hold was lost (its Done channel closed with ErrLeaseLost), or 0.
	Lost int64
}

// Now returns the current time in the unit of Op's times.
func Now() int64 { return time.Now().UnixNano() }

// Recorder collects operations. It is safe for concurrent use.
type Recorder struct {
	mu  sync.Mutex
	ops []Op
}

// Add records op.
func (r *Recorder) Add(op Op) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

// SetLost records, on the latest successful Acquire of owner on key, when
// the owner was told its hold was lost.
func (r *Recorder) SetLost(owner, key string, at int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.ops) - 1; i >= 0; i-- {
		if op := &r.ops[i]; op.Owner == owner && op.Key == key && op.Kind == Acquire && op.OK {
			op.Lost = at
			return
		}
	}
}

// Ops returns a copy of the operations recorded so far.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Op(nil), r.ops...)
}

// Hold is the part of one hold during which its owner certainly held it:
// from the return of its Acquire until the first of the invocation of its
// Release and the moment the owner was told it was lost (To is MaxInt64
// when neither happened).
type Hold struct {
	Owner, Key string
	Token      int64
	Invoke     int64 // the Acquire's invocation
	From, To   int64
}

// Holds pairs every successful Acquire with the next Release of the same
// owner and key. It returns an error for a Release without an Acquire
// before it, or two Acquires of one owner without a Release between them
// when the first was not lost (the workloads here do not re-enter).
func Holds(ops []Op) ([]Hold, error) {
	ops = append([]Op(nil), ops...)
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].Invoke < ops[j].Invoke })
	type ownerKey struct{ owner, key string }
	open := make(map[ownerKey]int) // index into holds
	var holds []Hold
	for _, op := range ops {
		ok := ownerKey{op.Owner, op.Key}
		switch op.Kind {
		case Acquire:
			if !op.OK {
				continue
			}
			if i, busy := open[ok]; busy && holds[i].To == math.MaxInt64 {
				return nil, fmt.Errorf("history: %s acquired %s twice without a release", op.Owner, op.Key)
			}
			to := int64(math.MaxInt64)
			if op.Lost != 0 {
				to = op.Lost
			}
			open[ok] = len(holds)
			holds = append(holds, Hold{Owner: op.Owner, Key: op.Key, Token: op.Token, Invoke: op.Invoke, From: op.Return, To: to})
		case Release:
			i, busy := open[ok]
			if !busy {
				return nil, fmt.Errorf("history: %s released %s without holding it", op.Owner, op.Key)
			}
			delete(open, ok)
			holds[i].To = min(holds[i].To, op.Invoke)
		}
	}
	return holds, nil
}

// Overlaps returns one line per moment at which more than n holds of one
// key were certainly held at once (n is 1 for a lock, the permit count for
// a semaphore whose callers take one permit each). Holds that only touch
// do not overlap.
func Overlaps(holds []Hold, n int) []string {
	type event struct {
		at    int64
		delta int
		h     *Hold
	}
	byKey := make(map[string][]event)
	for i := range holds {
		h := &holds[i]
		if h.To <= h.From {
			continue // lost before its acquire returned
		}
		byKey[h.Key] = append(byKey[h.Key], event{h.From, +1, h}, event{h.To, -1, h})
	}
	var bad []string
	for key, evs := range byKey {
		sort.Slice(evs, func(i, j int) bool {
			if evs[i].at != evs[j].at {
				return evs[i].at < evs[j].at
			}
			return evs[i].delta < evs[j].delta // ends before starts
		})
		held := make(map[*Hold]bool)
		for _, e := range evs {
			if e.delta < 0 {
				delete(held, e.h)
				continue
			}
			held[e.h] = true
			if len(held) > n {
				bad = append(bad, fmt.Sprintf("%s: %d holders at %s (%s)", key, len(held), stamp(e.at), describe(held)))
			}
		}
	}
	return bad
}

// TokenOrder returns one line per violation of the fencing order: two holds
// of one key with the same token, or a hold granted (its Acquire returned)
// before another was asked for, yet with a token that is not lower.
func TokenOrder(holds []Hold) []string {
	byKey := make(map[string][]Hold)
	for _, h := range holds {
		byKey[h.Key] = append(byKey[h.Key], h)
	}
	var bad []string
	for key, hs := range byKey {
		sort.Slice(hs, func(i, j int) bool { return hs[i].Token > hs[j].Token })
		// Walking down from the highest token, minRet is the earliest grant
		// among the higher tokens: it must not precede this one's request.
		minRet, minTok := int64(math.MaxInt64), int64(0)
		for i, h := range hs {
			if i > 0 && hs[i-1].Token == h.Token {
				bad = append(bad, fmt.Sprintf("%s: token %d granted twice (%s, %s)", key, h.Token, hs[i-1].Owner, h.Owner))
			}
			if minRet < h.Invoke {
				bad = append(bad, fmt.Sprintf("%s: token %d granted at %s, before token %d was asked for at %s",
					key, minTok, stamp(minRet), h.Token, stamp(h.Invoke)))
			}
			if h.From < minRet {
				minRet, minTok = h.From, h.Token
			}
		}
	}
	return bad
}

func stamp(ns int64) string { return time.Unix(0, ns).UTC().Format("15:04:05.000000") }

func describe(held map[*Hold]bool) string {
	s := ""
	for h := range held {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("%s token %d from %s", h.Owner, h.Token, stamp(h.From))
	}
	return s
}
