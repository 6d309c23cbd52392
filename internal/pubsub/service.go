package pubsub

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Mode chooses how object channels are subscribed and published on Redis
// Cluster (the root's PubSubMode).
type Mode int

const (
	// ModeAuto uses sharded pub/sub on a Cluster that supports it, probed
	// once with PUBSUB SHARDNUMSUB, and plain pub/sub otherwise.
	ModeAuto Mode = iota
	// ModeSharded always uses sharded pub/sub on Cluster.
	ModeSharded
	// ModePlain always uses plain SUBSCRIBE/PUBLISH.
	ModePlain
)

// Key names a subscription: a channel, sharded or not.
type Key struct {
	Name    string
	Sharded bool
}

// Object is an object's channel as the object publishes it: by the mode in
// force (sharded on a Cluster that supports it), or, when Plain, with
// PUBLISH whatever the mode, for an object whose scripts run in another slot
// than the channel's, where SPUBLISH could not reach it (a latch whose name
// carries its own hash tag). The object decides; the service keeps no list.
type Object struct {
	Name  string
	Plain bool
}

// Config is what a Service needs from its client. Redis is required; the
// other fields may be left zero.
type Config struct {
	Redis    redis.UniversalClient
	Cluster  *redis.ClusterClient // the same client on Redis Cluster; nil otherwise
	Presence string               // this client's presence channel (single node or Sentinel), "" for none: see presenceLocked
	Mode     Mode
	Health   time.Duration // idle time after which a connection is pinged; > 0
	Linger   time.Duration // how long an unused channel stays subscribed; 0: not at all
	// Report is told about connections lost, replaced and re-routed. It
	// runs on the service's goroutines, never under its lock. Nil: nobody.
	Report func(Report)
	// Closed is the error waits return once the service is closed.
	Closed error
}

// Service multiplexes every channel a client listens to over one go-redis
// PubSub (one connection), or, with sharded pub/sub on Cluster, one per
// master node. Subscriptions are reference-counted: the first local waiter
// on a channel subscribes, the last one to leave unsubscribes (after a
// linger). go-redis re-dials a dropped connection and re-subscribes every
// channel; each re-subscription confirmation wakes all waiters of the
// channel so that a message lost while disconnected costs one extra poll,
// not a hang. A Service is safe for concurrent use.
//
// The service is split by job:
//   - service.go: the type, construction, close, the mode probe;
//   - conn.go: connections and their write queues, the receive loop,
//     replacement of connections, the presence check;
//   - reroute.go: moving a channel to the connection of the node serving it;
//   - channels.go: channel entries, reference counts, linger, listeners;
//   - waiters.go: object subscriptions, the waiter queue, wake policies, the
//     cross-client hand-off and the yield window.
//
// Goroutines. Each connection's receive loop (receive) is started by the
// first write sent on it and returns when the service closes or the
// connection is retired; a re-route after an unasked sunsubscribe runs on a
// goroutine of its own. Both are counted in loops, which Close waits for.
// Writes (SUBSCRIBE, UNSUBSCRIBE) run on no goroutine of their own: the
// caller that queued the first of a connection's pending writes sends them
// all (drain). Linger and hand-off timers run their callbacks (expire,
// fireDelayed) on timer goroutines; Close stops them, and a callback that
// already fired finds its entry forgotten or its timer field cleared and
// does nothing.
//
// Locking. mu guards conns, backoffs, entries, closed, the counters, every
// field of every channelEntry and psConn except the immutable ones (key,
// ps, ready), and the waiter queues; sharded is atomic; the other fields are
// set by New and never written again (closing is closed once, under mu). A
// subscription's fields are set when it is made, except since, which only
// the goroutine waiting on it writes. mu is the only mutex of the service,
// so there is no lock order, and no function releases it for its caller: a
// section that decides network writes queues them and returns them as
// effects, which the caller carries out with flush after mu.Unlock().
// Wake-ups are delivered under mu, as channel sends that never block: a
// waiter's channel has room for its single wake-up, ready is closed once,
// and a Listener's methods must not block. All of this is unexported, so
// nothing outside the package can take mu or touch what it guards.
type Service struct {
	rdb      redis.UniversalClient
	cluster  *redis.ClusterClient // nil outside Cluster
	mode     Mode
	sharded  atomic.Int32  // object channels: 0 not probed yet, 1 plain, 2 sharded
	health   time.Duration // idle time after which a connection is pinged
	linger   time.Duration // how long an unused channel stays subscribed
	presence string        // this client's presence channel; "" unless single node or Sentinel
	report   func(Report)
	errClose error         // what waits return after close
	closing  chan struct{} // closed by Close
	loops    sync.WaitGroup

	mu       sync.Mutex
	conns    map[connKey]*psConn
	backoffs map[connKey]time.Duration // receive back-off carried over to a replacing connection
	entries  map[Key]*channelEntry
	closed   bool
	rerouted int // channels moved to another node's connection: see Stats
	replaced int // connections replaced: see Stats
	redialed int // plain connections go-redis dialled again after a failure
}

