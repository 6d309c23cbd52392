package redisson

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
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
	return observedClientOn(t, sharedRedis(t), opts)
}

func observedClientOn(t *testing.T, rdb redis.UniversalClient, opts *Options) (*Client, *recorder, *logCapture) {
	t.Helper()
	rec, logs := &recorder{}, newLogCapture(slog.LevelDebug)
	var o Options
	if opts != nil {
		o = *opts
	}
	o.Observer, o.Logger = rec, slog.New(logs)
	return newClient(t, rdb, &o), rec, logs
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
	eventually(t, 5*time.Second, "lease_lost log record", func() bool { return len(logs.find("lease_lost")) > 0 })
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
	eventually(t, 5*time.Second, "lease_lost log record", func() bool { return len(logs.find("lease_lost")) > 0 })
	if recs := logs.find("lease_lost"); len(recs) != 1 || recs[0].level != slog.LevelWarn || recs[0].attrs["name"] != name {
		t.Errorf("lease_lost log records = %+v, want one at Warn naming %q", recs, name)
	}
}

func TestObservePubSubClientKill(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, logs := observedClientOn(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	holder := c.GetLock("observe:kill")
	mustTryLock(t, ctx, holder, 0, time.Minute)
	got := make(chan error, 1)
	go func() { got <- c.GetLock("observe:kill").Lock(ctx) }()
	channel := prefixName("redisson_lock__channel", "observe:kill")
	eventually(t, 10*time.Second, "waiter subscribed", func() bool { return rdb.PubSubNumSub(ctx, channel).Val()[channel] == 1 })
	if s := c.Stats(); s.Channels != 1 || s.PubSubConns != 1 || s.Waiters != 1 {
		t.Errorf("Stats() with one waiter = %+v; want 1 channel, 1 connection, 1 waiter", s)
	}
	if n, err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
		t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 killed", n, err)
	}
	eventually(t, 15*time.Second, "pubsub_lost and pubsub_replaced events", func() bool {
		return len(rec.eventsOf(EventPubSubLost)) > 0 && len(rec.eventsOf(EventPubSubReplaced)) > 0
	})
	if e := rec.eventsOf(EventPubSubLost)[0]; e.Err == nil || e.Channels != 1 {
		t.Errorf("pubsub_lost event = %+v; want its error and 1 channel", e)
	}
	if e := rec.eventsOf(EventPubSubReplaced)[0]; e.Channels != 1 {
		t.Errorf("pubsub_replaced event = %+v; want 1 channel", e)
	}
	eventually(t, 5*time.Second, "pub/sub log records", func() bool {
		return len(logs.find("pubsub_lost")) > 0 && len(logs.find("pubsub_replaced")) > 0
	})
	if r := logs.find("pubsub_lost")[0]; r.level != slog.LevelWarn || r.attrs["error"] == "" || r.attrs["channels"] != "1" {
		t.Errorf("pubsub_lost log record = %+v; want Warn with error and channels=1", r)
	}
	if r := logs.find("pubsub_replaced")[0]; r.level != slog.LevelInfo || r.attrs["channels"] != "1" {
		t.Errorf("pubsub_replaced log record = %+v; want Info with channels=1", r)
	}
	if s := c.Stats(); s.PubSubReplaced == 0 {
		t.Errorf("Stats().PubSubReplaced = 0 after the connection came back")
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestObserveScriptReloaded(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, logs := observedClientOn(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	l := c.GetLock("observe:flush")
	mustTryLock(t, ctx, l, 0, 0)
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	before := len(rec.eventsOf(EventScriptReloaded))
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	mustTryLock(t, ctx, l, 0, 0)
	reloads := rec.eventsOf(EventScriptReloaded)[before:]
	if len(reloads) != 1 || reloads[0].Name != l.kind.acquire.Name() {
		t.Fatalf("script_reloaded events after SCRIPT FLUSH = %+v, want one naming %q", reloads, l.kind.acquire.Name())
	}
	if op := rec.last(t, opLockAcquire, "observe:flush"); op.RoundTrips != 3 || op.Outcome != OutcomeAcquired {
		t.Errorf("TryLock after SCRIPT FLUSH: %d round trips, outcome %v; want 3 (EVALSHA, SCRIPT LOAD, EVALSHA), acquired", op.RoundTrips, op.Outcome)
	}
	var found bool
	for _, r := range logs.find("script_reloaded") {
		if r.attrs["name"] == l.kind.acquire.Name() {
			found = true
			if r.level != slog.LevelDebug {
				t.Errorf("script_reloaded logged at %v, want Debug", r.level)
			}
		}
	}
	if !found {
		t.Errorf("no script_reloaded log record naming %q", l.kind.acquire.Name())
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// opNames is every operation name of the table in observe.go.
var opNames = map[string]bool{}

func init() {
	for _, n := range []string{opLockAcquire, opLockRelease, opLockExtend, opLockForceUnlock, opLockIsLocked, opLockIsHeld,
		opLockHoldCount, opLockRemainingLease, opLockQueueLength, opMultiAcquire, opMultiRelease,
		opSemAcquire, opSemRelease, opSemTrySetPermits, opSemAddPermits, opSemAvailable, opSemDrain, opSemDelete,
		opPermitAcquire, opPermitRelease, opPermitUpdateLease, opPermitTrySetPermits, opPermitAddPermits,
		opPermitAvailable, opPermitAcquired, opPermitDelete,
		opLatchAwait, opLatchCountDown, opLatchTrySetCount, opLatchCount, opLatchDelete,
		opRateAcquire, opRateAllow, opRateTrySetRate, opRateSetRate, opRateConfig, opRateAvailable, opRateDelete,
		opBucketGet, opBucketSet, opBucketSetIfAbsent, opBucketSetIfExists, opBucketGetAndSet, opBucketGetAndDelete,
		opBucketCompareAndSet, opBucketTTL, opBucketDelete,
		opAtomicGet, opAtomicSet, opAtomicGetAndSet, opAtomicAddAndGet, opAtomicGetAndAdd, opAtomicCompareAndSet,
		opAtomicGetAndDelete, opAtomicDelete,
		opMapGet, opMapGetAll, opMapPut, opMapPutIfAbsent, opMapRemove, opMapFastPut, opMapFastRemove, opMapContainsKey, opMapSize,
		opMapReadAll, opMapDelete, opMapAddAndGet, opMapScan,
		opBloomTryInit, opBloomAdd, opBloomContains, opBloomConfig, opBloomCount, opBloomDelete,
		opIDTryInit, opIDNext, opIDDelete, opTopicPublish, opTopicSubscribe,
		opElectionCampaign, opElectionResign, opElectionLeader, opElectionObserve,
		opSchedulerAdd, opSchedulerRemove, opSchedulerStart, opSchedulerLoad, opSchedulerFire, opSchedulerSkip, opSchedulerRun,
		opListAdd, opListInsert, opListGet, opListSet, opListFastSet, opListRemove, opListRemoveAt, opListIndexOf,
		opListSize, opListRange, opListTrim, opListDelete, opListScan,
		opSetAdd, opSetRemove, opSetContains, opSetSize, opSetMembers, opSetRandom, opSetPop, opSetUnion,
		opSetIntersection, opSetDifference, opSetUnionStore, opSetIntersectionStore, opSetDifferenceStore,
		opSetDelete, opSetScan,
		opZSetAdd, opZSetAddScore, opZSetScore, opZSetRank, opZSetRemove, opZSetSize, opZSetCount,
		opZSetRemoveRange, opZSetPoll, opZSetRange, opZSetDelete, opZSetScan,
		opDelayOffer, opDelaySize, opDelayContains, opDelayRemove, opDelayReadAll, opDelayDelete,
		opRQEnqueue, opRQRun, opRQAck, opRQRetry, opRQGiveBack, opRQDeadLetter, opRQStats, opRQDeadLetters, opRQRequeue, opRQPurge,
		opBatchExecute} {
		opNames[n] = true
	}
}

// A healthy run of many operations on every object logs nothing at Info or
// above, and every operation is reported once, under a name of the table,
// with the outcome it had.
func TestObserveHealthyRunLogsNothing(t *testing.T) {
	srv := redistest.Start(t)
	c, rec, logs := observedClientOn(t, srv.Client(t), &Options{WatchdogTimeout: 300 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; i < 20; i++ {
				for _, l := range []*Lock{c.GetLock("h:lock"), c.GetFairLock("h:fair"), c.GetReadWriteLock("h:rw").WriteLock()} {
					if err := l.Lock(ctx); err != nil {
						t.Error(err)
						return
					}
					if err := l.Unlock(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	// Holds that outlive a few renewal passes.
	held := c.GetLock("h:held")
	must(held.Lock(ctx))
	time.Sleep(time.Second)
	must(held.Unlock(ctx))

	sem := c.GetSemaphore("h:sem")
	_, err := sem.TrySetPermits(ctx, 2)
	must(err)
	must(sem.Acquire(ctx, 1))
	must(sem.Release(ctx, 1))
	ps := c.GetPermitExpirableSemaphore("h:psem")
	_, err = ps.TrySetPermits(ctx, 1)
	must(err)
	id, err := ps.Acquire(ctx, time.Minute)
	must(err)
	must(ps.Release(ctx, id))
	latch := c.GetCountDownLatch("h:latch")
	_, err = latch.TrySetCount(ctx, 1)
	must(err)
	must(latch.CountDown(ctx))
	must(latch.Await(ctx))
	rl := c.GetRateLimiter("h:rl")
	_, err = rl.TrySetRate(ctx, Overall, 100, time.Second)
	must(err)
	must(rl.Acquire(ctx, 1))
	_, err = c.GetGCRALimiter("h:gcra", 10, time.Second, 5).Allow(ctx, "k", 1)
	must(err)
	_, err = c.GetFixedWindowLimiter("h:fw", 10, time.Second).Allow(ctx, "k", 1)
	must(err)
	b := GetBucket[string](c, "h:bucket")
	must(b.Set(ctx, "v"))
	_, _, err = b.Get(ctx)
	must(err)
	m := GetMap[string, int](c, "h:map")
	_, err = m.FastPut(ctx, "a", 1)
	must(err)
	it := m.Iterator(10)
	for range it.All(ctx) {
	}
	must(it.Err())
	a := c.GetAtomicLong("h:atomic")
	_, err = a.IncrementAndGet(ctx)
	must(err)
	f := GetBloomFilter[string](c, "h:bloom")
	_, err = f.TryInit(ctx, 100, 0.01)
	must(err)
	_, err = f.Add(ctx, "x")
	must(err)
	gen := c.GetIdGenerator("h:id")
	_, err = gen.NextID(ctx)
	must(err)
	topic := GetTopic[string](c, "h:topic")
	sub, err := topic.Subscribe(ctx, func(string) {})
	must(err)
	_, err = topic.Publish(ctx, "m")
	must(err)
	sub.Close()
	lst := GetList[string](c, "h:list")
	_, err = lst.AddAll(ctx, "a", "b")
	must(err)
	_, err = lst.Get(ctx, 1)
	must(err)
	lit := lst.Iterator(10)
	for range lit.All(ctx) {
	}
	must(lit.Err())
	set := GetSet[string](c, "h:set")
	_, err = set.Add(ctx, "a")
	must(err)
	_, err = set.Members(ctx)
	must(err)
	zs := GetSortedSet[string](c, "h:zset")
	_, err = zs.Add(ctx, 1, "a")
	must(err)
	_, err = zs.RangeByRank(ctx, 0, -1)
	must(err)
	dq := GetDelayedQueue[string](c, "h:dest")
	must(dq.Offer(ctx, "x", time.Hour))
	_, err = dq.Size(ctx)
	must(err)
	_, err = dq.Delete(ctx)
	must(err)
	dq.Destroy()

	if bad := logs.atLeast(slog.LevelInfo); len(bad) != 0 {
		t.Errorf("a healthy run logged at Info or above: %+v", bad)
	}
	if len(logs.find("renewal_pass")) == 0 {
		t.Error("no renewal_pass at Debug while a hold outlived renewal passes")
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := map[string]int{}
	for _, op := range rec.ops {
		seen[op.Op]++
		if !opNames[op.Op] {
			t.Errorf("operation %q is not in the table", op.Op)
		}
		if !strings.HasPrefix(op.Op, strings.SplitN(op.Op, ".", 2)[0]+".") || op.Outcome == OutcomeError || op.Outcome == OutcomeInvalid {
			t.Errorf("operation %+v in a healthy run", op)
		}
		if op.Duration <= 0 || op.Start.IsZero() {
			t.Errorf("operation %s: Start %v, Duration %v", op.Op, op.Start, op.Duration)
		}
		if op.RoundTrips < 1 {
			t.Errorf("operation %s on %q counted %d round trips, want at least 1", op.Op, op.Name, op.RoundTrips)
		}
	}
	if seen[opLockAcquire] != 4*20*3+1 || seen[opLockRelease] != 4*20*3+1 {
		t.Errorf("recorded %d lock.acquire and %d lock.release, want %d each", seen[opLockAcquire], seen[opLockRelease], 4*20*3+1)
	}
	for _, op := range []string{opSemAcquire, opPermitAcquire, opLatchAwait, opRateAcquire, opRateAllow, opBucketGet,
		opMapScan, opAtomicAddAndGet, opBloomAdd, opIDNext, opTopicPublish, opTopicSubscribe,
		opListAdd, opListGet, opListScan, opSetAdd, opSetMembers, opZSetAdd, opZSetRange,
		opDelayOffer, opDelaySize, opDelayDelete} {
		if seen[op] == 0 {
			t.Errorf("no %s operation recorded", op)
		}
	}
	if seen[opRateAllow] != 2 || seen[opAtomicAddAndGet] != 1 {
		t.Errorf("recorded %d ratelimit.allow (want 2) and %d atomiclong.add_and_get (want 1, IncrementAndGet once)", seen[opRateAllow], seen[opAtomicAddAndGet])
	}
}

func TestObserveLimitersAndSemaphores(t *testing.T) {
	srv := redistest.Start(t)
	c, rec, _ := observedClientOn(t, srv.Client(t), nil)
	ctx := testCtx(t, time.Minute)

	// A keyed limiter's refusal is a denial; a grant an acquisition.
	g := c.GetGCRALimiter("l:gcra", 1, time.Hour, 1)
	for i, want := range []Outcome{OutcomeAcquired, OutcomeDenied} {
		if _, err := g.Allow(ctx, "k", 1); err != nil {
			t.Fatal(err)
		}
		if op := rec.last(t, opRateAllow, "l:gcra"); op.Outcome != want || op.Kind != gcraKind {
			t.Errorf("Allow #%d: outcome %v, kind %q; want %v, %q", i+1, op.Outcome, op.Kind, want, gcraKind)
		}
	}
	if _, err := g.Allow(ctx, "", 1); !errors.Is(err, ErrEmptyKey) {
		t.Fatalf("Allow with an empty key = %v, want ErrEmptyKey", err)
	}
	if op := rec.last(t, opRateAllow, "l:gcra"); op.Outcome != OutcomeInvalid || op.RoundTrips != 0 {
		t.Errorf("Allow with an empty key: outcome %v, %d round trips; want invalid, 0", op.Outcome, op.RoundTrips)
	}
	rl := c.GetRateLimiter("l:rl")
	if _, err := rl.TrySetRate(ctx, Overall, 1, time.Hour); err != nil {
		t.Fatal(err)
	}
	for i, want := range []Outcome{OutcomeAcquired, OutcomeDenied} {
		if _, err := rl.TryAcquire(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if op := rec.last(t, opRateAcquire, "l:rl"); op.Outcome != want {
			t.Errorf("RateLimiter.TryAcquire #%d: outcome %v, want %v", i+1, op.Outcome, want)
		}
	}
	if ok, err := rl.TryAcquireWait(ctx, 1, 10*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAcquireWait on a spent limiter = %v, %v", ok, err)
	}
	if op := rec.last(t, opRateAcquire, "l:rl"); op.Outcome != OutcomeTimedOut {
		t.Errorf("TryAcquireWait that ran out: outcome %v, want timed_out", op.Outcome)
	}

	// A semaphore waiter: Wait while blocked, then acquired; a single try
	// on no permits: timed out.
	sem := c.GetSemaphore("l:sem")
	for i := 0; i < 2; i++ { // the first loads the script
		if ok, err := sem.TryAcquire(ctx, 1, 0); ok || err != nil {
			t.Fatalf("TryAcquire on no permits = %v, %v", ok, err)
		}
	}
	if op := rec.last(t, opSemAcquire, "l:sem"); op.Outcome != OutcomeTimedOut || op.RoundTrips != 1 {
		t.Errorf("TryAcquire(0) on no permits: outcome %v, %d round trips; want timed_out, 1", op.Outcome, op.RoundTrips)
	}
	done := make(chan error, 1)
	go func() { done <- sem.Acquire(ctx, 1) }()
	eventually(t, 10*time.Second, "semaphore waiter counted", func() bool { return c.Stats().Waiters == 1 })
	time.Sleep(50 * time.Millisecond)
	if err := sem.Release(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ops := rec.opsOf(opSemAcquire, "l:sem")
	if op := ops[len(ops)-1]; op.Outcome != OutcomeAcquired || op.Wait < 40*time.Millisecond {
		t.Errorf("semaphore waiter: outcome %v, Wait %v; want acquired after at least 50ms blocked", op.Outcome, op.Wait)
	}
	// A latch wait that runs out.
	latch := c.GetCountDownLatch("l:latch")
	if _, err := latch.TrySetCount(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if ok, err := latch.TryAwait(ctx, 20*time.Millisecond); ok || err != nil {
		t.Fatalf("TryAwait = %v, %v", ok, err)
	}
	if op := rec.last(t, opLatchAwait, "l:latch"); op.Outcome != OutcomeTimedOut || op.Wait <= 0 {
		t.Errorf("TryAwait that ran out: outcome %v, Wait %v; want timed_out, > 0", op.Outcome, op.Wait)
	}
	// Bad input to a typed object: invalid, nothing sent.
	if err := GetBucket[*int](c, "l:bucket").Set(ctx, nil); !errors.Is(err, ErrNilValue) {
		t.Fatalf("Set(nil) = %v, want ErrNilValue", err)
	}
	if op := rec.last(t, opBucketSet, "l:bucket"); op.Outcome != OutcomeInvalid || op.RoundTrips != 0 {
		t.Errorf("Bucket.Set(nil): outcome %v, %d round trips; want invalid, 0", op.Outcome, op.RoundTrips)
	}
}

// Without an Observer, an operation's context is passed through as it is:
// nothing is added to it.
func TestObserveNoObserverAddsNothing(t *testing.T) {
	c := newClient(t, sharedRedis(t), nil)
	ctx := context.Background()
	got, rec := c.begin(ctx, "lock", "x", opLockAcquire)
	if got != ctx || rec != nil {
		t.Errorf("begin without an Observer = %v, %v; want ctx itself and no record", got, rec)
	}
	rec.end(errors.New("x"), OutcomeOK) // a nil record does nothing
	if n := testing.AllocsPerRun(100, func() {
		ctx, rec := c.begin(ctx, "lock", "x", opLockAcquire)
		c.trip(ctx, 1)
		t0 := c.blockStart()
		c.blockEnd(ctx, t0)
		rec.end(nil, OutcomeAcquired)
	}); n != 0 {
		t.Errorf("begin/trip/block/end without an Observer allocate %v times, want 0", n)
	}
	// Nor does the seam in the collections' and the delayed queue's calls
	// (refused for their name before any I/O, so only the seam runs).
	lst, set, zs, dq := GetList[int](c, ""), GetSet[int](c, ""), GetSortedSet[int](c, ""), GetDelayedQueue[int](c, "")
	if n := testing.AllocsPerRun(100, func() {
		_, _ = lst.Size(ctx)
		_, _ = set.Size(ctx)
		_, _ = zs.Size(ctx)
		_, _ = dq.Size(ctx)
	}); n != 0 {
		t.Errorf("List, Set, SortedSet and DelayedQueue calls without an Observer allocate %v times, want 0", n)
	}
	// An event nobody logs or observes costs no allocation either.
	em := &emitter{log: slog.New(slog.DiscardHandler)}
	if n := testing.AllocsPerRun(100, func() {
		em.emit(Event{Type: EventRenewalPass, Count: 1, Calls: 1, Duration: time.Millisecond})
	}); n != 0 {
		t.Errorf("an event with no Observer and no enabled Logger allocates %v times, want 0", n)
	}
}

func TestObserveFairWaiterGaveUp(t *testing.T) {
	c, rec, logs := observedClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() {
		c.rdb.Del(context.Background(), fairQueueKey(name), prefixName("redisson_lock_timeout", name), prefixName("redisson_lock_alive", name))
	})
	holder, waiter := c.GetFairLock(name), c.GetFairLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	if ok, err := waiter.TryLock(ctx, 100*time.Millisecond, 0); ok || err != nil {
		t.Fatalf("fair TryLock on a held lock = %v, %v; want false, nil", ok, err)
	}
	evs := rec.eventsOf(EventWaiterGaveUp)
	if len(evs) != 1 || evs[0].Kind != "fair lock" || evs[0].Name != name || evs[0].Owner != waiter.Owner() {
		t.Fatalf("waiter_gave_up events = %+v; want one for %q, owner %q", evs, name, waiter.Owner())
	}
	if op := rec.last(t, opLockAcquire, name); op.Kind != "fair lock" || op.Outcome != OutcomeTimedOut || op.Wait <= 0 {
		t.Errorf("fair waiter's lock.acquire: kind %q, outcome %v, Wait %v; want fair lock, timed_out, > 0", op.Kind, op.Outcome, op.Wait)
	}
	if recs := logs.find("waiter_gave_up"); len(recs) != 1 || recs[0].level != slog.LevelDebug || recs[0].attrs["owner"] != waiter.Owner() {
		t.Errorf("waiter_gave_up log records = %+v; want one at Debug with the owner", recs)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The collections and the delayed queue report each call under its name
// and kind, with its round trips: one per command, three for a script's
// first call on a fresh server (EVALSHA, SCRIPT LOAD, EVALSHA), one per
// page of an iterator, none for bad input.
func TestObserveCollectionsAndDelayedQueue(t *testing.T) {
	srv := redistest.Start(t)
	c, rec, _ := observedClientOn(t, srv.Client(t), nil)
	ctx := testCtx(t, time.Minute)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, op, name, kind string, trips int, want Outcome) {
		t.Helper()
		got := rec.last(t, op, name)
		if got.Kind != kind || got.RoundTrips != trips || got.Outcome != want {
			t.Errorf("%s: %s kind %q, %d round trips, outcome %v; want %q, %d, %v", what, op, got.Kind, got.RoundTrips, got.Outcome, kind, trips, want)
		}
	}

	l := GetList[string](c, "o:list")
	_, err := l.AddAll(ctx, "a", "b", "c")
	must(err)
	check("List.AddAll", opListAdd, "o:list", listKind, 1, OutcomeOK)
	must(l.Insert(ctx, 0, "z"))
	check("List.Insert, first script call", opListInsert, "o:list", listKind, 3, OutcomeOK)
	must(l.Insert(ctx, 0, "y"))
	check("List.Insert", opListInsert, "o:list", listKind, 1, OutcomeOK)
	_, err = l.Get(ctx, 1)
	must(err)
	check("List.Get", opListGet, "o:list", listKind, 1, OutcomeOK)
	_, err = l.Contains(ctx, "b")
	must(err)
	check("List.Contains", opListIndexOf, "o:list", listKind, 1, OutcomeOK)
	_, err = l.ReadAll(ctx)
	must(err)
	check("List.ReadAll", opListRange, "o:list", listKind, 1, OutcomeOK)
	if _, err := l.Get(ctx, -1); !errors.Is(err, ErrIndexOutOfRange) {
		t.Fatalf("Get(-1) = %v, want ErrIndexOutOfRange", err)
	}
	check("List.Get(-1)", opListGet, "o:list", listKind, 0, OutcomeInvalid)
	before := len(rec.opsOf(opListScan, "o:list"))
	it := l.Iterator(2) // 5 elements: pages of 2, 2, 1
	n := 0
	for range it.All(ctx) {
		n++
	}
	must(it.Err())
	if pages := rec.opsOf(opListScan, "o:list")[before:]; n != 5 || len(pages) != 3 || pages[0].RoundTrips != 1 || pages[2].RoundTrips != 1 {
		t.Errorf("List iterator: %d elements in %d list.scan operations %+v; want 5 in 3 of one round trip each", n, len(pages), pages)
	}

	s, other := GetSet[string](c, "{o}:set"), GetSet[string](c, "{o}:set2")
	_, err = s.Add(ctx, "a")
	must(err)
	check("Set.Add", opSetAdd, "{o}:set", setKind, 1, OutcomeOK)
	_, err = s.Members(ctx)
	must(err)
	check("Set.Members", opSetMembers, "{o}:set", setKind, 1, OutcomeOK)
	for range 2 {
		_, err = s.UnionStore(ctx, other)
		must(err)
	}
	check("Set.UnionStore", opSetUnionStore, "{o}:set", setKind, 1, OutcomeOK)
	if _, err := s.PopN(ctx, -1); !errors.Is(err, ErrNegativeCount) {
		t.Fatalf("PopN(-1) = %v, want ErrNegativeCount", err)
	}
	check("Set.PopN(-1)", opSetPop, "{o}:set", setKind, 0, OutcomeInvalid)
	sit := s.Iterator(10)
	for range sit.All(ctx) {
	}
	must(sit.Err())
	check("Set iterator", opSetScan, "{o}:set", setKind, 1, OutcomeOK)

	z := GetSortedSet[string](c, "o:zset")
	_, err = z.Add(ctx, 1, "a")
	must(err)
	check("SortedSet.Add", opZSetAdd, "o:zset", sortedSetKind, 1, OutcomeOK)
	_, err = z.Contains(ctx, "a")
	must(err)
	check("SortedSet.Contains", opZSetScore, "o:zset", sortedSetKind, 1, OutcomeOK)
	_, err = z.EntryRangeByRank(ctx, 0, -1)
	must(err)
	check("SortedSet.EntryRangeByRank", opZSetRange, "o:zset", sortedSetKind, 1, OutcomeOK)
	_, err = z.PollFirst(ctx, 1)
	must(err)
	check("SortedSet.PollFirst", opZSetPoll, "o:zset", sortedSetKind, 1, OutcomeOK)
	if _, err := z.AddIfAbsent(ctx, math.NaN(), "b"); !errors.Is(err, ErrInvalidScore) {
		t.Fatalf("AddIfAbsent(NaN) = %v, want ErrInvalidScore", err)
	}
	check("SortedSet.AddIfAbsent(NaN)", opZSetAdd, "o:zset", sortedSetKind, 0, OutcomeInvalid)

	q := GetDelayedQueue[string](c, "o:dest")
	t.Cleanup(q.Destroy)
	must(q.Offer(ctx, "x", time.Hour))
	check("DelayedQueue.Offer, first script call", opDelayOffer, "o:dest", delayQueueKind, 3, OutcomeOK)
	must(q.OfferAll(ctx, []string{"y", "z"}, time.Hour))
	check("DelayedQueue.OfferAll", opDelayOffer, "o:dest", delayQueueKind, 1, OutcomeOK)
	_, err = q.Size(ctx)
	must(err)
	check("DelayedQueue.Size", opDelaySize, "o:dest", delayQueueKind, 1, OutcomeOK)
	for range 2 {
		_, err = q.Contains(ctx, "y")
		must(err)
	}
	check("DelayedQueue.Contains", opDelayContains, "o:dest", delayQueueKind, 1, OutcomeOK)
	_, err = q.ReadAll(ctx)
	must(err)
	check("DelayedQueue.ReadAll", opDelayReadAll, "o:dest", delayQueueKind, 1, OutcomeOK)
	if err := q.Offer(ctx, "x", -time.Second); !errors.Is(err, ErrNegativeDuration) {
		t.Fatalf("Offer with a negative delay = %v, want ErrNegativeDuration", err)
	}
	check("DelayedQueue.Offer(-1s)", opDelayOffer, "o:dest", delayQueueKind, 0, OutcomeInvalid)
	_, err = q.Delete(ctx)
	must(err)
	check("DelayedQueue.Delete", opDelayDelete, "o:dest", delayQueueKind, 1, OutcomeOK)
}

// A move the delayed queue's mover cannot make (its destination holds
// another Redis type) is a delay_move_failed event, logged at Warn, and
// the mover retries until it can.
func TestObserveDelayMoveFailed(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, logs := observedClientOn(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	dest := delayDest(t, rdb)
	if err := rdb.Set(ctx, dest, "not a list", 0).Err(); err != nil {
		t.Fatal(err)
	}
	q := GetDelayedQueue[string](c, dest)
	defer q.Destroy()
	if err := q.Offer(ctx, "v", 0); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "a delay_move_failed event", func() bool { return len(rec.eventsOf(EventDelayMoveFailed)) > 0 })
	e := rec.eventsOf(EventDelayMoveFailed)[0]
	if e.Kind != delayQueueKind || e.Name != dest || !errors.Is(e.Err, ErrWrongType) {
		t.Errorf("delay_move_failed event %+v; want kind %q, name %q, an error matching ErrWrongType", e, delayQueueKind, dest)
	}
	recs := logs.find("delay_move_failed")
	if len(recs) == 0 || recs[0].level != slog.LevelWarn || recs[0].attrs["name"] != dest {
		t.Errorf("delay_move_failed log records %+v; want them at Warn naming %q", recs, dest)
	}
	if err := rdb.Del(ctx, dest).Err(); err != nil {
		t.Fatal(err)
	}
	if v, ok := popDest(t, ctx, rdb, dest, 20*time.Second); !ok || v == "" {
		t.Errorf("after the destination was freed, nothing was moved into it")
	}
}

// TestObserveQueueOperations checks that every public I/O method of the
// queues reports one operation of its name, kind and outcome, with its
// round trips, and that a blocking take reports the time it waited.
func TestObserveQueueOperations(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, c.rdb)
	bname := uniqueName(t, c.rdb)
	q := GetBlockingQueue[string](c, name)
	d := GetDeque[string](c, name)
	b := GetBoundedBlockingQueue[string](c, bname)
	check := func(op, obj, kind string, outcome Outcome, trips int) Operation {
		t.Helper()
		got := rec.last(t, op, obj)
		// trips < 0: a script, at least one (a first run may load it).
		if got.Kind != kind || got.Outcome != outcome || (trips >= 0 && got.RoundTrips != trips) || (trips < 0 && got.RoundTrips < 1) {
			t.Errorf("%s: kind %q, outcome %v, %d round trips; want %q, %v, %d (err %v)",
				op, got.Kind, got.Outcome, got.RoundTrips, kind, outcome, trips, got.Err)
		}
		return got
	}
	for _, step := range []struct {
		op    string
		call  func() error
		kind  string
		trips int
		out   Outcome
	}{
		{opQueueOffer, func() error { return q.Offer(ctx, "a") }, blockingQueueKind, 1, OutcomeOK},
		{opQueueOffer, func() error { return d.OfferFirst(ctx, "z") }, dequeKind, 1, OutcomeOK},
		{opQueuePeek, func() error { _, _, err := d.PeekLast(ctx); return err }, dequeKind, 1, OutcomeOK},
		{opQueueSize, func() error { _, err := q.Size(ctx); return err }, blockingQueueKind, 1, OutcomeOK},
		{opQueueReadAll, func() error { _, err := q.ReadAll(ctx); return err }, blockingQueueKind, 1, OutcomeOK},
		{opQueuePoll, func() error { _, _, err := d.PollFirst(ctx); return err }, dequeKind, 1, OutcomeOK},
		{opQueuePoll, func() error { _, _, err := q.Poll(ctx, 0); return err }, blockingQueueKind, 1, OutcomeOK},
		{opQueueDrain, func() error { _, err := q.Drain(ctx, 5); return err }, blockingQueueKind, -1, OutcomeOK},
		{opQueueTake, func() error { _, _, err := q.Poll(ctx, 50*time.Millisecond); return err }, blockingQueueKind, 0, OutcomeTimedOut},
		{opQueueDelete, func() error { _, err := q.Delete(ctx); return err }, blockingQueueKind, 1, OutcomeOK},
		{opQueueTrySetCapacity, func() error { _, err := b.TrySetCapacity(ctx, 1); return err }, boundedQueueKind, -1, OutcomeOK},
		{opQueueOffer, func() error { _, err := b.Offer(ctx, "x"); return err }, boundedQueueKind, -1, OutcomeOK},
		{opQueueCapacity, func() error { _, err := b.Capacity(ctx); return err }, boundedQueueKind, 1, OutcomeOK},
		{opQueuePoll, func() error { _, _, err := b.Poll(ctx, 0); return err }, boundedQueueKind, -1, OutcomeOK},
		{opQueuePut, func() error { return b.Put(ctx, "y") }, boundedQueueKind, -1, OutcomeOK},
	} {
		if err := step.call(); err != nil {
			t.Fatalf("%s: %v", step.op, err)
		}
		obj := name
		if step.kind == boundedQueueKind {
			obj = bname
		}
		check(step.op, obj, step.kind, step.out, step.trips)
	}
	for v := range q.Iterator(10).All(ctx) {
		_ = v
	}
	check(opQueueScan, name, blockingQueueKind, OutcomeOK, 1)
	// A bad batch is reported as a list iterator's is: one operation, no
	// round trip.
	bad := q.Iterator(0)
	for range bad.All(ctx) {
	}
	if !errors.Is(bad.Err(), ErrInvalidBatch) {
		t.Fatalf("Iterator(0).Err = %v; want ErrInvalidBatch", bad.Err())
	}
	check(opQueueScan, name, blockingQueueKind, OutcomeInvalid, 0)

	// A blocking take reports the time it waited for an element.
	go func() {
		time.Sleep(200 * time.Millisecond)
		GetQueue[string](c, name).Offer(ctx, "late")
	}()
	if v, err := q.Take(ctx); err != nil || v != "late" {
		t.Fatalf("Take = %q, %v", v, err)
	}
	if op := check(opQueueTake, name, blockingQueueKind, OutcomeOK, 0); op.Wait < 100*time.Millisecond || op.Wait > op.Duration {
		t.Errorf("Take: Wait %v of Duration %v; want at least the 200 ms before the offer", op.Wait, op.Duration)
	}
	if _, err := GetBlockingQueue[string](c, "").Take(ctx); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("Take on an empty name: %v", err)
	}
	check(opQueueTake, "", blockingQueueKind, OutcomeInvalid, 0)
	c.Close()
	if _, err := q.Size(ctx); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("Size after Close: %v", err)
	}
	check(opQueueSize, name, blockingQueueKind, OutcomeClosed, 0)
}
