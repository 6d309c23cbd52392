package history

import (
	"fmt"
	"sort"
)

// Write is one write of a register (a key holding one value): the value it
// stored, unique in the history, who made it, and its real-time bounds
// (Unix ns).
type Write struct {
	Value  string
	Own    bool // made by the reading client itself (through the cache)
	Invoke int64
	Return int64
}

// Read is one read of the register: the value it returned ("" for none:
// the register is then expected never to have been empty after its first
// write) and its real-time bounds.
type Read struct {
	Value  string
	Invoke int64
	Return int64
}

// ReadReport is what CheckReads found. Stale and Impossible are
// violations; Late counts the reads that returned a replaced value within
// the window allowed (documented, not violations).
type ReadReport struct {
	Impossible []string // a value never written, or written only after the read returned
	Stale      []string // a value replaced before the read began, beyond the window
	Late       int      // reads of a value replaced, but within the window
	MaxLate    int64    // the latest of those: ns from the replacing write's return to the read's invocation
	Reads      int
}

// Bad returns every violation.
func (r ReadReport) Bad() []string { return append(append([]string(nil), r.Impossible...), r.Stale...) }

// CheckReads checks the reads of one register against its writes. A read
// may return the value of any write that was invoked before the read
// returned, unless that value was certainly replaced before the read
// began: a later write (invoked after the value's write returned) returned
// before the read's invocation. For replacing writes made by others that
// is allowed for window after they returned (the time a cache takes to
// hear of them); for replacing writes made by the reader itself (Own) no
// window is allowed.
func CheckReads(writes []Write, reads []Read, window int64) ReadReport {
	byValue := make(map[string]Write, len(writes))
	for _, w := range writes {
		byValue[w.Value] = w
	}
	// For each write, the earliest return of a write that certainly
	// follows it, by kind: found with writes sorted by invocation and a
	// suffix minimum of returns.
	ws := append([]Write(nil), writes...)
	sort.Slice(ws, func(i, j int) bool { return ws[i].Invoke < ws[j].Invoke })
	n := len(ws)
	minOwn, minForeign := make([]int64, n+1), make([]int64, n+1)
	const inf = int64(1<<63 - 1)
	minOwn[n], minForeign[n] = inf, inf
	for i := n - 1; i >= 0; i-- {
		minOwn[i], minForeign[i] = minOwn[i+1], minForeign[i+1]
		if ws[i].Own {
			minOwn[i] = min(minOwn[i], ws[i].Return)
		} else {
			minForeign[i] = min(minForeign[i], ws[i].Return)
		}
	}
	// replacedBy returns when w was certainly replaced, by own and by
	// foreign writes.
	replacedBy := func(w Write) (own, foreign int64) {
		i := sort.Search(n, func(i int) bool { return ws[i].Invoke > w.Return })
		return minOwn[i], minForeign[i]
	}
	var r ReadReport
	for _, rd := range reads {
		r.Reads++
		w, ok := byValue[rd.Value]
		if !ok {
			r.Impossible = append(r.Impossible, fmt.Sprintf("read at %s returned %q, never written", stamp(rd.Invoke), rd.Value))
			continue
		}
		if w.Invoke > rd.Return {
			r.Impossible = append(r.Impossible, fmt.Sprintf("read at %s–%s returned %q, written only at %s",
				stamp(rd.Invoke), stamp(rd.Return), rd.Value, stamp(w.Invoke)))
			continue
		}
		own, foreign := replacedBy(w)
		switch {
		case own < rd.Invoke:
			r.Stale = append(r.Stale, fmt.Sprintf("read at %s returned %q, replaced by this client's own write that returned at %s",
				stamp(rd.Invoke), rd.Value, stamp(own)))
		case foreign < rd.Invoke-window:
			r.Stale = append(r.Stale, fmt.Sprintf("read at %s returned %q, replaced by a write that returned at %s (%v before)",
				stamp(rd.Invoke), rd.Value, stamp(foreign), rd.Invoke-foreign))
		case foreign < rd.Invoke:
			r.Late++
			r.MaxLate = max(r.MaxLate, rd.Invoke-foreign)
		}
	}
	return r
}