// New returns a service for cfg. It does no I/O: connections are made by the
// first subscription.
func New(cfg Config) *Service {
	return &Service{
		presence: cfg.Presence,
		rdb:      cfg.Redis,
		cluster:  cfg.Cluster,
		mode:     cfg.Mode,
		health:   cfg.Health,
		linger:   cfg.Linger,
		report:   cfg.Report,
		errClose: cfg.Closed,
		conns:    make(map[connKey]*psConn),
		backoffs: make(map[connKey]time.Duration),
		entries:  make(map[Key]*channelEntry),
		closing:  make(chan struct{}),
	}
}

// ObjectsSharded reports whether object channels use sharded pub/sub,
// probing the cluster once in ModeAuto. A probe that fails for a transient
// reason (network, timeout, the context) is not remembered and returns its
// error: a waiter must not subscribe plain while the channel's publishers,
// once the probe succeeds, publish sharded.
func (p *Service) ObjectsSharded(ctx context.Context) (bool, error) {
	if sharded, known := p.Known(); known {
		return sharded, nil
	}
	sharded := false
	switch {
	case p.cluster == nil || p.mode == ModePlain:
	case p.mode == ModeSharded:
		sharded = true
	default:
		err := p.cluster.Do(ctx, "pubsub", "shardnumsub").Err()
		if err != nil && ctx.Err() != nil || isTransient(err) {
			return false, err
		}
		sharded = err == nil
	}
	if sharded {
		p.sharded.Store(2)
	} else {
		p.sharded.Store(1)
	}
	return sharded, nil
}

// Known reports ObjectsSharded's answer without I/O: known is false until a
// probe succeeded.
func (p *Service) Known() (sharded, known bool) {
	switch p.sharded.Load() {
	case 1:
		return false, true
	case 2:
		return true, true
	}
	return false, false
}

// isTransient reports an error that says nothing about the server's
// features (a network error or timeout).
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// objectKey is the subscription key of an object channel, by the mode in
// force (plain until probed) unless the channel is plain.
func (p *Service) objectKey(ch Object) Key {
	return Key{Name: ch.Name, Sharded: !ch.Plain && p.sharded.Load() == 2}
}

// Closing returns a channel closed when Close begins.
func (p *Service) Closing() <-chan struct{} { return p.closing }

// Close stops the receive loops, wakes every waiter with Config.Closed and
// waits for the loops to return. Later calls do nothing.
func (p *Service) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	close(p.closing)
	for _, e := range p.entries {
		e.cancelDelayed()
		if e.idle != nil {
			e.idle.Stop()
			e.idle = nil
		}
	}
	conns := make([]*psConn, 0, len(p.conns))
	for _, c := range p.conns {
		conns = append(conns, c)
	}
	p.mu.Unlock()
	for _, c := range conns {
		_ = c.ps.Close()
	}
	p.loops.Wait()
}

// Stats is a snapshot of the service's counts.
type Stats struct {
	Channels    int // channels subscribed, lingering ones included
	Connections int // pub/sub connections open
	Rerouted    int // channels moved to another node's connection so far
	Replaced    int // connections replaced so far
	Redialed    int // plain connections dialled again by go-redis so far
}

// Stats returns a snapshot of the service's counts. It does no I/O.
func (p *Service) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Channels: len(p.entries), Connections: len(p.conns), Rerouted: p.rerouted, Replaced: p.replaced, Redialed: p.redialed}
}

// Waiters returns how many local waits block on object channel ch now, or
// -1 when the client does not listen to ch or Redis has not confirmed it
// yet. It does no I/O.
func (p *Service) Waiters(ch Object) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[p.objectKey(ch)]; e != nil && e.confirmed {
		return len(e.waiters)
	}
	return -1
}

// ReportKind says what a Report is about.
type ReportKind int

const (
	// Lost: a connection failed (Err says why); its channels may have
	// missed messages.
	Lost ReportKind = iota
	// Replaced: a connection was replaced, or dialled again by go-redis,
	// and its channels subscribed anew.
	Replaced
	// Rerouted: channels moved to the connection of another node (Node, the
	// first one's).
	Rerouted
)

// Report is one event of the service's connections, for Config.Report.
type Report struct {
	Kind     ReportKind
	Node     string // the connection's node; "" for the plain connection outside Cluster
	Channels int    // channels concerned
	Err      error  // with Lost: why
}

// tell hands r to Config.Report, if any. Caller does not hold p.mu.
func (p *Service) tell(r Report) {
	if p.report != nil {
		p.report(r)
	}
}
