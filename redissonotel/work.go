package redissonotel

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The metrics of the work layer (ReliableQueue) and the recipes (Election,
// IdempotencyRecord, httplimit.NewIdempotency and NewConcurrency).
const (
	MetricQueueJobs            = "redisson.queue.jobs"             // counter, {job}: jobs by what happened to them (queue, state)
	MetricQueueInFlight        = "redisson.queue.jobs.in_flight"   // up-down counter, {job}: handlers running now (queue)
	MetricQueueJobDuration     = "redisson.queue.job.duration"     // histogram, s: a handler's run of a job (queue, outcome)
	MetricQueueReady           = "redisson.queue.ready"            // gauge, {job}: jobs not yet delivered (queue; RegisterReliableQueue)
	MetricQueuePending         = "redisson.queue.pending"          // gauge, {job}: jobs delivered and not settled, every worker's (queue)
	MetricQueueDelayed         = "redisson.queue.delayed"          // gauge, {job}: jobs waiting for their due time (queue)
	MetricQueueDead            = "redisson.queue.dead"             // gauge, {job}: dead letters (queue)
	MetricQueueLag             = "redisson.queue.lag"              // gauge, s: age of the oldest job not yet delivered (queue)
	MetricElectionChanges      = "redisson.election.changes"       // counter, {change}: leaderships of this process begun and ended (election, change)
	MetricElectionLeader       = "redisson.election.leader"        // up-down counter, {leader}: 1 while this process leads the election (election)
	MetricIdempotencyDecisions = "redisson.idempotency.decisions"  // counter, {decision}: IdempotencyRecord.Begin's decisions (decision, group)
	MetricTopicUndecodable     = "redisson.topic.undecodable"      // counter, {message}: ReliableTopic messages skipped because they do not decode (topic)
	MetricTopicLag             = "redisson.topic.lag"              // gauge, {message}: the largest lag of a registered topic's subscribers (topic; RegisterReliableTopic)
	MetricTopicSubscribers     = "redisson.topic.subscribers"      // gauge, {subscriber}: a registered topic's subscribers (topic)
	MetricConcurrencyRejected  = "redisson.concurrency.rejections" // counter, {request}: requests httplimit.NewConcurrency refused (group)
	MetricSchedulerFires       = "redisson.scheduler.fires"        // counter, {fire}: a Scheduler's instants this process fired, skipped, or whose run failed (scheduler, result)
)

// The attribute keys of the work layer's and the recipes' metrics. The
// object names they carry are those of queues, topics and elections, which
// a program declares (a handful), never a per-request key; they follow the
// Observer's NameMode as span names do (NameDrop leaves them out), made
// label values as kinds are ("Orders:{eu}" is "orders_eu").
const (
	AttrQueue    = attribute.Key("redisson.queue")           // a ReliableQueue's name
	AttrTopic    = attribute.Key("redisson.topic")           // a ReliableTopic's name
	AttrElection = attribute.Key("redisson.election")        // an Election's name
	AttrJobState = attribute.Key("redisson.job.state")       // enqueued, duplicate, started, succeeded, failed, retried, dead_lettered, given_back, undecodable
	AttrChange   = attribute.Key("redisson.election.change") // elected, resigned, lost, closed
	AttrGroup    = attribute.Key("redisson.object.group")    // the middleware: the name given to httplimit.NewIdempotency or NewConcurrency (redisson.WithOperationGroup)
	AttrSchedule = attribute.Key("redisson.scheduler")       // a Scheduler's name
	AttrFire     = attribute.Key("redisson.fire.result")     // fired, skipped (an earlier run still held its lease), failed (the handler returned an error)
)

// The operations and kinds the work instruments read, as the core names them.
const (
	opRQEnqueue    = "reliable_queue.enqueue"
	opRQRun        = "reliable_queue.run"
	opRQAck        = "reliable_queue.ack"
	opRQRetry      = "reliable_queue.retry"
	opRQGiveBack   = "reliable_queue.give_back"
	opRQDeadLetter = "reliable_queue.dead_letter"
	opIdemBegin    = "idempotency.begin"
	opPermitAcq    = "permit_semaphore.acquire"
	opSchedFire    = "scheduler.fire"
	opSchedSkip    = "scheduler.skip"
	opSchedRun     = "scheduler.run"
)

// work holds the work layer's and the recipes' instruments and their
// attribute sets, built once per (attribute, name, value).
type work struct {
	o                     *Observer
	jobs, changes, decide metric.Int64Counter
	undecodable, rejected metric.Int64Counter
	fires                 metric.Int64Counter
	inFlight, leader      metric.Int64UpDownCounter
	runs                  metric.Float64Histogram
	mu                    sync.RWMutex
	sets                  map[setKey]metric.MeasurementOption
}

type setKey struct {
	k1, v1, k2, v2 string
}

func newWork(o *Observer, m metric.Meter) *work {
	noopMeter := noop.NewMeterProvider().Meter(ScopeName)
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || c == nil {
			otel.Handle(err)
			c, _ = noopMeter.Int64Counter(name)
		}
		return c
	}
	updown := func(name, unit, desc string) metric.Int64UpDownCounter {
		c, err := m.Int64UpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || c == nil {
			otel.Handle(err)
			c, _ = noopMeter.Int64UpDownCounter(name)
		}
		return c
	}
	runs, err := m.Float64Histogram(MetricQueueJobDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of job handlers' runs."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	if err != nil || runs == nil {
		otel.Handle(err)
		runs, _ = noopMeter.Float64Histogram(MetricQueueJobDuration)
	}
	return &work{
		o:           o,
		jobs:        counter(MetricQueueJobs, "{job}", "Reliable queue jobs, by what happened to them."),
		changes:     counter(MetricElectionChanges, "{change}", "Leaderships of this process that began or ended."),
		decide:      counter(MetricIdempotencyDecisions, "{decision}", "Idempotency decisions: run, replay, mismatch, busy."),
		rejected:    counter(MetricConcurrencyRejected, "{request}", "Requests a concurrency limit refused."),
		undecodable: counter(MetricTopicUndecodable, "{message}", "Reliable topic messages skipped because they do not decode."),
		fires:       counter(MetricSchedulerFires, "{fire}", "Scheduler instants fired, skipped, or whose run failed, by this process."),
		inFlight:    updown(MetricQueueInFlight, "{job}", "Job handlers running now."),
		leader:      updown(MetricElectionLeader, "{leader}", "Leaderships this process holds now."),
		runs:        runs,
		sets:        map[setKey]metric.MeasurementOption{},
	}
}

