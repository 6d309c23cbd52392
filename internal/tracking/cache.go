package tracking

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
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
}

// Stats is a snapshot of a Cache's counters.
type Stats struct {
	Hits, Misses, Invalidations, Flushes, Evictions uint64
	Entries                                         int
	Live                                            bool // the tracking connection is established
}

// Cache is a client-side cache of one Redis server's keys. It is safe for
// concurrent use. It owns one goroutine, started by New and stopped by
// Close.
type Cache struct {
	*store
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	ps     *redis.PubSub // the current tracking connection's, for Close
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
	ps := c.ps
	c.mu.Unlock()
	c.cancel()
	if ps != nil {
		_ = ps.Close()
	}
	<-c.done
	c.setLive(false)
}

// run keeps a tracking connection established until Close, with a backoff
// between failed attempts.
func (c *Cache) run() {
	defer close(c.done)
	backoff := 10 * time.Millisecond
	reported := false // the failures since the last established connection were reported
	for c.ctx.Err() == nil {
		established, err := c.session()
		c.setLive(false)
		if c.ctx.Err() != nil {
			return
		}
		if established {
			backoff, reported = 10*time.Millisecond, false
		}
		if c.cfg.Event != nil && !reported {
			c.cfg.Event("tracking connection lost", err) // once per outage, not per retry
			reported = true
		}
		select {
		case <-c.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

var errMoved = errors.New("tracking: the tracking connection is not on the master")

// session dials one tracking connection and serves its invalidations until
// it fails; established reports whether it went live.
func (c *Cache) session() (established bool, err error) {
	name := "redisson-tracking-" + uuid.NewString()[:8]
	var id atomic.Int64
	opt := *c.cfg.Server
	opt.Protocol = 2
	opt.ClientName = name
	opt.PoolSize = 1
	opt.MaxRetries = -1
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		if id.Load() != 0 {
			return errors.New("tracking: reconnection refused") // a new connection is a new session
		}
		n, err := cn.ClientID(ctx).Result()
		if err != nil {
			return err
		}
		args := []any{"client", "tracking", "on", "redirect", n, "bcast"}
		for _, p := range c.cfg.Prefixes {
			args = append(args, "prefix", p)
		}
		if err := cn.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("tracking: CLIENT TRACKING: %w", err)
		}
		id.Store(n)
		return nil
	}
	rdb := redis.NewClient(&opt)
	defer rdb.Close()
	ps := rdb.Subscribe(c.ctx, InvalidateChannel)
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		_ = ps.Close()
		return false, nil
	}
	c.ps = ps
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.ps = nil
		c.mu.Unlock()
		_ = ps.Close()
	}()

	hc := c.cfg.HealthCheck
	pinged := false
	lastCheck := time.Now()
	for {
		msg, err := ps.ReceiveTimeout(c.ctx, hc)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || pinged || !established {
				return established, err
			}
			if err := ps.Ping(c.ctx); err != nil {
				return established, err
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Kind == "subscribe" && m.Channel == InvalidateChannel && !established {
				established = true
				c.connected.Add(1)
				c.setLive(true)
			}
		case *redis.Message:
			if m.Channel != InvalidateChannel {
				continue
			}
			if len(m.PayloadSlice) == 0 {
				c.flush() // FLUSHALL / FLUSHDB reach tracking as one null message
				continue
			}
			for _, k := range m.PayloadSlice {
				c.invalidate(k)
			}
		}
		if established && time.Since(lastCheck) >= hc {
			lastCheck = time.Now()
			if err := c.onMaster(id.Load(), name); err != nil {
				return established, err
			}
		}
	}
}

// onMaster checks, through the client the reads go through, that the
// tracking connection is a client of the same server. An error of the
// check itself is not a loss: the tracking connection fails by itself if
// the server is gone.
func (c *Cache) onMaster(id int64, name string) error {
	if c.cfg.Master == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.HealthCheck)
	defer cancel()
	line, err := c.cfg.Master.Do(ctx, "client", "list", "id", id).Text()
	if err != nil {
		return nil
	}
	if !strings.Contains(line, " name="+name+" ") {
		return errMoved
	}
	return nil
}
