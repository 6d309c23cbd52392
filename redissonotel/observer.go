package redissonotel

import (
	"context"
	"encoding/hex"
	"hash/fnv"
	"strings"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and the meter.
const ScopeName = "github.com/goredisson/redisson/redissonotel"

// The attribute keys, in OpenTelemetry's semantic-convention style.
const (
	AttrKind       = attribute.Key("redisson.object.kind") // object kind as a label: "lock", "fair_lock", "blocking_queue", ...
	AttrName       = attribute.Key("redisson.object.name") // object name (spans only; see NameMode)
	AttrOperation  = attribute.Key("redisson.operation")   // operation: "lock.acquire", ... (metrics)
	AttrOutcome    = attribute.Key("redisson.outcome")     // redisson.Outcome's String
	AttrWaitMS     = attribute.Key("redisson.wait.ms")     // time blocked on another holder, ms (float)
	AttrHeldMS     = attribute.Key("redisson.held.ms")     // for a release: how long the hold lasted, ms (float)
	AttrRoundTrips = attribute.Key("redisson.round_trips") // Redis round trips the call made
	AttrEvent      = attribute.Key("redisson.event")       // redisson.EventType's String
	AttrScript     = attribute.Key("redisson.script")      // a library script's name (script reloads)
	AttrDecision   = attribute.Key("redisson.decision")    // "allowed" or "denied"
	AttrErrorType  = attribute.Key("error.type")           // the outcome, on spans that failed
	AttrClient     = attribute.Key("redisson.client")      // the gauges' client: its ID or WithClientName (metrics)
)

// NameMode says what spans record of an object's name.
type NameMode uint8

const (
	NameKeep NameMode = iota // the name as the caller gave it (default)
	NameHash                 // a 16-hex-digit FNV-1a hash of the name: correlatable, not readable
	NameDrop                 // no name attribute at all
)

// Option configures an Observer.
type Option func(*config)

type config struct {
	tp    trace.TracerProvider
	mp    metric.MeterProvider
	names NameMode
}

// WithTracerProvider sets the TracerProvider spans are made with. Default
// otel.GetTracerProvider() at the time of NewObserver.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) { c.tp = tp }
}

// WithMeterProvider sets the MeterProvider the instruments are made with.
// Default otel.GetMeterProvider() at the time of NewObserver.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) { c.mp = mp }
}

// WithNames sets what spans record of object names. Default NameKeep.
// Metrics carry no lock's or key's name, whatever the mode; the work
// layer's series carry their queue's, topic's or election's name under the
// same mode (NameDrop leaves it out).
func WithNames(mode NameMode) Option {
	return func(c *config) { c.names = mode }
}

// Observer is a redisson.Observer that makes OpenTelemetry spans and
// metrics. Make it with NewObserver and set it in redisson.Options.Observer;
// one Observer may serve several Clients. It is safe for concurrent use.
type Observer struct {
	tracer trace.Tracer
	names  NameMode
	m      *instruments
	stats  *statsSources
	work   *work
	queues *queueSources
}

var _ redisson.Observer = (*Observer)(nil)

// NewObserver returns an Observer with the given options. Instruments that
// the MeterProvider fails to create are replaced by no-ops (and the error
// is given to otel.Handle), so that telemetry never stops the client.
func NewObserver(opts ...Option) *Observer {
	cfg := config{}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	o := &Observer{
		tracer: cfg.tp.Tracer(ScopeName),
		names:  cfg.names,
		stats:  &statsSources{},
		queues: &queueSources{},
	}
	meter := cfg.mp.Meter(ScopeName)
	o.m = newInstruments(meter, o.stats)
	o.work = newWork(o, meter)
	o.queues.register(o, meter, noop.NewMeterProvider().Meter(ScopeName))
	return o
}

type spanKey struct{}

// OperationStart starts the operation's span, a child of the span in ctx,
// and returns a context carrying it. The span's attributes are all set when
// it ends, in one call (samplers see only its name and kind).
func (o *Observer) OperationStart(ctx context.Context, op *redisson.Operation) context.Context {
	o.work.start(ctx, op)
	ctx, span := o.tracer.Start(ctx, op.Op, internalSpan)
	return context.WithValue(ctx, spanKey{}, span)
}

