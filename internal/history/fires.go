package history

import (
	"fmt"
	"sort"
)

// Fire is one decision a scheduler recorded for one instant of one job:
// fired (Token > 0) or skipped (Token 0: an earlier run still held its
// lease). Skipped counts the earlier instants a catch-up policy skipped
// with this decision. Instant is in ms since the epoch, At (the server's
// clock when it decided) in µs.
type Fire struct {
	Job     string
	Instant int64
	Token   int64
	At      int64
	Skipped int
}

// FireReport is what CheckFires found. Each violation is one line.
type FireReport struct {
	Duplicates []string // an instant decided more than once
	Misses     []string // an expected instant never decided, nor skipped by catch-up
	Unexpected []string // a decision for an instant that is not expected
	Disorder   []string // a fired instant whose token is not above every earlier instant's
	CaughtUp   int      // instants skipped by the catch-up policy (documented, not misses)
	Fired      int
	Overlaps   int // instants skipped for overlap (documented, not misses)
}

// Bad returns every violation.
func (r FireReport) Bad() []string {
	var bad []string
	for _, l := range [][]string{r.Duplicates, r.Misses, r.Unexpected, r.Disorder} {
		bad = append(bad, l...)
	}
	return bad
}

// CheckFires checks the decisions of one job against the instants it
// should have had (expected, in ms): each expected instant decided exactly
// once (fired, skipped for overlap, or covered by the Skipped count of the
// next decision), no decision for another instant, and tokens rising with
// the instants.
func CheckFires(fires []Fire, expected []int64) FireReport {
	var r FireReport
	exp := append([]int64(nil), expected...)
	sort.Slice(exp, func(i, j int) bool { return exp[i] < exp[j] })
	index := make(map[int64]int, len(exp))
	for i, in := range exp {
		index[in] = i
	}
	decided := make([]int, len(exp)) // decisions per expected instant
	covered := make([]bool, len(exp))
	fs := append([]Fire(nil), fires...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].Instant < fs[j].Instant })
	var lastToken int64
	var lastFired int64
	for _, f := range fs {
		i, ok := index[f.Instant]
		if !ok {
			r.Unexpected = append(r.Unexpected, fmt.Sprintf("%s: instant %d decided, not expected", f.Job, f.Instant))
			continue
		}
		decided[i]++
		if decided[i] > 1 {
			r.Duplicates = append(r.Duplicates, fmt.Sprintf("%s: instant %d decided %d times (token %d at %d)",
				f.Job, f.Instant, decided[i], f.Token, f.At))
		}
		for k := 1; k <= f.Skipped && i-k >= 0; k++ {
			covered[i-k] = true
		}
		r.CaughtUp += f.Skipped
		if f.Token == 0 {
			r.Overlaps++
			continue
		}
		r.Fired++
		if f.Token <= lastToken && decided[i] == 1 {
			r.Disorder = append(r.Disorder, fmt.Sprintf("%s: instant %d fired with token %d, not above %d of instant %d",
				f.Job, f.Instant, f.Token, lastToken, lastFired))
		}
		lastToken, lastFired = max(lastToken, f.Token), f.Instant
	}
	for i, in := range exp {
		if decided[i] == 0 && !covered[i] {
			r.Misses = append(r.Misses, fmt.Sprintf("instant %d never decided", in))
		}
	}
	return r
}

// Percentile returns the p-th percentile (0 < p <= 100) of xs, or 0 for
// none.
func Percentile(xs []int64, p float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(k, 0), len(s)-1)]
}
