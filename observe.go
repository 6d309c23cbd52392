package redisson

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"
)

// Observer sees every public operation of a Client and the events that
// happen in its background (renewals, pub/sub connections, script reloads).
// Set it in Options.Observer; the module redissonotel turns it into
// OpenTelemetry spans and metrics. With no Observer the client does no
// observation work at all.
//
// The methods are called on the goroutine of the operation or of the
// background service, must be safe for concurrent use, and must not block:
// an Observer that calls back into the same Client may deadlock it.
type Observer interface {
	// OperationStart is called as a public operation begins. The context
	// it returns is the one the operation runs under (a tracer returns one
	// carrying its span); return ctx itself otherwise.
	OperationStart(ctx context.Context, op *Operation) context.Context

	// OperationEnd is called once when the operation returns, with the
	// context OperationStart returned and op's result fields filled in.
	OperationEnd(ctx context.Context, op *Operation)

	// Event reports something that happened outside any caller's result:
	// a lease lost, a renewal pass, a pub/sub connection replaced. ctx is
	// the background context of the service that saw it.
	Event(ctx context.Context, e *Event)
}

// Operation describes one public call as an Observer sees it. The fields
// above the blank line are set before OperationStart; the rest before
// OperationEnd. An Observer must not keep op after OperationEnd returns.
type Operation struct {
	Kind  string    // object kind, as errors name it: "lock", "fair lock", "semaphore", "rate limiter", ...
	Name  string    // the object's name as the caller gave it
	Op    string    // the operation: "lock.acquire", "lock.release", "ratelimit.allow", ...
	Start time.Time // when the call began
	Group string    // the caller's mark (WithOperationGroup), "" without one

	Duration   time.Duration // from Start to return
	Wait       time.Duration // of Duration, the time spent blocked waiting for another holder
	Held       time.Duration // for a release: how long the hold lasted
	RoundTrips int           // Redis round trips the call made
	Outcome    Outcome
	Err        error // the error the call returned, if any
}

// Outcome classifies how an operation ended.
type Outcome uint8

const (
	OutcomeOK        Outcome = iota // done (a read, a write, a release)
	OutcomeAcquired                 // a lock, permit or grant was taken
	OutcomeTimedOut                 // not acquired within the wait (TryLock false, a limiter's wait ran out)
	OutcomeDenied                   // a rate limiter refused the request
	OutcomeCancelled                // the caller's context ended
	OutcomeInvalid                  // bad input: nothing was sent
	OutcomeClosed                   // the Client was closed
	OutcomeError                    // Redis or the network failed
)

var outcomeNames = [...]string{"ok", "acquired", "timed_out", "denied", "cancelled", "invalid", "closed", "error"}

// String returns the outcome's name as metrics and spans label it:
// "ok", "acquired", "timed_out", "denied", "cancelled", "invalid",
// "closed" or "error".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "unknown"
}

// EventType names a background event.
type EventType uint8

const (
	EventLeaseLost       EventType = iota + 1 // a hold ended without Unlock: its lease ran out or its renewal failed (Kind, Name, Owner, Late, Err)
	EventRenewalFailed                        // one renewal call failed; the hold lives on until its deadline (Kind, Name, Owner, Err)
	EventRenewalPass                          // the watchdog renewed its leases (Count leases, Calls script calls, Duration)
	EventPubSubLost                           // a pub/sub connection failed (Node, Channels, Err)
	EventPubSubReplaced                       // a new pub/sub connection replaced a failed one and resubscribed (Node, Channels)
	EventPubSubRerouted                       // channels moved to another node after a failover or slot move (Node, Channels)
	EventScriptReloaded                       // a script the client had loaded or run was loaded again after NOSCRIPT (SCRIPT FLUSH, a restart, a failover); a first load is none (Name: the script)
	EventHandOffFailed                        // a wake-up or announcement could not be published (Kind, Name, Err)
	EventJanitorFailed                        // deleting release latches or call markers failed (Count keys, Err)
	EventCloseWaiting                         // Close is waiting for work in flight (Name: what, Duration: how long at most)
	EventWaiterGaveUp                         // a fair lock waiter lost its place in the queue (Kind, Name, Owner)
	EventDelayMoveFailed                      // a delayed queue's mover failed to move due elements; it retries after a back-off (Kind, Name: the destination, Err)

	EventQueueUnconfirmed // Close came before Redis confirmed a queue's hand-over to takers; they got the elements, a copy may stay in the in-flight list (Kind, Name, Count elements, Err)
	EventEvictFailed      // a MapCache eviction call failed; the next visit retries (Kind, Name, Err)
	EventNoEvictRefused   // the server has CLIENT NO-EVICT but refused it on a pub/sub connection (an ACL); reported once per client, the connections work unmarked (Err)
	EventJobFetchFailed   // a ReliableQueue worker's fetch of jobs failed; it retries after a back-off (Kind, Name, Owner: the consumer, Err)
	EventJobSettleFailed  // a ReliableQueue job's ack, retry or dead-lettering failed; the job is delivered again once its lease ends (Kind, Name, Owner: the consumer, Err)

	EventJobUndecodable     // a ReliableQueue job had no payload or its payload did not decode: it goes to the dead letters, with Err's text as its reason (Kind, Name, Owner: the consumer, Err matching ErrCodec)
	EventMessageUndecodable // a ReliableTopic message had no field m or did not decode: it was acknowledged and not handed to the subscriber (Kind, Name, Owner: the subscriber id, Err matching ErrCodec)
	EventLeaderElected      // this client's candidate took office in an Election (Kind, Name, Owner: the lock owner, Count: the term)
	EventLeadershipEnded    // a leadership of this client ended: resigned, lease lost or client closed (Kind, Name, Owner, Count: the term, Err: ErrResigned, ErrLeadershipLost or ErrClientClosed)

	EventWriteBehindFailed  // a write-behind Writer call failed; the batch is tried again after a back-off (Kind, Name, Count keys, Err)
	EventWriteBehindDropped // write-behind keys the Writer will not get: MaxAttempts reached, or Close gave up (Kind, Name, Count keys, Err)
)