// internalSpan is the kind of the operations' spans: they wrap the Redis
// calls (which go-redis's own instrumentation would make client spans of).
var internalSpan = trace.WithSpanKind(trace.SpanKindInternal)

// OperationEnd ends the span OperationStart started (an error status for
// the outcomes that are failures: error, invalid, closed, cancelled) and
// records the operation's metrics.
func (o *Observer) OperationEnd(ctx context.Context, op *redisson.Operation) {
	o.m.operation(ctx, op)
	o.work.operation(ctx, op)
	span, ok := ctx.Value(spanKey{}).(trace.Span)
	if !ok {
		return // not a context of OperationStart: nothing to end
	}
	if !span.IsRecording() {
		span.End()
		return
	}
	attrs := make([]attribute.KeyValue, 0, 7)
	attrs = append(attrs, AttrKind.String(labelValue(op.Kind)))
	if name, ok := o.name(op.Name); ok {
		attrs = append(attrs, AttrName.String(name))
	}
	attrs = append(attrs, AttrOutcome.String(op.Outcome.String()), AttrRoundTrips.Int(op.RoundTrips))
	if op.Wait > 0 || isAcquire(op) {
		attrs = append(attrs, AttrWaitMS.Float64(ms(op.Wait.Seconds())))
	}
	if op.Held > 0 {
		attrs = append(attrs, AttrHeldMS.Float64(ms(op.Held.Seconds())))
	}
	if failed(op.Outcome) {
		attrs = append(attrs, AttrErrorType.String(op.Outcome.String()))
		if op.Err != nil {
			span.RecordError(op.Err)
			span.SetStatus(codes.Error, op.Err.Error())
		} else {
			span.SetStatus(codes.Error, op.Outcome.String())
		}
	}
	span.SetAttributes(attrs...)
	span.End()
}

// Event counts a background event in redisson.events and in the
// instrument of its type, if it has one. It makes no span; when ctx
// carries a recording span (Close waiting under the caller's context, say),
// the event is added to that span.
func (o *Observer) Event(ctx context.Context, e *redisson.Event) {
	o.m.event(ctx, e)
	o.work.event(ctx, e)
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{AttrEvent.String(e.Type.String())}
		if e.Kind != "" {
			attrs = append(attrs, AttrKind.String(labelValue(e.Kind)))
		}
		if name, ok := o.name(e.Name); ok && e.Name != "" {
			attrs = append(attrs, AttrName.String(name))
		}
		opts := []trace.EventOption{trace.WithAttributes(attrs...)}
		if !e.Time.IsZero() {
			opts = append(opts, trace.WithTimestamp(e.Time))
		}
		span.AddEvent("redisson."+e.Type.String(), opts...)
	}
}

// name returns what spans record of an object name, and false for none.
func (o *Observer) name(n string) (string, bool) {
	switch o.names {
	case NameDrop:
		return "", false
	case NameHash:
		h := fnv.New64a()
		h.Write([]byte(n))
		return hex.EncodeToString(h.Sum(nil)), true
	}
	return n, true
}

// failed reports whether an outcome is a failure (a span error status), as
// opposed to an answer: a timed-out TryLock or a denied request is not.
func failed(o redisson.Outcome) bool {
	switch o {
	case redisson.OutcomeError, redisson.OutcomeInvalid, redisson.OutcomeClosed, redisson.OutcomeCancelled:
		return true
	}
	return false
}

// isRateLimit reports whether op is a rate limiter's decision.
func isRateLimit(op *redisson.Operation) bool {
	return strings.HasPrefix(op.Op, "ratelimit.") || strings.Contains(op.Kind, "limiter")
}

// isAcquire reports whether op is an attempt to take a lock or a permit or
// to pass a latch (not a rate limiter's grant): an operation named
// "<kind>.acquire" or "<kind>.await", or one that ended acquired or timed
// out.
func isAcquire(op *redisson.Operation) bool {
	if isRateLimit(op) {
		return false
	}
	return strings.HasSuffix(op.Op, ".acquire") || strings.HasSuffix(op.Op, ".await") ||
		op.Outcome == redisson.OutcomeAcquired || op.Outcome == redisson.OutcomeTimedOut
}

func ms(seconds float64) float64 { return seconds * 1000 }
