package redissonotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
)

// These tests drive the Observer through the seam directly, as the core
// calls it, to pin down the mapping of fields to span attributes and
// statuses; the tests on a real server check that the core calls it.

func runOp(ctx context.Context, obs redisson.Observer, op redisson.Operation, outcome redisson.Outcome, err error) {
	op.Start = time.Now()
	ctx = obs.OperationStart(ctx, &op)
	op.Duration, op.Outcome, op.Err, op.RoundTrips = time.Millisecond, outcome, err, 1
	obs.OperationEnd(ctx, &op)
}

// NameKeep records the object name, NameHash a stable hash of it,
// NameDrop nothing.
func TestNameModes(t *testing.T) {
	hashes := map[string]bool{}
	for _, tc := range []struct {
		mode redissonotel.NameMode
		want func(v attribute.Value, ok bool) bool
	}{
		{redissonotel.NameKeep, func(v attribute.Value, ok bool) bool { return ok && v.AsString() == "order:42" }},
		{redissonotel.NameHash, func(v attribute.Value, ok bool) bool {
			hashes[v.AsString()] = true
			return ok && len(v.AsString()) == 16 && v.AsString() != "order:42"
		}},
		{redissonotel.NameDrop, func(_ attribute.Value, ok bool) bool { return !ok }},
	} {
		tm := newTelemetry(t, redissonotel.WithNames(tc.mode))
		for range 2 {
			runOp(context.Background(), tm.obs, redisson.Operation{Kind: "lock", Name: "order:42", Op: "lock.acquire"}, redisson.OutcomeAcquired, nil)
		}
		for _, s := range tm.spans.GetSpans().Snapshots() {
			if v, ok := spanAttr(s, redissonotel.AttrName); !tc.want(v, ok) {
				t.Errorf("mode %d: name attribute %q (present %v)", tc.mode, v.AsString(), ok)
			}
		}
	}
	if len(hashes) != 1 {
		t.Errorf("NameHash gave %d different hashes for one name, want 1", len(hashes))
	}
}

// Failures (error, invalid, closed, cancelled) set an error status and
// error.type; a timed-out TryLock or a denial does not.
func TestSpanStatusByOutcome(t *testing.T) {
	tm := newTelemetry(t)
	boom := errors.New("boom")
	cases := map[redisson.Outcome]codes.Code{
		redisson.OutcomeOK: codes.Unset, redisson.OutcomeAcquired: codes.Unset, redisson.OutcomeTimedOut: codes.Unset,
		redisson.OutcomeDenied: codes.Unset, redisson.OutcomeCancelled: codes.Error, redisson.OutcomeInvalid: codes.Error,
		redisson.OutcomeClosed: codes.Error, redisson.OutcomeError: codes.Error,
	}
	for outcome := range cases {
		var err error
		if cases[outcome] == codes.Error {
			err = boom
		}
		runOp(context.Background(), tm.obs, redisson.Operation{Kind: "lock", Name: outcome.String(), Op: "lock.acquire"}, outcome, err)
	}
	spans := tm.spans.GetSpans().Snapshots()
	if len(spans) != len(cases) {
		t.Fatalf("%d spans, want %d", len(spans), len(cases))
	}
	for _, s := range spans {
		v, _ := spanAttr(s, redissonotel.AttrOutcome)
		want := cases[outcomeNamed(v.AsString())]
		if s.Status().Code != want {
			t.Errorf("outcome %s: status %v, want %v", v.AsString(), s.Status().Code, want)
		}
		et, ok := spanAttr(s, redissonotel.AttrErrorType)
		if (want == codes.Error) != ok || (ok && et.AsString() != v.AsString()) {
			t.Errorf("outcome %s: error.type %q (present %v)", v.AsString(), et.AsString(), ok)
		}
	}
}

func outcomeNamed(s string) redisson.Outcome {
	for o := redisson.OutcomeOK; o <= redisson.OutcomeError; o++ {
		if o.String() == s {
			return o
		}
	}
	return 255
}

// OperationEnd given a context that OperationStart did not return ends no
// span: least of all the caller's.
func TestOperationEndLeavesForeignSpans(t *testing.T) {
	tm := newTelemetry(t)
	ctx, parent := tm.tracer.Start(context.Background(), "caller")
	tm.obs.OperationEnd(ctx, &redisson.Operation{Kind: "lock", Name: "x", Op: "lock.release"})
	if !parent.IsRecording() {
		t.Error("OperationEnd ended the caller's span")
	}
	parent.End()
}

// Background events make no span of their own; they count in
// redisson.events and in their own instruments.
func TestEventsAreCounted(t *testing.T) {
	tm := newTelemetry(t)
	ctx := context.Background()
	for _, e := range []redisson.Event{
		{Type: redisson.EventRenewalPass, Count: 3, Calls: 1, Duration: 2 * time.Millisecond},
		{Type: redisson.EventRenewalPass, Count: 5, Calls: 1, Duration: 4 * time.Millisecond},
		{Type: redisson.EventPubSubReplaced, Node: "127.0.0.1:1", Channels: 2},
		{Type: redisson.EventScriptReloaded, Name: "lock_acquire"},
		{Type: redisson.EventLeaseLost, Kind: "lock", Name: "order:1"},
	} {
		tm.obs.Event(ctx, &e)
	}
	if n := len(tm.spans.GetSpans()); n != 0 {
		t.Errorf("events made %d spans, want none", n)
	}
	rm := tm.collect(t)
	if n, sum := histogram(rm, redissonotel.MetricRenewalSize); n != 2 || sum != 8 {
		t.Errorf("%s: %d passes of %v leases, want 2 of 8", redissonotel.MetricRenewalSize, n, sum)
	}
	if n, sum := histogram(rm, redissonotel.MetricRenewalDuration); n != 2 || sum < 0.0059 || sum > 0.0061 {
		t.Errorf("%s: %d passes of %vs, want 2 of 0.006s", redissonotel.MetricRenewalDuration, n, sum)
	}
	if n, _ := counter(rm, redissonotel.MetricReconnects); n != 1 {
		t.Errorf("%s = %d, want 1", redissonotel.MetricReconnects, n)
	}
	if n, _ := counter(rm, redissonotel.MetricScriptReloads, redissonotel.AttrScript.String("lock_acquire")); n != 1 {
		t.Errorf("%s{script=lock_acquire} = %d, want 1", redissonotel.MetricScriptReloads, n)
	}
	if n, _ := counter(rm, redissonotel.MetricLeasesLost, redissonotel.AttrKind.String("lock")); n != 1 {
		t.Errorf("%s{kind=lock} = %d, want 1", redissonotel.MetricLeasesLost, n)
	}
	if n, _ := counter(rm, redissonotel.MetricEvents); n != 5 {
		t.Errorf("%s = %d, want 5", redissonotel.MetricEvents, n)
	}
}

// An event whose context carries a recording span (Close waiting under
// the caller's context) is added to that span; it makes none of its own.
func TestEventJoinsTheContextSpan(t *testing.T) {
	tm := newTelemetry(t)
	ctx, span := tm.tracer.Start(context.Background(), "shutdown")
	tm.obs.Event(ctx, &redisson.Event{Type: redisson.EventCloseWaiting, Name: "watchdog", Duration: time.Second})
	span.End()
	spans := tm.spans.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want only the caller's", len(spans))
	}
	if ev := spans[0].Events; len(ev) != 1 || ev[0].Name != "redisson.close_waiting" {
		t.Errorf("caller's span events %v, want one redisson.close_waiting", ev)
	}
}
