package redissonotel

import (
	"context"
	"sync"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// The metric names. Durations are in seconds (unit "s"), as OpenTelemetry's
// semantic conventions ask; counts have a {unit} annotation.
const (
	MetricOperationDuration = "redisson.operation.duration"     // histogram, s: every operation (kind, operation, outcome)
	MetricAcquireDuration   = "redisson.lock.acquire.duration"  // histogram, s: acquisitions of locks, permits, latches (kind, outcome)
	MetricAcquireWait       = "redisson.lock.wait.duration"     // histogram, s: of an acquisition, the time blocked on another holder (kind, outcome)
	MetricHoldDuration      = "redisson.lock.hold.duration"     // histogram, s: how long a hold lasted, at its release (kind)
	MetricWaiters           = "redisson.waiters"                // gauge, {waiter}: callers blocked now (Stats.Waiters)
	MetricLeasesHeld        = "redisson.leases.held"            // gauge, {lease}: holds now (Stats.LeasesHeld)
	MetricLeasesLost        = "redisson.leases.lost"            // counter, {lease}: holds ended without Unlock (kind)
	MetricRenewalDuration   = "redisson.watchdog.pass.duration" // histogram, s: a watchdog renewal pass
	MetricRenewalSize       = "redisson.watchdog.pass.size"     // histogram, {lease}: leases renewed by a pass
	MetricChannels          = "redisson.pubsub.channels"        // gauge, {channel}: channels subscribed now (Stats.Channels)
	MetricConnections       = "redisson.pubsub.connections"     // gauge, {connection}: pub/sub connections open (Stats.PubSubConns)
	MetricReconnects        = "redisson.pubsub.reconnects"      // counter, {connection}: pub/sub connections replaced after a failure
	MetricReroutes          = "redisson.pubsub.reroutes"        // counter, {reroute}: channels moved after a failover or slot move
	MetricRateDecisions     = "redisson.ratelimit.decisions"    // counter, {decision}: rate-limit decisions (kind, decision)
	MetricScriptReloads     = "redisson.script.reloads"         // counter, {reload}: scripts loaded again after NOSCRIPT (script)
	MetricEvents            = "redisson.events"                 // counter, {event}: every background event (event, kind)

	// The caches' series (LocalCachedMap, read-through MapCache), read from
	// Stats.Cache of the registered clients (RegisterClient). A load's
	// duration and outcome are MetricOperationDuration's operation
	// "cache.load".
	MetricCacheHits          = "redisson.cache.hits"          // counter, {read}: reads served from a local cache (Stats.Cache.Hits)
	MetricCacheMisses        = "redisson.cache.misses"        // counter, {read}: reads a local cache could not serve (Stats.Cache.Misses)
	MetricCacheLoads         = "redisson.cache.loads"         // counter, {load}: ReadThrough loader runs (Stats.Cache.Loads)
	MetricCacheLoadErrors    = "redisson.cache.load.errors"   // counter, {load}: of those, the failed ones (Stats.Cache.LoadErrors)
	MetricCacheEvictions     = "redisson.cache.evictions"     // counter, {entry}: entries evicted by size or expiry (Stats.Cache.Evictions)
	MetricCacheInvalidations = "redisson.cache.invalidations" // counter, {message}: invalidations received (Stats.Cache.Invalidations)
	MetricCacheStaleServes   = "redisson.cache.stale_serves"  // counter, {read}: reads served stale while disconnected (Stats.Cache.StaleServes)
	MetricCacheSize          = "redisson.cache.size"          // gauge, {entry}: entries in the local caches now (Stats.Cache.Size)

	// The caches' Writers (WithWriteThrough, WithWriteBehind), read from
	// Stats.Cache as the series above; a Writer call is also an operation,
	// cache.write, and a write-behind failure an event.
	MetricCacheWrites        = "redisson.cache.writes"        // counter, {key}: keys a Writer wrote or deleted (Stats.Cache.Writes)
	MetricCacheWriteErrors   = "redisson.cache.write.errors"  // counter, {call}: failed Writer calls (Stats.Cache.WriteErrors)
	MetricCacheWritesDropped = "redisson.cache.write.dropped" // counter, {key}: write-behind keys the Writer never got (Stats.Cache.WritesDropped)
	MetricCacheWriteQueue    = "redisson.cache.write.queue"   // gauge, {key}: keys in write-behind queues now (Stats.Cache.WriteQueue)
)

// durationBuckets are the histogram boundaries of the durations, in
// seconds: from half a millisecond (an uncontended lock on a near Redis)
// to a minute (a long wait or hold).
var durationBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// sizeBuckets are the boundaries of the renewal pass sizes.
var sizeBuckets = []float64{0, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 10000}

// instruments are the Observer's metric instruments and the attribute sets
// already built for them, so that recording allocates nothing.
type instruments struct {
	opDuration, acquire, wait, hold, renewalDur, renewalSize     metric.Float64Histogram
	leasesLost, reconnects, reroutes, decisions, reloads, events metric.Int64Counter

	mu       sync.RWMutex
	opSets   map[opKey]*opSets
	evSets   map[evKey]metric.AddOption
	kindSets map[string]metric.MeasurementOption
}

type opKey struct {
	kind, op string
	outcome  redisson.Outcome
}

// opSets are the attribute options of one (kind, operation, outcome).
type opSets struct {
	op, kindOutcome metric.RecordOption
	decision        metric.AddOption // nil: not a rate-limit decision
}

type evKey struct {
	typ        redisson.EventType
	kind, name string // name: the script's, for script reloads only
}

func newInstruments(m metric.Meter, stats *statsSources) *instruments {
	noopMeter := noop.NewMeterProvider().Meter(ScopeName)
	hist := func(name, unit, desc string, buckets []float64) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(buckets...))
		if err != nil || h == nil {
			otel.Handle(err)
			h, _ = noopMeter.Float64Histogram(name)
		}
		return h
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || c == nil {
			otel.Handle(err)
			c, _ = noopMeter.Int64Counter(name)
		}
		return c
	}
	in := &instruments{
		opDuration:  hist(MetricOperationDuration, "s", "Duration of redisson operations.", durationBuckets),
		acquire:     hist(MetricAcquireDuration, "s", "Duration of acquisitions of locks, permits and latches, waiting included.", durationBuckets),
		wait:        hist(MetricAcquireWait, "s", "Time acquisitions spent blocked waiting for another holder.", durationBuckets),
		hold:        hist(MetricHoldDuration, "s", "How long holds lasted, measured at their release.", durationBuckets),
		renewalDur:  hist(MetricRenewalDuration, "s", "Duration of the watchdog's lease renewal passes.", durationBuckets),
		renewalSize: hist(MetricRenewalSize, "{lease}", "Leases renewed by one watchdog pass.", sizeBuckets),
		leasesLost:  counter(MetricLeasesLost, "{lease}", "Holds that ended without Unlock: lease ran out or renewal failed."),
		reconnects:  counter(MetricReconnects, "{connection}", "Pub/sub connections replaced after a failure."),
		reroutes:    counter(MetricReroutes, "{reroute}", "Pub/sub channel re-routes after a failover or slot move."),
		decisions:   counter(MetricRateDecisions, "{decision}", "Rate-limit decisions, allowed or denied."),
		reloads:     counter(MetricScriptReloads, "{reload}", "Scripts loaded again after NOSCRIPT."),
		events:      counter(MetricEvents, "{event}", "Background events of redisson clients, by type."),
		opSets:      map[opKey]*opSets{},
		evSets:      map[evKey]metric.AddOption{},
		kindSets:    map[string]metric.MeasurementOption{},
	}
	stats.register(m, noopMeter)
	return in
}

