package redisson

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"
)

// recorder is an Observer that keeps a copy of every operation and event.
type recorder struct {
	mu     sync.Mutex
	ops    []Operation
	events []Event
}

func (r *recorder) OperationStart(ctx context.Context, op *Operation) context.Context { return ctx }

func (r *recorder) OperationEnd(_ context.Context, op *Operation) {
	r.mu.Lock()
	r.ops = append(r.ops, *op)
	r.mu.Unlock()
}

func (r *recorder) Event(_ context.Context, e *Event) {
	r.mu.Lock()
	r.events = append(r.events, *e)
	r.mu.Unlock()
}

// opsOf returns the recorded operations named op on the object name.
func (r *recorder) opsOf(op, name string) []Operation {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Operation
	for _, o := range r.ops {
		if o.Op == op && o.Name == name {
			out = append(out, o)
		}
	}
	return out
}

// last returns the latest operation named op on name; it fails the test
// when there is none.
func (r *recorder) last(t *testing.T, op, name string) Operation {
	t.Helper()
	ops := r.opsOf(op, name)
	if len(ops) == 0 {
		t.Fatalf("no %s operation on %q recorded", op, name)
	}
	return ops[len(ops)-1]
}

func (r *recorder) eventsOf(typ EventType) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// logRecord is one captured log record: its level, message and attributes
// (values as strings).
type logRecord struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// logCapture is a slog.Handler that keeps every record at or above min.
type logCapture struct {
	min     slog.Level
	mu      *sync.Mutex
	records *[]logRecord
}

func newLogCapture(min slog.Level) *logCapture {
	return &logCapture{min: min, mu: &sync.Mutex{}, records: &[]logRecord{}}
}

func (h *logCapture) Enabled(_ context.Context, l slog.Level) bool { return l >= h.min }

func (h *logCapture) Handle(_ context.Context, r slog.Record) error {
	rec := logRecord{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool {
		rec.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	*h.records = append(*h.records, rec)
	h.mu.Unlock()
	return nil
}

func (h *logCapture) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCapture) WithGroup(string) slog.Handler      { return h }

// find returns the records whose "event" attribute is event.
func (h *logCapture) find(event string) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range *h.records {
		if r.attrs["event"] == event {
			out = append(out, r)
		}
	}
	return out
}

// atLeast returns the records at level l or above.
func (h *logCapture) atLeast(l slog.Level) []logRecord {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []logRecord
	for _, r := range *h.records {
		if r.level >= l {
			out = append(out, r)
		}
	}
	return out
}

// observedClient returns a client on the shared server with a recorder and
// a log capture at Debug, and the options given (nil: defaults).
func observedClient(t *testing.T, opts *Options) (*Client, *recorder, *logCapture) {
	t.Helper()
	rec, logs := &recorder{}, newLogCapture(slog.LevelDebug)
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Observer, o.Logger = rec, slog.New(logs)
	return newClient(t, sharedRedis(t), &o), rec, logs
}

func TestObserveContendedLockWait(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	holder, waiter := c.GetLock(name), c.GetLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	got := make(chan error, 1)
	go func() { got <- waiter.Lock(ctx) }()
	eventually(t, 10*time.Second, "a waiter counted in Stats", func() bool { return c.Stats().Waiters == 1 })
	if s := c.Stats(); s.LeasesHeld != 1 {
		t.Errorf("Stats().LeasesHeld = %d with one hold, want 1", s.LeasesHeld)
	}
	time.Sleep(50 * time.Millisecond)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter's Lock: %v", err)
	}
	ops := rec.opsOf(opLockAcquire, name)
	if len(ops) != 2 {
		t.Fatalf("recorded %d lock.acquire operations, want 2: %+v", len(ops), ops)
	}
	w := ops[1]
	if w.Outcome != OutcomeAcquired || w.Err != nil {
		t.Errorf("waiter's lock.acquire: outcome %v, err %v; want acquired, nil", w.Outcome, w.Err)
	}
	if w.Wait < 40*time.Millisecond || w.Wait > w.Duration {
		t.Errorf("waiter's Wait = %v (Duration %v), want at least the 50ms the holder held on, and within Duration", w.Wait, w.Duration)
	}
	if w.Kind != "lock" || w.RoundTrips < 2 {
		t.Errorf("waiter's lock.acquire: kind %q, %d round trips; want lock, at least 2 (a try before and after the wait)", w.Kind, w.RoundTrips)
	}
	rel := rec.last(t, opLockRelease, name)
	if rel.Outcome != OutcomeOK || rel.Held <= 0 || rel.Held > time.Minute {
		t.Errorf("holder's lock.release: outcome %v, Held %v; want ok and the time it held", rel.Outcome, rel.Held)
	}
	if err := waiter.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if s := c.Stats(); s.LeasesHeld != 0 || s.Waiters != 0 {
		t.Errorf("Stats() after both released = %+v, want no leases, no waiters", s)
	}
}

