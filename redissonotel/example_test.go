package redissonotel_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	"github.com/goredisson/redisson/redissontest"
	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func ExampleNewObserver() {
	mr, err := redissontest.StartEmbedded() // an embedded Redis for the example; use your server's address
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()

	// Your providers; here the SDK with an in-memory exporter and a reader.
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx := context.Background()
	defer tp.Shutdown(ctx)
	defer mp.Shutdown(ctx)

	obs := redissonotel.NewObserver(redissonotel.WithTracerProvider(tp), redissonotel.WithMeterProvider(mp))
	client, err := redisson.New(rdb, &redisson.Options{Observer: obs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	defer obs.RegisterClient(client)() // the gauges read client.Stats()

	ctx, span := tp.Tracer("checkout").Start(ctx, "checkout")
	lock := client.GetLock("order:42")
	if ok, err := lock.TryLock(ctx, 0, 0); err == nil && ok {
		lock.Unlock(ctx)
	}
	span.End()

	for _, s := range spans.GetSpans() {
		fmt.Println(s.Name, "child of checkout:", s.Parent.SpanID() == span.SpanContext().SpanID())
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name == redissonotel.MetricHoldDuration {
			fmt.Println(m.Name, m.Unit, m.Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
		}
	}
	// Output:
	// lock.acquire child of checkout: true
	// lock.release child of checkout: true
	// checkout child of checkout: false
	// redisson.lock.hold.duration s 1
}

// The work layer's series: every Observer counts a queue's jobs by state;
// the queue's gauges (ready, pending, delayed, dead, lag) need the queue
// registered, once per process.
func ExampleObserver_RegisterReliableQueue() {
	mr, err := redissontest.StartEmbedded()
	if err != nil {
		panic(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx := context.Background()
	defer mp.Shutdown(ctx)

	obs := redissonotel.NewObserver(redissonotel.WithMeterProvider(mp))
	client, err := redisson.New(rdb, &redisson.Options{Observer: obs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	emails := redisson.GetReliableQueue[string](client, "emails")
	defer obs.RegisterReliableQueue(emails)()

	if _, _, err := emails.Enqueue(ctx, "welcome alice@example.com"); err != nil {
		panic(err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch m.Name {
		case redissonotel.MetricQueueJobs:
			p := m.Data.(metricdata.Sum[int64]).DataPoints[0]
			state, _ := p.Attributes.Value(redissonotel.AttrJobState)
			fmt.Println(m.Name, state.AsString(), p.Value)
		case redissonotel.MetricQueueReady:
			fmt.Println(m.Name, m.Data.(metricdata.Gauge[int64]).DataPoints[0].Value)
		}
	}
	// Output:
	// redisson.queue.jobs enqueued 1
	// redisson.queue.ready 1
}