var eventNames = [...]string{"", "lease_lost", "renewal_failed", "renewal_pass", "pubsub_lost", "pubsub_replaced",
	"pubsub_rerouted", "script_reloaded", "handoff_failed", "janitor_failed", "close_waiting", "waiter_gave_up",
	"delay_move_failed", "queue_unconfirmed", "evict_failed", "no_evict_refused", "job_fetch_failed", "job_settle_failed",
	"job_undecodable", "message_undecodable", "leader_elected", "leadership_ended",
	"write_behind_failed", "write_behind_dropped"}

// String returns the event's name as metrics and logs label it, such as
// "lease_lost".
func (t EventType) String() string {
	if int(t) < len(eventNames) && t != 0 {
		return eventNames[t]
	}
	return "unknown"
}

// Event describes one background event; which fields are set depends on
// Type (see its constants). An Observer must not keep e after Event
// returns.
type Event struct {
	Type     EventType
	Time     time.Time
	Kind     string        // object kind, when the event concerns one object
	Name     string        // object (or script) name
	Owner    string        // the hold's owner, <client uuid>:<n>
	Node     string        // the Redis node address
	Channels int           // channels concerned
	Count    int           // leases renewed, keys deleted
	Calls    int           // script calls made
	Duration time.Duration // how long the work took (or may take)
	Late     time.Duration // for a lost lease: how long after its deadline the loss was seen
	Err      error
}

// Stats is a snapshot of a Client's background state, for gauges and
// admin pages. Reading it takes a few mutexes and does no I/O.
type Stats struct {
	LeasesHeld      int           // holds this client has (watched by the watchdog or ended by a lease timer)
	Waiters         int           // callers blocked waiting on a lock (or its handle's gate), semaphore, latch, RateLimiter, or in a queue's blocking take or Put
	Channels        int           // pub/sub channels subscribed (or lingering)
	PubSubConns     int           // pub/sub connections open
	PubSubReplaced  uint64        // pub/sub connections replaced after a failure, since New
	PubSubRerouted  uint64        // channel re-routes after a failover or slot move, since New
	LastRenewalPass time.Duration // how long the watchdog's latest pass took
	LastRenewalSize int           // script calls in the watchdog's latest pass
	Cache           CacheStats    // the LocalCachedMaps' and read-through MapCaches' counts, added up, since New
}

// opKey is the context key of the record of the operation in progress.
type opKey struct{}

// groupKey is the context key of WithOperationGroup's mark.
type groupKey struct{}

// WithOperationGroup returns a copy of ctx marked with group: the
// operations called under it report it in Operation.Group, so that an
// Observer can count them by something bounded that is not the object's
// name (httplimit.NewConcurrency marks its permit acquisitions with the
// middleware's name: its semaphores are named per key). An empty group
// removes the mark. It costs nothing without an Observer.
func WithOperationGroup(ctx context.Context, group string) context.Context {
	return context.WithValue(ctx, groupKey{}, group)
}

// opRecord is one observed operation: what OperationEnd will be given, and
// the counts the layers below add to it while it runs (they find it in the
// context). It exists only when Options.Observer is set.
type opRecord struct {
	obs    Observer
	parent *opRecord       // the operation this one runs within, if any
	ctx    context.Context // the one OperationStart returned
	op     Operation
	trips  atomic.Int32
	wait   atomic.Int64 // ns blocked
}

