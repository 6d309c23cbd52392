package fencing

import (
	"errors"
	"testing"
)

// The lost update a write-only check lets through: holder 1 reads, holder 2
// reads, holder 1 (stale) writes, holder 2 writes. Checking reads refuses
// the stale write; checking only writes accepts it and loses an increment.
func TestReadCheckRefusesStaleReadModifyWrite(t *testing.T) {
	for _, tc := range []struct {
		checkReads    bool
		staleErr      error
		value, writes int64
	}{
		{false, nil, 1, 2},
		{true, ErrStaleToken, 1, 1},
	} {
		r := New(tc.checkReads)
		v1, _ := r.Read(1)
		v2, _ := r.Read(2)
		if err := r.Write(1, v1+1); !errors.Is(err, tc.staleErr) {
			t.Fatalf("checkReads=%v: stale write = %v; want %v", tc.checkReads, err, tc.staleErr)
		}
		if err := r.Write(2, v2+1); err != nil {
			t.Fatalf("checkReads=%v: current write = %v", tc.checkReads, err)
		}
		if v, n := r.Value(); v != tc.value || n != tc.writes {
			t.Fatalf("checkReads=%v: value %d after %d writes; want %d after %d", tc.checkReads, v, n, tc.value, tc.writes)
		}
		if _, err := r.Read(1); tc.checkReads && !errors.Is(err, ErrStaleToken) {
			t.Fatalf("stale read = %v; want ErrStaleToken", err)
		}
	}
}