// operation records op's metrics.
func (in *instruments) operation(ctx context.Context, op *redisson.Operation) {
	s := in.opSetsOf(op)
	in.opDuration.Record(ctx, op.Duration.Seconds(), s.op)
	if isAcquire(op) {
		in.acquire.Record(ctx, op.Duration.Seconds(), s.kindOutcome)
		in.wait.Record(ctx, op.Wait.Seconds(), s.kindOutcome)
	}
	if op.Held > 0 {
		in.hold.Record(ctx, op.Held.Seconds(), in.kindSet(op.Kind))
	}
	if s.decision != nil {
		in.decisions.Add(ctx, 1, s.decision)
	}
}

// event records e's metrics.
func (in *instruments) event(ctx context.Context, e *redisson.Event) {
	key := evKey{typ: e.Type, kind: e.Kind}
	if e.Type == redisson.EventScriptReloaded {
		key.name = e.Name // a script of the library: a bounded set
	}
	in.events.Add(ctx, 1, in.evSet(key))
	switch e.Type {
	case redisson.EventLeaseLost:
		in.leasesLost.Add(ctx, 1, in.kindSet(e.Kind))
	case redisson.EventRenewalPass:
		in.renewalDur.Record(ctx, e.Duration.Seconds())
		in.renewalSize.Record(ctx, float64(e.Count))
	case redisson.EventPubSubReplaced:
		in.reconnects.Add(ctx, 1)
	case redisson.EventPubSubRerouted:
		in.reroutes.Add(ctx, 1)
	case redisson.EventScriptReloaded:
		in.reloads.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(AttrScript.String(labelValue(e.Name)))))
	}
}