// set returns the attribute set {k1: v1, k2: v2} (k2 "" for none; a
// name-valued attribute whose name the NameMode drops is left out).
func (w *work) set(k1, v1, k2, v2 string) metric.MeasurementOption {
	key := setKey{k1, v1, k2, v2}
	w.mu.RLock()
	s, ok := w.sets[key]
	w.mu.RUnlock()
	if ok {
		return s
	}
	attrs := make([]attribute.KeyValue, 0, 2)
	v, ok := v1, true
	if k1 != string(AttrGroup) { // a group is the caller's label, not an object's name
		v, ok = w.o.name(v1)
	}
	if ok && v1 != "" {
		attrs = append(attrs, attribute.String(k1, labelValue(v)))
	}
	if k2 != "" {
		attrs = append(attrs, attribute.String(k2, v2))
	}
	s = metric.WithAttributeSet(attribute.NewSet(attrs...))
	w.mu.Lock()
	w.sets[key] = s
	w.mu.Unlock()
	return s
}

func (w *work) count(ctx context.Context, queue, state string) {
	w.jobs.Add(ctx, 1, w.set(string(AttrQueue), queue, string(AttrJobState), state))
}

// start counts a handler's run beginning.
func (w *work) start(ctx context.Context, op *redisson.Operation) {
	if op.Op != opRQRun {
		return
	}
	w.count(ctx, op.Name, "started")
	w.inFlight.Add(ctx, 1, w.set(string(AttrQueue), op.Name, "", ""))
}