// end reports the operation's result: err, or done when err is nil (see
// outcomeOf). Nothing on a nil record.
func (r *opRecord) end(err error, done Outcome) {
	if r != nil {
		r.finish(err, done)
	}
}

func (r *opRecord) finish(err error, done Outcome) {
	r.op.Duration = time.Since(r.op.Start)
	r.op.Wait = time.Duration(r.wait.Load())
	r.op.RoundTrips = int(r.trips.Load())
	if p := r.parent; p != nil { // a MultiLock's release of each lock
		p.trips.Add(int32(r.op.RoundTrips))
		p.wait.Add(int64(r.op.Wait))
	}
	r.op.Err = err
	r.op.Outcome = outcomeOf(err, done)
	r.obs.OperationEnd(r.ctx, &r.op)
}

// held records, for a release, how long the hold that ended lasted.
func (r *opRecord) held(since time.Time) {
	if r != nil && !since.IsZero() {
		r.op.Held = time.Since(since)
	}
}

// recordOf returns the record of the operation ctx belongs to, or nil.
func recordOf(ctx context.Context) *opRecord {
	r, _ := ctx.Value(opKey{}).(*opRecord)
	return r
}

func countTrips(ctx context.Context, n int) {
	if r := recordOf(ctx); r != nil {
		r.trips.Add(int32(n))
	}
}

// Outcomes of a call that returned no error, as end's done argument.
func acquiredIf(ok bool) Outcome {
	if ok {
		return OutcomeAcquired
	}
	return OutcomeTimedOut
}

// grantedIf is acquiredIf for a limiter asked without a wait: a refusal is
// a denial.
func grantedIf(ok bool) Outcome {
	if ok {
		return OutcomeAcquired
	}
	return OutcomeDenied
}

// invalidInput lists the sentinels of bad input: a call that returns one
// sent nothing.
var invalidInput = []error{ErrEmptyName, ErrInvalidName, ErrNegativeDuration, ErrInvalidOption, ErrInvalidRate,
	ErrPermitsExceedRate, ErrInvalidPermits, ErrInvalidCount, ErrNoLocks, ErrEmptyKey, ErrNilValue,
	ErrInvalidBatch, ErrInvalidBloomConfig, ErrInvalidAllocation, ErrInvalidBuffer,
	ErrNegativeCount, ErrInvalidScore, ErrCrossSlot, ErrIndexOutOfRange, ErrInvalidNumber}

// outcomeOf classifies an operation's end: done when err is nil; otherwise
// cancelled for the caller's context, closed after Close, invalid for bad
// input, timed_out for a wait that ran out (ErrNotAcquired), error else.
func outcomeOf(err error, done Outcome) Outcome {
	switch {
	case err == nil:
		return done
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCancelled
	case errors.Is(err, ErrClientClosed):
		return OutcomeClosed
	case errors.Is(err, ErrNotAcquired):
		return OutcomeTimedOut
	}
	for _, s := range invalidInput {
		if errors.Is(err, s) {
			return OutcomeInvalid
		}
	}
	return OutcomeError
}

// emitter reports background events: it logs them (Options.Logger, at the
// event's level) and hands them to the Observer. The services are given it
// at New; a nil emitter reports nothing.
type emitter struct {
	log *slog.Logger
	obs Observer
}

// eventSpec is how one event type is logged: the level, the message and
// which of Event's fields are its attributes.
type eventSpec struct {
	level  slog.Level
	msg    string
	fields eventFields
}

type eventFields uint16

const (
	fKind eventFields = 1 << iota
	fName
	fOwner
	fNode
	fChannels
	fCount
	fCalls
	fDuration
	fLate
	fErr
)

