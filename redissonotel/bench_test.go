package redissonotel_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// sdkObserver returns the OpenTelemetry Observer on the SDK: metrics
// aggregated for a reader and, unless exporter is "off" (metrics only),
// every span sampled and handed to an exporter that drops it, batched
// ("batch", as in production) or synchronously ("sync").
func sdkObserver(b *testing.B, exporter string) *redissonotel.Observer {
	sampler, exp := sdktrace.AlwaysSample(), sdktrace.WithSyncer(tracetest.NewNoopExporter())
	switch exporter {
	case "batch":
		exp = sdktrace.WithBatcher(tracetest.NewNoopExporter())
	case "off":
		sampler = sdktrace.NeverSample()
	}
	tp := sdktrace.NewTracerProvider(exp, sdktrace.WithSampler(sampler))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return redissonotel.NewObserver(redissonotel.WithTracerProvider(tp), redissonotel.WithMeterProvider(mp))
}

// tryLockUnlock runs one uncontended TryLock+Unlock and returns how long
// it took.
func tryLockUnlock(b *testing.B, l *redisson.Lock) time.Duration {
	ctx := context.Background()
	start := time.Now()
	ok, err := l.TryLock(ctx, 0, 0)
	if err != nil || !ok {
		b.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := l.Unlock(ctx); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// BenchmarkTryLockUnlock measures an uncontended TryLock+Unlock on a real
// redis-server with no Observer, with one that does nothing (the core's own
// cost of observing) and with the OpenTelemetry one.
func BenchmarkTryLockUnlock(b *testing.B) {
	for _, tc := range []struct {
		name string
		obs  func(b *testing.B) redisson.Observer
	}{
		{"observer=none", func(*testing.B) redisson.Observer { return nil }},
		{"observer=empty", func(*testing.B) redisson.Observer { return emptyObserver{} }},
		{"observer=otel", func(b *testing.B) redisson.Observer { return sdkObserver(b, "batch") }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			l := newClient(b, tc.obs(b), nil, nil).GetLock(uniqueName(b))
			b.ReportAllocs()
			for b.Loop() {
				tryLockUnlock(b, l)
			}
		})
	}
}

// BenchmarkTryLockUnlockPaired compares the same call with and without an
// Observer in one loop: each iteration runs one TryLock+Unlock on a client
// of each (in alternating order), so that the load of a shared machine
// weighs on both alike. It reports the median of each and the overhead of
// the medians (the target for the OpenTelemetry Observer: at most 10%).
// The Observers: OpenTelemetry with spans exported synchronously, batched,
// or not sampled (the metrics alone); and one that does nothing (the core's
// own cost of observing).
func BenchmarkTryLockUnlockPaired(b *testing.B) {
	for _, tc := range []struct {
		name string
		obs  func(b *testing.B) redisson.Observer
	}{
		{"observer=otel-sync", func(b *testing.B) redisson.Observer { return sdkObserver(b, "sync") }},
		{"observer=otel-batch", func(b *testing.B) redisson.Observer { return sdkObserver(b, "batch") }},
		{"observer=otel-metrics-only", func(b *testing.B) redisson.Observer { return sdkObserver(b, "off") }},
		{"observer=empty", func(*testing.B) redisson.Observer { return emptyObserver{} }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			plain := newClient(b, nil, nil, nil).GetLock(uniqueName(b) + ":none")
			observed := newClient(b, tc.obs(b), nil, nil).GetLock(uniqueName(b) + ":observed")
			var none, with []time.Duration
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 {
					none = append(none, tryLockUnlock(b, plain))
					with = append(with, tryLockUnlock(b, observed))
				} else {
					with = append(with, tryLockUnlock(b, observed))
					none = append(none, tryLockUnlock(b, plain))
				}
			}
			n, w := median(none), median(with)
			b.ReportMetric(float64(n.Nanoseconds()), "none-ns/op")
			b.ReportMetric(float64(w.Nanoseconds()), "with-ns/op")
			b.ReportMetric(100*(float64(w)/float64(n)-1), "overhead-%")
		})
	}
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkObserverOperation measures the Observer alone: one
// OperationStart and OperationEnd, as the core calls them per operation.
func BenchmarkObserverOperation(b *testing.B) {
	obs := sdkObserver(b, "batch")
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		op := redisson.Operation{Kind: "lock", Name: "order:42", Op: "lock.acquire", Start: time.Now()}
		octx := obs.OperationStart(ctx, &op)
		op.Duration, op.RoundTrips, op.Outcome = 100*time.Microsecond, 1, redisson.OutcomeAcquired
		obs.OperationEnd(octx, &op)
	}
}

// emptyObserver does nothing: with it a benchmark measures what the core
// spends on observation (the records it fills), apart from OpenTelemetry.
type emptyObserver struct{}

func (emptyObserver) OperationStart(ctx context.Context, _ *redisson.Operation) context.Context {
	return ctx
}
func (emptyObserver) OperationEnd(context.Context, *redisson.Operation) {}
func (emptyObserver) Event(context.Context, *redisson.Event)            {}
