package redissonotel_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/goredisson/redisson/redissonotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// A waiter's lock.acquire span is a child of the caller's span and says
// how long it waited; the acquisition and wait histograms count it.
func TestContendedLockSpanIsChildWithWait(t *testing.T) {
	tm := newTelemetry(t)
	holderClient := newClient(t, tm.obs, nil, nil)
	waiterClient := newClient(t, tm.obs, nil, nil)
	defer tm.obs.RegisterClient(waiterClient)()
	ctx := context.Background()
	name := uniqueName(t)

	holder := holderClient.GetLock(name)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	parentCtx, parent := tm.tracer.Start(ctx, "checkout")
	type result struct {
		ok  bool
		err error
	}
	done := make(chan result, 1)
	waiter := waiterClient.GetLock(name)
	go func() {
		ok, err := waiter.TryLock(parentCtx, time.Minute, 0)
		done <- result{ok, err}
	}()
	// The waiter is blocked: the waiters gauge reads Stats and says so.
	if !eventually(10*time.Second, func() bool { return waiterClient.Stats().Waiters == 1 }) {
		t.Fatalf("the waiter never showed in Stats: %+v", waiterClient.Stats())
	}
	if n, ok := gauge(tm.collect(t), redissonotel.MetricWaiters); !ok || n != 1 {
		t.Errorf("%s = %d (present %v), want 1", redissonotel.MetricWaiters, n, ok)
	}
	time.Sleep(50 * time.Millisecond) // a wait long enough to see in ms
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || !r.ok {
		t.Fatalf("TryLock = %v, %v; want true, nil", r.ok, r.err)
	}
	if err := waiter.Unlock(parentCtx); err != nil {
		t.Fatal(err)
	}
	parent.End()

	var acquire sdktrace.ReadOnlySpan
	for _, s := range tm.spans.GetSpans().Snapshots() {
		if s.Name() == "lock.acquire" && s.Parent().SpanID() == parent.SpanContext().SpanID() {
			acquire = s
		}
	}
	if acquire == nil {
		t.Fatalf("no lock.acquire span under the caller's span; spans: %v", spanNames(tm.spans.GetSpans().Snapshots()))
	}
	if acquire.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("lock.acquire in trace %v, want the caller's %v", acquire.SpanContext().TraceID(), parent.SpanContext().TraceID())
	}
	if v, ok := spanAttr(acquire, redissonotel.AttrWaitMS); !ok || v.AsFloat64() <= 0 {
		t.Errorf("%s = %v (present %v), want > 0", redissonotel.AttrWaitMS, v.Emit(), ok)
	}
	for key, want := range map[attribute.Key]string{
		redissonotel.AttrKind: "lock", redissonotel.AttrName: name, redissonotel.AttrOutcome: "acquired",
	} {
		if v, _ := spanAttr(acquire, key); v.AsString() != want {
			t.Errorf("%s = %q, want %q", key, v.AsString(), want)
		}
	}
	if v, ok := spanAttr(acquire, redissonotel.AttrRoundTrips); !ok || v.AsInt64() < 1 {
		t.Errorf("%s = %v (present %v), want >= 1", redissonotel.AttrRoundTrips, v.Emit(), ok)
	}
	if acquire.Status().Code == codes.Error {
		t.Errorf("acquired lock's span has status %v", acquire.Status())
	}

	rm := tm.collect(t)
	lockAcquired := []attribute.KeyValue{redissonotel.AttrKind.String("lock"), redissonotel.AttrOutcome.String("acquired")}
	if n, _ := histogram(rm, redissonotel.MetricAcquireDuration, lockAcquired...); n < 2 {
		t.Errorf("%s counted %d lock acquisitions, want 2 or more", redissonotel.MetricAcquireDuration, n)
	}
	if _, sum := histogram(rm, redissonotel.MetricAcquireWait, lockAcquired...); sum <= 0 {
		t.Errorf("%s sums %vs of waiting, want > 0", redissonotel.MetricAcquireWait, sum)
	}
	if n, _ := histogram(rm, redissonotel.MetricHoldDuration, redissonotel.AttrKind.String("lock")); n < 2 {
		t.Errorf("%s counted %d holds, want 2 or more", redissonotel.MetricHoldDuration, n)
	}
	if n, ok := gauge(rm, redissonotel.MetricWaiters); !ok || n != 0 {
		t.Errorf("%s = %d (present %v) after the wait, want 0", redissonotel.MetricWaiters, n, ok)
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var names []string
	for _, s := range spans {
		names = append(names, s.Name())
	}
	return names
}