// operation counts what an operation's end tells of jobs and decisions.
func (w *work) operation(ctx context.Context, op *redisson.Operation) {
	ok := op.Outcome == redisson.OutcomeOK
	switch op.Op {
	case opSchedFire:
		if op.Outcome == redisson.OutcomeAcquired {
			w.fires.Add(ctx, 1, w.set(string(AttrSchedule), op.Name, string(AttrFire), "fired"))
		}
	case opSchedSkip:
		w.fires.Add(ctx, 1, w.set(string(AttrSchedule), op.Name, string(AttrFire), "skipped"))
	case opSchedRun:
		if !ok {
			w.fires.Add(ctx, 1, w.set(string(AttrSchedule), op.Name, string(AttrFire), "failed"))
		}
	case opRQEnqueue:
		switch op.Outcome {
		case redisson.OutcomeOK:
			w.count(ctx, op.Name, "enqueued")
		case redisson.OutcomeDenied:
			w.count(ctx, op.Name, "duplicate")
		}
	case opRQRun:
		w.inFlight.Add(ctx, -1, w.set(string(AttrQueue), op.Name, "", ""))
		w.runs.Record(ctx, op.Duration.Seconds(), w.set(string(AttrQueue), op.Name, string(AttrOutcome), op.Outcome.String()))
		if !ok {
			w.count(ctx, op.Name, "failed")
		}
	case opRQAck:
		if ok {
			w.count(ctx, op.Name, "succeeded")
		}
	case opRQRetry:
		if ok {
			w.count(ctx, op.Name, "retried")
		}
	case opRQDeadLetter:
		if ok {
			w.count(ctx, op.Name, "dead_lettered")
		}
	case opRQGiveBack:
		if ok {
			w.count(ctx, op.Name, "given_back")
		}
	case opPermitAcq:
		// A grouped acquisition that found no permit: httplimit's refusal.
		if op.Group != "" && op.Outcome == redisson.OutcomeTimedOut {
			w.rejected.Add(ctx, 1, w.set(string(AttrGroup), op.Group, "", ""))
		}
	case opIdemBegin:
		if d := idemDecision(op.Outcome); d != "" {
			w.decide.Add(ctx, 1, w.set(string(AttrGroup), idemGroup(op.Name), string(AttrDecision), d))
		}
	}
}

// event counts what a background event tells of jobs, messages and
// leaderships.
func (w *work) event(ctx context.Context, e *redisson.Event) {
	switch e.Type {
	case redisson.EventJobUndecodable:
		w.count(ctx, e.Name, "undecodable")
	case redisson.EventMessageUndecodable:
		w.undecodable.Add(ctx, 1, w.set(string(AttrTopic), e.Name, "", ""))
	case redisson.EventLeaderElected:
		w.changes.Add(ctx, 1, w.set(string(AttrElection), e.Name, string(AttrChange), "elected"))
		w.leader.Add(ctx, 1, w.set(string(AttrElection), e.Name, "", ""))
	case redisson.EventLeadershipEnded:
		change := "lost"
		switch {
		case errors.Is(e.Err, redisson.ErrResigned):
			change = "resigned"
		case errors.Is(e.Err, redisson.ErrClientClosed):
			change = "closed"
		}
		w.changes.Add(ctx, 1, w.set(string(AttrElection), e.Name, string(AttrChange), change))
		w.leader.Add(ctx, -1, w.set(string(AttrElection), e.Name, "", ""))
	}
}

// idemDecision is the decision an idempotency.begin outcome stands for; ""
// for a failed call.
func idemDecision(o redisson.Outcome) string {
	switch o {
	case redisson.OutcomeAcquired:
		return "run"
	case redisson.OutcomeOK:
		return "replay"
	case redisson.OutcomeDenied:
		return "mismatch"
	case redisson.OutcomeTimedOut:
		return "busy"
	}
	return ""
}

// idemGroup is the middleware's name in a record name that
// httplimit.NewIdempotency made, <name>:{<64 hex digits>}; "" for any other
// name (a record's own name may be a per-request key: never a label).
func idemGroup(name string) string {
	i := strings.LastIndex(name, ":{")
	if i < 0 || len(name)-i != 2+64+1 || name[len(name)-1] != '}' {
		return ""
	}
	for _, c := range name[i+2 : len(name)-1] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return ""
		}
	}
	return name[:i]
}
