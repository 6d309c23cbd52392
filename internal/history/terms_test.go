package history

import "testing"

// Leaderships that hand over cleanly pass; a leader acting after its
// successor started, or a term not above the one before it, is found.
func TestTermChecks(t *testing.T) {
	clean := []Term{
		{Owner: "a", Term: 10, Start: 100, LastAct: 190, End: 195},
		{Owner: "b", Term: 20, Start: 200, LastAct: 290},
		{Owner: "c", Term: 30, Start: 300},
	}
	if bad := TermOverlaps(clean); len(bad) != 0 {
		t.Fatalf("TermOverlaps = %v; want none", bad)
	}
	if bad := TermOrder(clean); len(bad) != 0 {
		t.Fatalf("TermOrder = %v; want none", bad)
	}
	// a, paused, acts again after b started (and after c started too: one
	// line per later start it overlaps).
	stale := append([]Term(nil), clean...)
	stale[0].LastAct = 310
	if bad := TermOverlaps(stale); len(bad) != 2 {
		t.Fatalf("TermOverlaps = %v; want two violations", bad)
	}
	// An act at the very instant the successor starts is an overlap.
	touch := append([]Term(nil), clean...)
	touch[1].LastAct = 300
	if bad := TermOverlaps(touch); len(bad) != 1 {
		t.Fatalf("TermOverlaps = %v; want one violation", bad)
	}
	disorder := append([]Term(nil), clean...)
	disorder[2].Term = 20
	if bad := TermOrder(disorder); len(bad) != 1 {
		t.Fatalf("TermOrder = %v; want one violation", bad)
	}
}