// A hold whose key vanished is lost: the watchdog sees it, the client logs
// it through its Logger, and redisson.leases.lost counts it.
func TestLeaseLossCountedAndLogged(t *testing.T) {
	tm := newTelemetry(t)
	var logs logRecords
	c := newClient(t, tm.obs, slog.New(logs.handler()), &redisson.Options{WatchdogTimeout: 300 * time.Millisecond})
	ctx := context.Background()
	name := uniqueName(t)
	l := c.GetLock(name)
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := redistest.Shared(t).Client(t).Del(ctx, name).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the hold was not lost within 30s of its key's deletion")
	}
	if !errors.Is(l.Err(), redisson.ErrLeaseLost) {
		t.Errorf("Err() = %v, want ErrLeaseLost", l.Err())
	}
	var lost int64
	if !eventually(10*time.Second, func() bool {
		lost, _ = counter(tm.collect(t), redissonotel.MetricLeasesLost, redissonotel.AttrKind.String("lock"))
		return lost >= 1
	}) {
		t.Fatalf("%s{kind=lock} = %d, want 1", redissonotel.MetricLeasesLost, lost)
	}
	rm := tm.collect(t)
	if lost != 1 {
		t.Errorf("%s = %d, want 1", redissonotel.MetricLeasesLost, lost)
	}
	if n, _ := counter(rm, redissonotel.MetricEvents, redissonotel.AttrEvent.String("lease_lost")); n != 1 {
		t.Errorf("%s{event=lease_lost} = %d, want 1", redissonotel.MetricEvents, n)
	}
	if lines := logs.mentioning(slog.LevelWarn, name); len(lines) == 0 {
		t.Errorf("no log line at Warn or above names the lost lock %q", name)
	} else {
		t.Logf("logged: %q", lines)
	}
}

// Rate-limit decisions are counted allowed and denied, per limiter kind.
func TestRateLimitDecisionsCounted(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx := context.Background()
	name := uniqueName(t)
	limiters := []redisson.KeyedLimiter{
		c.GetFixedWindowLimiter(name+":fixed", 2, time.Minute),
		c.GetGCRALimiter(name+":gcra", 2, time.Minute, 2),
	}
	for _, l := range limiters {
		for range 3 {
			if _, err := l.Allow(ctx, "client-1", 1); err != nil {
				t.Fatal(err)
			}
		}
	}
	rm := tm.collect(t)
	allowed, _ := counter(rm, redissonotel.MetricRateDecisions, redissonotel.AttrDecision.String("allowed"))
	denied, _ := counter(rm, redissonotel.MetricRateDecisions, redissonotel.AttrDecision.String("denied"))
	if allowed != 4 || denied != 2 {
		t.Errorf("decisions allowed %d denied %d, want 4 and 2", allowed, denied)
	}
	m, _ := findMetric(rm, redissonotel.MetricRateDecisions)
	kinds := map[string]bool{}
	for _, set := range attrSets(m) {
		v, _ := set.Value(redissonotel.AttrKind)
		kinds[v.AsString()] = true
	}
	if len(kinds) != 2 {
		t.Errorf("decisions carry kinds %v, want one per limiter type", kinds)
	}
	// A denial is an answer, not a failure: no span has an error status.
	for _, s := range tm.spans.GetSpans().Snapshots() {
		if s.Status().Code == codes.Error {
			t.Errorf("span %s has status %v", s.Name(), s.Status())
		}
	}
}

// The gauges read Stats of the registered clients, and stop when the
// client is unregistered.
func TestGaugesReadStats(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	unregister := tm.obs.RegisterClient(c)
	ctx := context.Background()
	l := c.GetLock(uniqueName(t))
	if err := l.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	rm := tm.collect(t)
	st := c.Stats()
	if n, ok := gauge(rm, redissonotel.MetricLeasesHeld); !ok || n != 1 || st.LeasesHeld != 1 {
		t.Errorf("%s = %d (present %v), Stats().LeasesHeld = %d; want 1 and 1", redissonotel.MetricLeasesHeld, n, ok, st.LeasesHeld)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n, ok := gauge(tm.collect(t), redissonotel.MetricLeasesHeld); !ok || n != 0 {
		t.Errorf("%s = %d (present %v) after Unlock, want 0", redissonotel.MetricLeasesHeld, n, ok)
	}
	unregister()
	unregister() // a second call is harmless
	if n, ok := gauge(tm.collect(t), redissonotel.MetricLeasesHeld); ok {
		t.Errorf("%s = %d with no client registered, want no data point", redissonotel.MetricLeasesHeld, n)
	}
}
