package tracking

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// InvalidateChannel is the channel the server sends invalidations on to a
// RESP2 connection.
const InvalidateChannel = "__redis__:invalidate"

// Config configures a Cache.
type Config struct {
	// Server is the go-redis options of the server whose keys are cached
	// (a single node's, or a Sentinel failover client's, whose Dialer
	// finds the master). New copies them; they must not be the options of
	// a client in use (go-redis writes those while it connects): pass a
	// copy taken before the client's first command.
	Server *redis.Options
	// Master is the client the reads and writes go through; the health
	// check asks it (CLIENT LIST ID) whether the tracking connection is
	// on the server it talks to, which a Sentinel failover changes.
	Master interface {
		Do(ctx context.Context, args ...any) *redis.Cmd
	}
	// MaxEntries bounds the values held (approximately: per shard).
	MaxEntries int
	// TTL bounds how long a value is served; 0: until invalidated.
	TTL time.Duration
	// Prefixes are the BCAST prefixes the server reports writes of; none:
	// every key.
	Prefixes []string
	// HealthCheck is how long the tracking connection may stay silent
	// before it is pinged (and declared lost if the ping is not answered
	// within as long again), and how often it is checked to be on the
	// master.
	HealthCheck time.Duration
	// Event, if set, is told of a lost tracking connection, or of the
	// first failure to establish one: once per outage, not at every retry.
	Event func(msg string, err error)
	// Nodes, if set, lists the addresses of the masters whose keys are
	// cached (a Redis Cluster's): each gets a tracking connection of its
	// own, dialled with Server's options and its address, since a master
	// reports the writes of its own keys only. Values are stored only
	// while every one of them is established; the list is asked again
	// every HealthCheck, and a change (a failover, a master added or
	// removed), like the loss of any one connection, ends them all and
	// drops every value. Master is not used then.
	Nodes func(ctx context.Context) ([]string, error)
}

// Stats is a snapshot of a Cache's counters.
type Stats struct {
	Hits, Misses, Invalidations, Flushes, Evictions uint64
	Entries                                         int
	Live                                            bool // the tracking connection is established
}

// Cache is a client-side cache of one Redis server's keys, or of a Redis
// Cluster's (Config.Nodes). It is safe for concurrent use. It owns one
// goroutine, and one more per tracking connection, started by New and
// stopped by Close.
type Cache struct {
	*store
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	cur    *round // the current tracking connections, for Close
	closed bool

	connected atomic.Uint64 // tracking connections established
}

// New starts a Cache: its goroutine dials the tracking connection, and
// values are stored from the moment it is established.
func New(cfg Config) *Cache {
	srv := *cfg.Server
	cfg.Server = &srv
	ctx, cancel := context.WithCancel(context.Background())
	c := &Cache{store: newStore(cfg.MaxEntries, cfg.TTL), cfg: cfg, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	go c.run()
	return c
}

// Get returns the cached value of key (fieldName "" for a string key, a
// hash field's name otherwise).
func (c *Cache) Get(key, fieldName string) (any, bool) { return c.get(key, fieldName) }

// Begin registers a read of key's field from Redis; its Store caches the
// value read if nothing changed meanwhile. A key under none of the
// Prefixes is never cached.
func (c *Cache) Begin(key, fieldName string) Load {
	if !c.Covers(key) {
		return Load{}
	}
	return c.begin(key, fieldName)
}

// Covers reports whether key is under one of the Prefixes (any key when
// there are none).
func (c *Cache) Covers(key string) bool {
	if len(c.cfg.Prefixes) == 0 {
		return true
	}
	for _, p := range c.cfg.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// WriteBegin drops key before a write of this process is sent, and keeps
// every read from storing key until WriteEnd.
func (c *Cache) WriteBegin(key string) { c.writeBegin(key) }

// WriteEnd ends a write begun by WriteBegin, whatever its outcome.
func (c *Cache) WriteEnd(key string) { c.writeEnd(key) }

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	return Stats{
		Hits: c.hits.Load(), Misses: c.misses.Load(), Invalidations: c.invalidations.Load(),
		Flushes: c.flushes.Load(), Evictions: c.evictions.Load(), Entries: c.size(),
		Live: c.state.Load()&1 == 1,
	}
}

// Connections returns how many tracking connections were established.
func (c *Cache) Connections() uint64 { return c.connected.Load() }

// Close stops the goroutine, closes the tracking connection and drops every
// value; later reads store nothing. It is safe to call more than once.
func (c *Cache) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	r := c.cur
	c.mu.Unlock()
	c.cancel()
	if r != nil {
		r.end()
	}
	<-c.done
	c.setLive(false)
}
