package redissonotel

import (
	"context"
	"sync"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
)

// StatsReader is what the gauges read: *redisson.Client implements it.
type StatsReader interface {
	Stats() redisson.Stats
}

// RegisterClient makes the Observer's gauges (redisson.leases.held,
// redisson.waiters, redisson.pubsub.channels, redisson.pubsub.connections)
// read c.Stats() at each collection, summed over the registered clients; with
// no client registered they report nothing. It returns the function that
// unregisters c, safe to call more than once; call it before or after
// c.Close (Stats of a closed client reads its final state).
func (o *Observer) RegisterClient(c StatsReader) (unregister func()) {
	return o.stats.add(c)
}

// statsSources are the clients registered for the gauges.
type statsSources struct {
	mu      sync.Mutex
	next    int
	clients map[int]StatsReader
}

func (s *statsSources) add(c StatsReader) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[int]StatsReader{}
	}
	id := s.next
	s.next++
	s.clients[id] = c
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.clients, id)
			s.mu.Unlock()
		})
	}
}

// sum returns the registered clients' Stats added up, and false when none
// is registered.
func (s *statsSources) sum() (redisson.Stats, bool) {
	s.mu.Lock()
	readers := make([]StatsReader, 0, len(s.clients))
	for _, c := range s.clients {
		readers = append(readers, c)
	}
	s.mu.Unlock()
	var t redisson.Stats
	for _, c := range readers { // outside s.mu: Stats takes the client's own mutexes
		st := c.Stats()
		t.LeasesHeld += st.LeasesHeld
		t.Waiters += st.Waiters
		t.Channels += st.Channels
		t.PubSubConns += st.PubSubConns
	}
	return t, len(readers) > 0
}

// register creates the gauges on m and the callback that reads them.
func (s *statsSources) register(m, noopMeter metric.Meter) {
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || g == nil {
			otel.Handle(err)
			g, _ = noopMeter.Int64ObservableGauge(name)
		}
		return g
	}
	held := gauge(MetricLeasesHeld, "{lease}", "Holds of locks and permits the registered clients have now.")
	waiters := gauge(MetricWaiters, "{waiter}", "Callers blocked now on a lock, semaphore or latch.")
	channels := gauge(MetricChannels, "{channel}", "Pub/sub channels subscribed now.")
	conns := gauge(MetricConnections, "{connection}", "Pub/sub connections open now.")
	_, err := m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		st, ok := s.sum()
		if !ok {
			return nil
		}
		obs.ObserveInt64(held, int64(st.LeasesHeld))
		obs.ObserveInt64(waiters, int64(st.Waiters))
		obs.ObserveInt64(channels, int64(st.Channels))
		obs.ObserveInt64(conns, int64(st.PubSubConns))
		return nil
	}, held, waiters, channels, conns)
	if err != nil {
		otel.Handle(err)
	}
}
