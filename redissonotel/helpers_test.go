package redissonotel_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/goredisson/redisson/redissonotel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// telemetry is an Observer wired to an in-memory span exporter and a
// manual metric reader.
type telemetry struct {
	obs    *redissonotel.Observer
	spans  *tracetest.InMemoryExporter
	reader *sdkmetric.ManualReader
	tracer trace.Tracer // for the callers' own spans
}

func newTelemetry(t *testing.T, opts ...redissonotel.Option) *telemetry {
	t.Helper()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() {
		ctx := context.Background()
		if err := tp.Shutdown(ctx); err != nil {
			t.Errorf("tracer provider shutdown: %v", err)
		}
		if err := mp.Shutdown(ctx); err != nil {
			t.Errorf("meter provider shutdown: %v", err)
		}
	})
	opts = append([]redissonotel.Option{redissonotel.WithTracerProvider(tp), redissonotel.WithMeterProvider(mp)}, opts...)
	return &telemetry{obs: redissonotel.NewObserver(opts...), spans: spans, reader: reader, tracer: tp.Tracer("test")}
}

// collect reads the metrics and checks that no data point carries an
// object name: metric attributes must stay bounded.
func (tm *telemetry) collect(t *testing.T) metricdata.ResourceMetrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tm.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatalf("collect: %v", err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			for _, set := range attrSets(m) {
				if _, ok := set.Value(redissonotel.AttrName); ok {
					t.Errorf("metric %s carries an object name: %v", m.Name, set.Encoded(attribute.DefaultEncoder()))
				}
			}
		}
	}
	return rm
}

func attrSets(m metricdata.Metrics) []attribute.Set {
	var sets []attribute.Set
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, p := range d.DataPoints {
			sets = append(sets, p.Attributes)
		}
	}
	return sets
}

func findMetric(rm metricdata.ResourceMetrics, name string) (metricdata.Metrics, bool) {
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return m, true
			}
		}
	}
	return metricdata.Metrics{}, false
}

// matches reports whether set has every attribute of want.
func matches(set attribute.Set, want []attribute.KeyValue) bool {
	for _, kv := range want {
		if v, ok := set.Value(kv.Key); !ok || v != kv.Value {
			return false
		}
	}
	return true
}

// counter returns the sum of the counter's points that have want's
// attributes, and whether the metric exists.
func counter(rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (int64, bool) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, false
	}
	var n int64
	for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if matches(p.Attributes, want) {
			n += p.Value
		}
	}
	return n, true
}

// gauge returns the gauge's single value, and false when it has none.
func gauge(rm metricdata.ResourceMetrics, name string) (int64, bool) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, false
	}
	pts := m.Data.(metricdata.Gauge[int64]).DataPoints
	if len(pts) != 1 {
		return 0, false
	}
	return pts[0].Value, true
}

// histogram returns the count and sum of the histogram's points that have
// want's attributes.
func histogram(rm metricdata.ResourceMetrics, name string, want ...attribute.KeyValue) (count uint64, sum float64) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, 0
	}
	for _, p := range m.Data.(metricdata.Histogram[float64]).DataPoints {
		if matches(p.Attributes, want) {
			count += p.Count
			sum += p.Sum
		}
	}
	return count, sum
}

func spanAttr(s sdktrace.ReadOnlySpan, key attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// newClient returns a redisson client of the shared server with obs as its
// Observer (nil: none) and logger as its Logger (nil: discard).
func newClient(t testing.TB, obs redisson.Observer, logger *slog.Logger, opts *redisson.Options) *redisson.Client {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	o := redisson.Options{}
	if opts != nil {
		o = *opts
	}
	o.Observer = obs
	o.Logger = logger
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c, err := redisson.New(rdb, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// uniqueName returns a name no other test uses.
func uniqueName(t testing.TB) string {
	return "redissonotel:" + t.Name() + ":" + time.Now().Format("150405.000000000")
}

// logRecords keeps the records its handler is given.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

// handler returns a slog.Handler that adds records to l.
func (l *logRecords) handler() slog.Handler { return &recordHandler{l: l} }

type recordHandler struct {
	l     *logRecords
	attrs []slog.Attr // from WithAttrs (groups are flattened)
}

func (h *recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &recordHandler{l: h.l, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}
func (h *recordHandler) Handle(_ context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(h.attrs...)
	h.l.mu.Lock()
	h.l.records = append(h.l.records, r)
	h.l.mu.Unlock()
	return nil
}

// mentioning returns the records at level or above whose message or
// attribute values contain s, each as one line.
func (l *logRecords) mentioning(level slog.Level, s string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, r := range l.records {
		if r.Level < level {
			continue
		}
		line := r.Level.String() + " " + r.Message
		r.Attrs(func(a slog.Attr) bool {
			line += " " + a.Key + "=" + a.Value.String()
			return true
		})
		if strings.Contains(line, s) {
			out = append(out, line)
		}
	}
	return out
}

// eventually polls cond every 10ms until it holds or d has passed.
func eventually(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}