func TestObserveLockOutcomes(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	holder, other := c.GetLock(name), c.GetLock(name)
	// Load the scripts first (a NOSCRIPT costs two more round trips).
	warm := c.GetLock(uniqueName(t, c.rdb))
	mustTryLock(t, ctx, warm, 0, 0)
	if _, err := warm.IsLocked(ctx); err != nil {
		t.Fatal(err)
	}
	if err := warm.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	// An uncontended TryLock: one round trip, acquired.
	mustTryLock(t, ctx, holder, 0, 0)
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeAcquired || op.RoundTrips != 1 || op.Wait != 0 {
		t.Errorf("uncontended TryLock: outcome %v, %d round trips, wait %v; want acquired, 1, 0", op.Outcome, op.RoundTrips, op.Wait)
	}
	// A single attempt on a held lock: timed out.
	if ok, err := other.TryLock(ctx, 0, 0); ok || err != nil {
		t.Fatalf("TryLock on a held lock = %v, %v; want false, nil", ok, err)
	}
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeTimedOut || op.Err != nil {
		t.Errorf("TryLock(0) on a held lock: outcome %v, err %v; want timed_out, nil", op.Outcome, op.Err)
	}
	// A cancelled context: cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := other.Lock(cctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context = %v, want context.Canceled", err)
	}
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeCancelled {
		t.Errorf("Lock with a cancelled context: outcome %v, want cancelled", op.Outcome)
	}
	// Bad input: invalid, nothing sent.
	if _, err := other.TryLock(ctx, -time.Second, 0); !errors.Is(err, ErrNegativeDuration) {
		t.Fatalf("TryLock(-1s) = %v, want ErrNegativeDuration", err)
	}
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeInvalid || op.RoundTrips != 0 {
		t.Errorf("TryLock(-1s): outcome %v, %d round trips; want invalid, 0", op.Outcome, op.RoundTrips)
	}
	if _, err := c.GetLock("").TryLock(ctx, 0, 0); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("TryLock on an empty name = %v, want ErrEmptyName", err)
	}
	if op := rec.last(t, opLockAcquire, ""); op.Outcome != OutcomeInvalid {
		t.Errorf("empty name: outcome %v, want invalid", op.Outcome)
	}
	// Do that cannot acquire within its wait: timed out, and fn not run.
	if err := other.Do(ctx, 0, 0, func(context.Context) error { return nil }); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("Do on a held lock = %v, want ErrNotAcquired", err)
	}
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeTimedOut {
		t.Errorf("Do on a held lock: outcome %v, want timed_out", op.Outcome)
	}
	// Reads and the release are ok operations with their own names.
	if _, err := holder.IsLocked(ctx); err != nil {
		t.Fatalf("IsLocked: %v", err)
	}
	if op := rec.last(t, opLockIsLocked, name); op.Outcome != OutcomeOK || op.RoundTrips != 1 {
		t.Errorf("IsLocked: outcome %v, %d round trips; want ok, 1", op.Outcome, op.RoundTrips)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatalf("Unlock: %v", err)
	}
	if err := holder.Unlock(ctx); !errors.Is(err, ErrNotHeld) {
		t.Fatalf("second Unlock = %v, want ErrNotHeld", err)
	}
	if op := rec.last(t, opLockRelease, name); op.Outcome != OutcomeError || op.Held != 0 {
		t.Errorf("Unlock of nothing held: outcome %v, Held %v; want error, 0", op.Outcome, op.Held)
	}
	// After Close: closed.
	c.Close()
	if _, err := holder.TryLock(ctx, 0, 0); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("TryLock after Close = %v, want ErrClientClosed", err)
	}
	if op := rec.last(t, opLockAcquire, name); op.Outcome != OutcomeClosed {
		t.Errorf("TryLock after Close: outcome %v, want closed", op.Outcome)
	}
}

func TestObserveLeaseLost(t *testing.T) {
	c, rec, logs := observedClient(t, &Options{WatchdogTimeout: 300 * time.Millisecond})
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	l := c.GetLock(name)
	mustTryLock(t, ctx, l, 0, 0)
	owner := l.Owner()
	if err := c.rdb.Del(ctx, name).Err(); err != nil { // behind the holder's back
		t.Fatal(err)
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("hold not ended after its key was deleted")
	}
	eventually(t, 5*time.Second, "lease_lost event", func() bool { return len(rec.eventsOf(EventLeaseLost)) == 1 })
	e := rec.eventsOf(EventLeaseLost)[0]
	if e.Kind != "lock" || e.Name != name || e.Owner != owner || !errors.Is(e.Err, ErrLeaseLost) || e.Time.IsZero() {
		t.Errorf("lease_lost event = %+v; want kind lock, name %q, owner %q, ErrLeaseLost", e, name, owner)
	}
	recs := logs.find("lease_lost")
	if len(recs) != 1 {
		t.Fatalf("%d lease_lost log records, want 1", len(recs))
	}
	r := recs[0]
	if r.level != slog.LevelWarn || r.attrs["kind"] != "lock" || r.attrs["name"] != name || r.attrs["owner"] != owner ||
		r.attrs["late"] == "" || r.attrs["error"] == "" {
		t.Errorf("lease_lost log record = %+v; want Warn with kind, name, owner, late, error", r)
	}
	if s := c.Stats(); s.LeasesHeld != 0 {
		t.Errorf("Stats().LeasesHeld after the loss = %d, want 0", s.LeasesHeld)
	}
	// A renewal pass is reported to the observer and at Debug only.
	if len(rec.eventsOf(EventRenewalPass)) == 0 {
		t.Error("no renewal_pass event")
	}
	for _, r := range logs.find("renewal_pass") {
		if r.level != slog.LevelDebug {
			t.Errorf("renewal_pass logged at %v, want Debug", r.level)
		}
	}
}

func TestObserveExplicitLeaseRunsOut(t *testing.T) {
	c, rec, logs := observedClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	l := c.GetLock(name)
	mustTryLock(t, ctx, l, 0, 200*time.Millisecond)
	<-l.Done()
	eventually(t, 5*time.Second, "lease_lost event", func() bool { return len(rec.eventsOf(EventLeaseLost)) == 1 })
	if recs := logs.find("lease_lost"); len(recs) != 1 || recs[0].level != slog.LevelWarn || recs[0].attrs["name"] != name {
		t.Errorf("lease_lost log records = %+v, want one at Warn naming %q", recs, name)
	}
}