func (in *instruments) opSetsOf(op *redisson.Operation) *opSets {
	key := opKey{kind: op.Kind, op: op.Op, outcome: op.Outcome}
	in.mu.RLock()
	s := in.opSets[key]
	in.mu.RUnlock()
	if s != nil {
		return s
	}
	kind, outcome := AttrKind.String(labelValue(op.Kind)), AttrOutcome.String(op.Outcome.String())
	s = &opSets{
		op:          metric.WithAttributeSet(attribute.NewSet(kind, AttrOperation.String(labelValue(op.Op)), outcome)),
		kindOutcome: metric.WithAttributeSet(attribute.NewSet(kind, outcome)),
	}
	if isRateLimit(op) {
		switch op.Outcome {
		case redisson.OutcomeOK, redisson.OutcomeAcquired:
			s.decision = metric.WithAttributeSet(attribute.NewSet(kind, AttrDecision.String("allowed")))
		case redisson.OutcomeDenied, redisson.OutcomeTimedOut:
			s.decision = metric.WithAttributeSet(attribute.NewSet(kind, AttrDecision.String("denied")))
		}
	}
	in.mu.Lock()
	if prev := in.opSets[key]; prev != nil {
		s = prev
	} else {
		in.opSets[key] = s
	}
	in.mu.Unlock()
	return s
}

func (in *instruments) kindSet(kind string) metric.MeasurementOption {
	in.mu.RLock()
	s, ok := in.kindSets[kind]
	in.mu.RUnlock()
	if ok {
		return s
	}
	s = metric.WithAttributeSet(attribute.NewSet(AttrKind.String(labelValue(kind))))
	in.mu.Lock()
	in.kindSets[kind] = s
	in.mu.Unlock()
	return s
}

func (in *instruments) evSet(key evKey) metric.AddOption {
	in.mu.RLock()
	s, ok := in.evSets[key]
	in.mu.RUnlock()
	if ok {
		return s
	}
	attrs := []attribute.KeyValue{AttrEvent.String(key.typ.String())}
	if key.kind != "" {
		attrs = append(attrs, AttrKind.String(labelValue(key.kind)))
	}
	if key.name != "" {
		attrs = append(attrs, AttrScript.String(labelValue(key.name)))
	}
	s = metric.WithAttributeSet(attribute.NewSet(attrs...))
	in.mu.Lock()
	in.evSets[key] = s
	in.mu.Unlock()
	return s
}
