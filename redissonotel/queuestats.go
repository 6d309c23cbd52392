package redissonotel

import (
	"context"
	"sync"
	"time"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// QueueStatsReader is what the queue gauges read: every
// *redisson.ReliableQueue[T] implements it.
type QueueStatsReader interface {
	Name() string
	Stats(ctx context.Context) (redisson.ReliableQueueStats, error)
}

// queueStatsTimeout bounds one queue's Stats at a collection.
const queueStatsTimeout = 2 * time.Second

// RegisterReliableQueue makes the queue gauges (redisson.queue.ready,
// redisson.queue.pending, redisson.queue.delayed, redisson.queue.dead and
// redisson.queue.lag) read q.Stats at each collection, one series per
// registered queue, told apart by redisson.queue (its name, under the
// Observer's NameMode). Each collection costs each registered queue one
// pipeline, and one more round trip when jobs are ready, bounded by 2s; a
// queue whose Stats fails reports no point that time (the error goes to
// otel.Handle). Register a queue once per process, whatever the number of
// workers. It returns the function that unregisters q, safe to call more
// than once.
func (o *Observer) RegisterReliableQueue(q QueueStatsReader) (unregister func()) {
	return o.queues.add(q)
}

// queueSources are the queues registered for the gauges.
type queueSources struct {
	mu     sync.Mutex
	next   int
	queues map[int]QueueStatsReader
}

func (s *queueSources) add(q QueueStatsReader) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.queues == nil {
		s.queues = map[int]QueueStatsReader{}
	}
	id := s.next
	s.next++
	s.queues[id] = q
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.queues, id)
			s.mu.Unlock()
		})
	}
}

func (s *queueSources) list() []QueueStatsReader {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]QueueStatsReader, 0, len(s.queues))
	for _, q := range s.queues {
		out = append(out, q)
	}
	return out
}

// register creates the queue gauges on m and the callback that reads them.
func (s *queueSources) register(o *Observer, m, noopMeter metric.Meter) {
	gauge := func(name, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit("{job}"), metric.WithDescription(desc))
		if err != nil || g == nil {
			otel.Handle(err)
			g, _ = noopMeter.Int64ObservableGauge(name)
		}
		return g
	}
	ready := gauge(MetricQueueReady, "Jobs in the queue not yet delivered.")
	pending := gauge(MetricQueuePending, "Jobs delivered to a worker and not yet settled.")
	delayed := gauge(MetricQueueDelayed, "Jobs waiting for their due time (delayed or retrying).")
	dead := gauge(MetricQueueDead, "Jobs in the dead letters.")
	lag, err := m.Float64ObservableGauge(MetricQueueLag, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest job not yet delivered."))
	if err != nil || lag == nil {
		otel.Handle(err)
		lag, _ = noopMeter.Float64ObservableGauge(MetricQueueLag)
	}
	_, err = m.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		for _, q := range s.list() {
			qctx, cancel := context.WithTimeout(ctx, queueStatsTimeout)
			st, err := q.Stats(qctx)
			cancel()
			if err != nil {
				otel.Handle(err)
				continue
			}
			var attrs []attribute.KeyValue
			if name, ok := o.name(q.Name()); ok {
				attrs = append(attrs, AttrQueue.String(labelValue(name)))
			}
			set := metric.WithAttributeSet(attribute.NewSet(attrs...))
			obs.ObserveInt64(ready, st.Ready, set)
			obs.ObserveInt64(pending, st.InFlight, set)
			obs.ObserveInt64(delayed, st.Delayed, set)
			obs.ObserveInt64(dead, st.Dead, set)
			obs.ObserveFloat64(lag, st.OldestReady.Seconds(), set)
		}
		return nil
	}, ready, pending, delayed, dead, lag)
	if err != nil {
		otel.Handle(err)
	}
}
