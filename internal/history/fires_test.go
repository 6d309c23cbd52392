package history

import "testing"

// A clean run of decisions passes; a duplicate, a miss, an unexpected
// instant and a token out of order are each found; catch-up skips and
// overlap skips are counted, not reported.
func TestCheckFires(t *testing.T) {
	expected := []int64{100, 200, 300, 400, 500}
	clean := []Fire{
		{Job: "j", Instant: 100, Token: 1},
		{Job: "j", Instant: 200, Token: 0}, // overlap skip
		{Job: "j", Instant: 400, Token: 5, Skipped: 1},
		{Job: "j", Instant: 500, Token: 7},
	}
	r := CheckFires(clean, expected)
	if bad := r.Bad(); len(bad) != 0 {
		t.Fatalf("CheckFires(clean) = %v; want none", bad)
	}
	if r.Fired != 3 || r.Overlaps != 1 || r.CaughtUp != 1 {
		t.Fatalf("fired %d, overlaps %d, caught up %d; want 3, 1, 1", r.Fired, r.Overlaps, r.CaughtUp)
	}
	dup := append(append([]Fire(nil), clean...), Fire{Job: "j", Instant: 500, Token: 9})
	if r := CheckFires(dup, expected); len(r.Duplicates) != 1 || len(r.Bad()) != 1 {
		t.Fatalf("CheckFires(duplicate) = %v; want one duplicate", r.Bad())
	}
	miss := []Fire{clean[0], clean[1], {Job: "j", Instant: 400, Token: 5}, clean[3]}
	if r := CheckFires(miss, expected); len(r.Misses) != 1 || len(r.Bad()) != 1 {
		t.Fatalf("CheckFires(miss) = %v; want one miss (300)", r.Bad())
	}
	odd := append(append([]Fire(nil), clean...), Fire{Job: "j", Instant: 250, Token: 3})
	if r := CheckFires(odd, expected); len(r.Unexpected) != 1 || len(r.Bad()) != 1 {
		t.Fatalf("CheckFires(unexpected) = %v; want one unexpected", r.Bad())
	}
	disorder := append([]Fire(nil), clean...)
	disorder[3].Token = 4
	if r := CheckFires(disorder, expected); len(r.Disorder) != 1 || len(r.Bad()) != 1 {
		t.Fatalf("CheckFires(disorder) = %v; want one disorder", r.Bad())
	}
	if got := Percentile([]int64{5, 1, 4, 2, 3}, 50); got != 3 {
		t.Fatalf("Percentile p50 = %d; want 3", got)
	}
	if got := Percentile([]int64{5, 1, 4, 2, 3}, 99); got != 5 {
		t.Fatalf("Percentile p99 = %d; want 5", got)
	}
}
