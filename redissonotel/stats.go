package redissonotel

import (
	"context"
	"strconv"
	"sync"

	"github.com/goredisson/redisson"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// StatsReader is what the gauges read: *redisson.Client implements it.
type StatsReader interface {
	Stats() redisson.Stats
}

// ClientOption configures one RegisterClient call.
type ClientOption func(*clientConfig)

type clientConfig struct {
	name string
}

// WithClientName sets the value of the gauges' redisson.client attribute
// for the registered client. Default: the client's ID() (its uuid, the one
// in its lock owners "<client uuid>:<n>") when it has one, else
// "client_<n>" in registration order. Clients registered under one name
// share one series, their Stats added up: WithClientName("all") on every
// client gives the single summed series of earlier versions. The name is
// made a label value as every other one (lower case, no spaces: "order
// service" becomes "order_service").
func WithClientName(name string) ClientOption {
	return func(c *clientConfig) { c.name = name }
}

// RegisterClient makes the Observer's gauges (redisson.leases.held,
// redisson.waiters, redisson.pubsub.channels, redisson.pubsub.connections,
// redisson.cache.size) and the caches' counters (redisson.cache.hits,
// .misses, .loads, .load.errors, .evictions, .invalidations,
// .stale_serves) read c.Stats() at each collection, one series per registered client,
// told apart by the redisson.client attribute (see WithClientName); with no
// client registered they report nothing. It returns the function that
// unregisters c, safe to call more than once; call it before or after
// c.Close (Stats of a closed client reads its final state).
func (o *Observer) RegisterClient(c StatsReader, opts ...ClientOption) (unregister func()) {
	var cfg clientConfig
	for _, opt := range opts {
		if opt != nil {
			opt(&cfg)
		}
	}
	return o.stats.add(c, cfg.name)
}

// statsSources are the clients registered for the gauges.
type statsSources struct {
	mu      sync.Mutex
	next    int
	clients map[int]statsSource
}

// statsSource is one registered client and the attributes of its series.
type statsSource struct {
	r     StatsReader
	name  string
	attrs metric.ObserveOption
}

func (s *statsSources) add(c StatsReader, name string) func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.clients == nil {
		s.clients = map[int]statsSource{}
	}
	id := s.next
	s.next++
	if name == "" {
		if ider, ok := c.(interface{ ID() string }); ok {
			name = ider.ID()
		}
	}
	if name == "" {
		name = "client_" + strconv.Itoa(id)
	}
	name = labelValue(name)
	s.clients[id] = statsSource{r: c, name: name,
		attrs: metric.WithAttributeSet(attribute.NewSet(AttrClient.String(name)))}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			delete(s.clients, id)
			s.mu.Unlock()
		})
	}
}

// clientStats is the Stats of the clients registered under one name.
type clientStats struct {
	attrs metric.ObserveOption
	st    redisson.Stats
}

