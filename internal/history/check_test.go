package history

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

func acq(owner string, token, inv, ret int64) Op {
	return Op{Owner: owner, Key: "k", Kind: Acquire, OK: true, Token: token, Invoke: inv, Return: ret}
}

func rel(owner string, inv, ret int64) Op {
	return Op{Owner: owner, Key: "k", Kind: Release, OK: true, Invoke: inv, Return: ret}
}

// A history of alternating holds passes every check.
func TestChecksAcceptSequentialHolds(t *testing.T) {
	ops := []Op{acq("a", 1, 0, 10), rel("a", 20, 30), acq("b", 2, 5, 35), rel("b", 40, 50),
		{Owner: "c", Key: "k", Kind: Acquire, Invoke: 12, Return: 18}}
	holds, err := Holds(ops)
	if err != nil {
		t.Fatal(err)
	}
	if bad := Overlaps(holds, 1); len(bad) != 0 {
		t.Fatalf("Overlaps = %v; want none", bad)
	}
	if bad := TokenOrder(holds); len(bad) != 0 {
		t.Fatalf("TokenOrder = %v; want none", bad)
	}
	if res := CheckLock(ops, time.Second); res != porcupine.Ok {
		t.Fatalf("CheckLock = %v; want Ok", res)
	}
}

// Two holds certainly held at once are found by Overlaps and by the
// linearizability check; with two permits they are fine.
func TestChecksFindDoubleHold(t *testing.T) {
	ops := []Op{acq("a", 1, 0, 10), acq("b", 2, 11, 15), rel("a", 20, 30), rel("b", 40, 50)}
	holds, err := Holds(ops)
	if err != nil {
		t.Fatal(err)
	}
	if bad := Overlaps(holds, 1); len(bad) != 1 {
		t.Fatalf("Overlaps(1) = %v; want one violation", bad)
	}
	if bad := Overlaps(holds, 2); len(bad) != 0 {
		t.Fatalf("Overlaps(2) = %v; want none", bad)
	}
	if res := CheckLock(ops, time.Second); res != porcupine.Illegal {
		t.Fatalf("CheckLock = %v; want Illegal", res)
	}
	// The first holder was told of its loss before the second acquired.
	ops[0].Lost = 12
	holds, _ = Holds(ops)
	if bad := Overlaps(holds, 1); len(bad) != 0 {
		t.Fatalf("Overlaps after loss = %v; want none", bad)
	}
}

// A later grant with a lower token, or a token granted twice, is found.
func TestChecksFindTokenDisorder(t *testing.T) {
	ops := []Op{acq("a", 5, 0, 10), rel("a", 20, 30), acq("b", 4, 31, 35), rel("b", 40, 50)}
	holds, _ := Holds(ops)
	if bad := TokenOrder(holds); len(bad) != 1 {
		t.Fatalf("TokenOrder = %v; want one violation", bad)
	}
	if res := CheckLock(ops, time.Second); res != porcupine.Illegal {
		t.Fatalf("CheckLock = %v; want Illegal", res)
	}
	ops[2].Token = 5
	holds, _ = Holds(ops)
	if bad := TokenOrder(holds); len(bad) == 0 {
		t.Fatal("TokenOrder found no violation in a repeated token")
	}
	// Concurrent requests may be granted in either order.
	ops = []Op{acq("a", 5, 0, 10), rel("a", 20, 30), acq("b", 4, 9, 35), rel("b", 40, 50)}
	holds, _ = Holds(ops)
	if bad := TokenOrder(holds); len(bad) != 0 {
		t.Fatalf("TokenOrder for overlapping requests = %v; want none", bad)
	}
}
