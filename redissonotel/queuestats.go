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

// TopicInspector is what the topic gauges read: *redisson.Client
// implements it.
type TopicInspector interface {
	InspectReliableTopic(ctx context.Context, name string) (redisson.ReliableTopicInfo, error)
}

// RegisterReliableTopic makes the topic gauges (redisson.topic.lag, the
// largest lag of the topic's subscribers, and redisson.topic.subscribers)
// read c.InspectReliableTopic(name) at each collection, one series per
// registered topic (redisson.topic, under the NameMode): one pipeline per
// collection, bounded by 2s; a topic that is absent or fails reports no
// point that time. It returns the function that unregisters it, safe to
// call more than once.
func (o *Observer) RegisterReliableTopic(c TopicInspector, name string) (unregister func()) {
	return o.queues.add(topicSource{c, name})
}

// topicSource is a registered topic among the queue sources.
type topicSource struct {
	c    TopicInspector
	name string
}

func (t topicSource) Name() string { return t.name }

// Stats is unused: a topic is read through its inspector.
func (t topicSource) Stats(context.Context) (redisson.ReliableQueueStats, error) {
	return redisson.ReliableQueueStats{}, nil
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
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || g == nil {
			otel.Handle(err)
			g, _ = noopMeter.Int64ObservableGauge(name)
		}
		return g
	}
	ready := gauge(MetricQueueReady, "{job}", "Jobs in the queue not yet delivered.")
	pending := gauge(MetricQueuePending, "{job}", "Jobs delivered to a worker and not yet settled.")
	delayed := gauge(MetricQueueDelayed, "{job}", "Jobs waiting for their due time (delayed or retrying).")
	dead := gauge(MetricQueueDead, "{job}", "Jobs in the dead letters.")
	lag, err := m.Float64ObservableGauge(MetricQueueLag, metric.WithUnit("s"),
		metric.WithDescription("Age of the oldest job not yet delivered."))
	if err != nil || lag == nil {
		otel.Handle(err)
		lag, _ = noopMeter.Float64ObservableGauge(MetricQueueLag)
	}
	topicLag := gauge(MetricTopicLag, "{message}", "Messages published and not yet delivered to the topic's slowest subscriber.")
	topicSubs := gauge(MetricTopicSubscribers, "{subscriber}", "Subscribers of the topic (consumer groups).")
	_, err = m.RegisterCallback(func(ctx context.Context, obs metric.Observer) error {
		for _, q := range s.list() {
			qctx, cancel := context.WithTimeout(ctx, queueStatsTimeout)
			if t, ok := q.(topicSource); ok {
				info, err := t.c.InspectReliableTopic(qctx, t.name)
				cancel()
				if err == nil {
					set := o.nameSet(AttrTopic, t.name)
					lag := int64(0)
					for _, sub := range info.Subscribers {
						lag = max(lag, sub.Lag)
					}
					obs.ObserveInt64(topicLag, lag, set)
					obs.ObserveInt64(topicSubs, int64(len(info.Subscribers)), set)
				}
				continue
			}
			st, err := q.Stats(qctx)
			cancel()
			if err != nil {
				otel.Handle(err)
				continue
			}
			set := o.nameSet(AttrQueue, q.Name())
			obs.ObserveInt64(ready, st.Ready, set)
			obs.ObserveInt64(pending, st.InFlight, set)
			obs.ObserveInt64(delayed, st.Delayed, set)
			obs.ObserveInt64(dead, st.Dead, set)
			obs.ObserveFloat64(lag, st.OldestReady.Seconds(), set)
		}
		return nil
	}, ready, pending, delayed, dead, lag, topicLag, topicSubs)
	if err != nil {
		otel.Handle(err)
	}
}

// nameSet is the attribute set {key: name} under the NameMode (empty with
// NameDrop).
func (o *Observer) nameSet(key attribute.Key, name string) metric.MeasurementOption {
	var attrs []attribute.KeyValue
	if n, ok := o.name(name); ok {
		attrs = append(attrs, key.String(labelValue(n)))
	}
	return metric.WithAttributeSet(attribute.NewSet(attrs...))
}