// byClient returns the registered clients' Stats, added up per name.
func (s *statsSources) byClient() map[string]*clientStats {
	s.mu.Lock()
	sources := make([]statsSource, 0, len(s.clients))
	for _, c := range s.clients {
		sources = append(sources, c)
	}
	s.mu.Unlock()
	out := make(map[string]*clientStats, len(sources))
	for _, src := range sources { // outside s.mu: Stats takes the client's own mutexes
		st := src.r.Stats()
		t := out[src.name]
		if t == nil {
			t = &clientStats{attrs: src.attrs}
			out[src.name] = t
		}
		t.st.LeasesHeld += st.LeasesHeld
		t.st.Waiters += st.Waiters
		t.st.Channels += st.Channels
		t.st.PubSubConns += st.PubSubConns
		t.st.Cache.Hits += st.Cache.Hits
		t.st.Cache.Misses += st.Cache.Misses
		t.st.Cache.Loads += st.Cache.Loads
		t.st.Cache.LoadErrors += st.Cache.LoadErrors
		t.st.Cache.Evictions += st.Cache.Evictions
		t.st.Cache.Invalidations += st.Cache.Invalidations
		t.st.Cache.StaleServes += st.Cache.StaleServes
		t.st.Cache.Size += st.Cache.Size
		t.st.Cache.Writes += st.Cache.Writes
		t.st.Cache.WriteErrors += st.Cache.WriteErrors
		t.st.Cache.WritesDropped += st.Cache.WritesDropped
		t.st.Cache.WriteQueue += st.Cache.WriteQueue
	}
	return out
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
	held := gauge(MetricLeasesHeld, "{lease}", "Holds of locks and permits the client has now.")
	waiters := gauge(MetricWaiters, "{waiter}", "Callers blocked now on a lock, semaphore or latch.")
	channels := gauge(MetricChannels, "{channel}", "Pub/sub channels subscribed now.")
	conns := gauge(MetricConnections, "{connection}", "Pub/sub connections open now.")
	size := gauge(MetricCacheSize, "{entry}", "Entries in the local caches now.")
	counter := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := m.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		if err != nil || c == nil {
			otel.Handle(err)
			c, _ = noopMeter.Int64ObservableCounter(name)
		}
		return c
	}
	hits := counter(MetricCacheHits, "{read}", "Reads served from a local cache.")
	misses := counter(MetricCacheMisses, "{read}", "Reads a local cache could not serve.")
	loads := counter(MetricCacheLoads, "{load}", "Read-through loader runs.")
	loadErrors := counter(MetricCacheLoadErrors, "{load}", "Read-through loader runs that failed.")
	evictions := counter(MetricCacheEvictions, "{entry}", "Entries a local cache evicted for its size or expiry.")
	invalidations := counter(MetricCacheInvalidations, "{message}", "Invalidations a local cache received from other instances.")
	stale := counter(MetricCacheStaleServes, "{read}", "Reads served stale while the connection was lost.")
	writes := counter(MetricCacheWrites, "{key}", "Keys a cache's Writer wrote or deleted.")
	writeErrors := counter(MetricCacheWriteErrors, "{call}", "Writer calls that failed.")
	writesDropped := counter(MetricCacheWritesDropped, "{key}", "Write-behind keys the Writer never got.")
	writeQueue := gauge(MetricCacheWriteQueue, "{key}", "Keys in write-behind queues now.")
	_, err := m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		for _, c := range s.byClient() {
			obs.ObserveInt64(held, int64(c.st.LeasesHeld), c.attrs)
			obs.ObserveInt64(waiters, int64(c.st.Waiters), c.attrs)
			obs.ObserveInt64(channels, int64(c.st.Channels), c.attrs)
			obs.ObserveInt64(conns, int64(c.st.PubSubConns), c.attrs)
			cs := c.st.Cache
			obs.ObserveInt64(size, int64(cs.Size), c.attrs)
			obs.ObserveInt64(hits, int64(cs.Hits), c.attrs)
			obs.ObserveInt64(misses, int64(cs.Misses), c.attrs)
			obs.ObserveInt64(loads, int64(cs.Loads), c.attrs)
			obs.ObserveInt64(loadErrors, int64(cs.LoadErrors), c.attrs)
			obs.ObserveInt64(evictions, int64(cs.Evictions), c.attrs)
			obs.ObserveInt64(invalidations, int64(cs.Invalidations), c.attrs)
			obs.ObserveInt64(stale, int64(cs.StaleServes), c.attrs)
			obs.ObserveInt64(writes, int64(cs.Writes), c.attrs)
			obs.ObserveInt64(writeErrors, int64(cs.WriteErrors), c.attrs)
			obs.ObserveInt64(writesDropped, int64(cs.WritesDropped), c.attrs)
			obs.ObserveInt64(writeQueue, int64(cs.WriteQueue), c.attrs)
		}
		return nil
	}, held, waiters, channels, conns, size, hits, misses, loads, loadErrors, evictions, invalidations, stale,
		writes, writeErrors, writesDropped, writeQueue)
	if err != nil {
		otel.Handle(err)
	}
}
