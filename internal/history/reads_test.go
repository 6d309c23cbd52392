package history

import "testing"

// Reads of the latest value, or of a value whose replacement overlapped
// the read, pass.
func TestCheckReadsAcceptsFreshReads(t *testing.T) {
	ws := []Write{{Value: "a", Invoke: 0, Return: 10}, {Value: "b", Invoke: 20, Return: 30}}
	rs := []Read{{Value: "a", Invoke: 11, Return: 12}, {Value: "a", Invoke: 25, Return: 40}, {Value: "b", Invoke: 25, Return: 26}, {Value: "b", Invoke: 31, Return: 32}}
	r := CheckReads(ws, rs, 0)
	if bad := r.Bad(); len(bad) != 0 || r.Late != 0 || r.Reads != 4 {
		t.Fatalf("report %+v; want no violation", r)
	}
}

// A read of a value replaced before it began is stale, beyond the window
// for foreign writes, at once for own ones.
func TestCheckReadsFindsStaleReads(t *testing.T) {
	ws := []Write{{Value: "a", Invoke: 0, Return: 10}, {Value: "b", Invoke: 20, Return: 30}}
	rs := []Read{{Value: "a", Invoke: 35, Return: 36}}
	if r := CheckReads(ws, rs, 10); len(r.Stale) != 0 || r.Late != 1 {
		t.Fatalf("within the window: %+v; want one late read", r)
	}
	if r := CheckReads(ws, rs, 4); len(r.Stale) != 1 {
		t.Fatalf("beyond the window: %+v; want one stale read", r)
	}
	ws[1].Own = true
	if r := CheckReads(ws, rs, 1000); len(r.Stale) != 1 {
		t.Fatalf("after an own write: %+v; want one stale read", r)
	}
	// Writes that overlap do not order: either value may be read.
	ws = []Write{{Value: "a", Invoke: 0, Return: 10}, {Value: "b", Invoke: 5, Return: 30}}
	if r := CheckReads(ws, []Read{{Value: "a", Invoke: 100, Return: 101}}, 0); len(r.Bad()) != 0 {
		t.Fatalf("overlapping writes: %+v; want no violation", r)
	}
}

// A value never written, or written after the read returned, is
// impossible.
func TestCheckReadsFindsImpossibleReads(t *testing.T) {
	ws := []Write{{Value: "a", Invoke: 50, Return: 60}}
	r := CheckReads(ws, []Read{{Value: "a", Invoke: 0, Return: 10}, {Value: "x", Invoke: 70, Return: 80}}, 0)
	if len(r.Impossible) != 2 {
		t.Fatalf("report %+v; want two impossible reads", r)
	}
}
