package redisson

import (
	"context"
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
	Kind  string    // object kind, as in ObjectKind: "lock", "semaphore", "rate_limiter", ...
	Name  string    // the object's name as the caller gave it
	Op    string    // the operation: "lock.acquire", "lock.release", "ratelimit.allow", ...
	Start time.Time // when the call began

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
	EventLeaseLost      EventType = iota + 1 // a hold ended without Unlock: its lease ran out or its renewal failed (Kind, Name, Owner, Late, Err)
	EventRenewalFailed                       // one renewal call failed; the hold lives on until its deadline (Kind, Name, Owner, Err)
	EventRenewalPass                         // the watchdog renewed its leases (Count leases, Calls script calls, Duration)
	EventPubSubLost                          // a pub/sub connection failed (Node, Channels, Err)
	EventPubSubReplaced                      // a new pub/sub connection replaced a failed one and resubscribed (Node, Channels)
	EventPubSubRerouted                      // channels moved to another node after a failover or slot move (Node, Channels)
	EventScriptReloaded                      // a script was loaded again after NOSCRIPT (Name: the script)
	EventHandOffFailed                       // a wake-up or announcement could not be published (Kind, Name, Err)
	EventJanitorFailed                       // deleting release latches or call markers failed (Count keys, Err)
	EventCloseWaiting                        // Close is waiting for work in flight (Name: what, Duration: how long at most)
	EventWaiterGaveUp                        // a fair lock waiter lost its place in the queue (Kind, Name, Owner)
)

var eventNames = [...]string{"", "lease_lost", "renewal_failed", "renewal_pass", "pubsub_lost", "pubsub_replaced",
	"pubsub_rerouted", "script_reloaded", "handoff_failed", "janitor_failed", "close_waiting", "waiter_gave_up"}

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
	Waiters         int           // callers blocked waiting on a lock, semaphore or latch
	Channels        int           // pub/sub channels subscribed (or lingering)
	PubSubConns     int           // pub/sub connections open
	PubSubReplaced  uint64        // pub/sub connections replaced after a failure, since New
	PubSubRerouted  uint64        // channel re-routes after a failover or slot move, since New
	LastRenewalPass time.Duration // how long the watchdog's latest pass took
	LastRenewalSize int           // script calls in the watchdog's latest pass
}
