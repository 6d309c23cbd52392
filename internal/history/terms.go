package history

import (
	"fmt"
	"sort"
)

// Term is one leadership of an election as its holder recorded it. Start
// is when it began, on the server's clock (which, on one machine, is the
// clock of Now); LastAct the latest moment at which the holder, about to
// act as leader, checked that it still led (0: it never acted); End when it
// learned the leadership ended (lost or resigned; 0 when it never did, as
// when it was killed).
type Term struct {
	Owner   string
	Term    int64
	Start   int64
	LastAct int64
	Acts    int
	End     int64
}

// TermOverlaps returns one line per pair of leaderships of which both were
// acting at once: a term whose last act came at or after the start of a
// later-starting term. Acts are what a leader does under its leadership,
// so this is the check that matters under pauses: a holder stopped by
// SIGSTOP does nothing while stopped, and must not act once resumed.
func TermOverlaps(terms []Term) []string {
	ts := append([]Term(nil), terms...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Start < ts[j].Start })
	var bad []string
	// latest is the term with the latest act among those started so far.
	latest := -1
	for j, t := range ts {
		if latest >= 0 && ts[latest].LastAct >= t.Start {
			p := ts[latest]
			bad = append(bad, fmt.Sprintf("term %d (%s) acted at %s, after term %d (%s) started at %s",
				p.Term, p.Owner, stamp(p.LastAct), t.Term, t.Owner, stamp(t.Start)))
		}
		if t.LastAct != 0 && (latest < 0 || t.LastAct > ts[latest].LastAct) {
			latest = j
		}
	}
	return bad
}

// TermOrder returns one line per violation of the term order: terms, in
// the order they started, must strictly increase (so a term is never given
// twice, and a later leader always fences off an earlier one).
func TermOrder(terms []Term) []string {
	ts := append([]Term(nil), terms...)
	sort.Slice(ts, func(i, j int) bool { return ts[i].Start < ts[j].Start })
	var bad []string
	for i := 1; i < len(ts); i++ {
		if ts[i].Term <= ts[i-1].Term {
			bad = append(bad, fmt.Sprintf("term %d (%s) started at %s, after term %d (%s) started at %s",
				ts[i].Term, ts[i].Owner, stamp(ts[i].Start), ts[i-1].Term, ts[i-1].Owner, stamp(ts[i-1].Start)))
		}
	}
	return bad
}