// eventSpecs is the table of events, by EventType.
var eventSpecs = [...]eventSpec{
	EventLeaseLost:       {slog.LevelWarn, "redisson: lock lease lost", fKind | fName | fOwner | fLate | fErr},
	EventRenewalFailed:   {slog.LevelWarn, "redisson: lease renewal failed", fKind | fName | fOwner | fCount | fCalls | fErr},
	EventRenewalPass:     {slog.LevelDebug, "redisson: leases renewed", fCount | fCalls | fDuration},
	EventPubSubLost:      {slog.LevelWarn, "redisson: pub/sub connection lost", fNode | fChannels | fErr},
	EventPubSubReplaced:  {slog.LevelInfo, "redisson: pub/sub connection replaced", fNode | fChannels},
	EventPubSubRerouted:  {slog.LevelInfo, "redisson: pub/sub channels re-routed", fNode | fChannels},
	EventScriptReloaded:  {slog.LevelDebug, "redisson: script reloaded after NOSCRIPT", fName | fNode},
	EventHandOffFailed:   {slog.LevelWarn, "redisson: hand-off publish failed", fKind | fName | fErr},
	EventJanitorFailed:   {slog.LevelWarn, "redisson: janitor failed to delete keys", fCount | fErr},
	EventCloseWaiting:    {slog.LevelInfo, "redisson: Close waiting for work in flight", fName | fDuration},
	EventWaiterGaveUp:    {slog.LevelDebug, "redisson: fair lock waiter lost its place", fKind | fName | fOwner},
	EventDelayMoveFailed: {slog.LevelWarn, "redisson: delayed queue move failed", fKind | fName | fErr},

	EventQueueUnconfirmed: {slog.LevelWarn, "redisson: queue hand-over not confirmed before close", fKind | fName | fCount | fErr},
	EventEvictFailed:      {slog.LevelWarn, "redisson: map cache eviction failed", fKind | fName | fErr},
	EventNoEvictRefused:   {slog.LevelWarn, "redisson: CLIENT NO-EVICT refused on pub/sub connections", fErr},
	EventJobFetchFailed:   {slog.LevelWarn, "redisson: job fetch failed", fKind | fName | fOwner | fErr},
	EventJobSettleFailed:  {slog.LevelWarn, "redisson: job settle failed", fKind | fName | fOwner | fErr},

	EventJobUndecodable:     {slog.LevelWarn, "redisson: job does not decode, dead-lettered", fKind | fName | fOwner | fErr},
	EventMessageUndecodable: {slog.LevelWarn, "redisson: reliable topic message does not decode, skipped", fKind | fName | fOwner | fErr},
	EventLeaderElected:      {slog.LevelDebug, "redisson: leader elected", fKind | fName | fOwner | fCount},
	EventLeadershipEnded:    {slog.LevelDebug, "redisson: leadership ended", fKind | fName | fOwner | fCount | fErr},

	EventWriteBehindFailed:  {slog.LevelWarn, "redisson: write-behind writer failed, retrying", fKind | fName | fCount | fErr},
	EventWriteBehindDropped: {slog.LevelError, "redisson: write-behind writes dropped", fKind | fName | fCount | fErr},
}

// emit reports e (Time is set here).
func (m *emitter) emit(e Event) {
	if m == nil || int(e.Type) >= len(eventSpecs) {
		return
	}
	spec := eventSpecs[e.Type]
	ctx := context.Background()
	logged := m.log != nil && m.log.Enabled(ctx, spec.level)
	if !logged && m.obs == nil {
		return
	}
	e.Time = time.Now()
	if m.obs != nil {
		ev := e // only this copy goes to the heap (the Observer is given a pointer)
		m.obs.Event(ctx, &ev)
	}
	if !logged {
		return
	}
	attrs := make([]slog.Attr, 0, 8)
	attrs = append(attrs, slog.String("event", e.Type.String()))
	f := spec.fields
	if f&fKind != 0 {
		attrs = append(attrs, slog.String("kind", e.Kind))
	}
	if f&fName != 0 {
		attrs = append(attrs, slog.String("name", e.Name))
	}
	if f&fOwner != 0 {
		attrs = append(attrs, slog.String("owner", e.Owner))
	}
	if f&fNode != 0 && e.Node != "" {
		attrs = append(attrs, slog.String("node", e.Node))
	}
	if f&fChannels != 0 {
		attrs = append(attrs, slog.Int("channels", e.Channels))
	}
	if f&fCount != 0 {
		attrs = append(attrs, slog.Int("count", e.Count))
	}
	if f&fCalls != 0 {
		attrs = append(attrs, slog.Int("calls", e.Calls))
	}
	if f&fDuration != 0 {
		attrs = append(attrs, slog.Duration("duration", e.Duration))
	}
	if f&fLate != 0 {
		attrs = append(attrs, slog.Duration("late", e.Late))
	}
	if f&fErr != 0 && e.Err != nil {
		attrs = append(attrs, slog.String("error", e.Err.Error()))
	}
	m.log.LogAttrs(ctx, spec.level, spec.msg, attrs...)
}

// okIf is acquiredIf for a wait that takes nothing (a latch's).
func okIf(ok bool) Outcome {
	if ok {
		return OutcomeOK
	}
	return OutcomeTimedOut
}

// limitedIf is the outcome of a limiter's request with a wait: refused at
// once (wait 0) is a denial, after waiting a time-out.
func limitedIf(ok bool, wait time.Duration) Outcome {
	if wait == 0 {
		return grantedIf(ok)
	}
	return acquiredIf(ok)
}
