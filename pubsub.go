package redisson

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// PubSubMode chooses how object channels (locks, semaphores, latches) are
// subscribed and published on Redis Cluster.
type PubSubMode int

const (
	// PubSubAuto uses sharded pub/sub (SSUBSCRIBE/SPUBLISH) on a Redis
	// Cluster that supports it (Redis 7+, probed once with PUBSUB
	// SHARDNUMSUB) and plain pub/sub otherwise, as Redisson's default
	// shardedSubscriptionMode=AUTO does. It is the default.
	PubSubAuto PubSubMode = iota
	// PubSubSharded always uses sharded pub/sub on Cluster.
	PubSubSharded
	// PubSubPlain always uses plain SUBSCRIBE/PUBLISH, which a Cluster
	// broadcasts to every node.
	PubSubPlain
)

// chanKey names a subscription: a channel, sharded or not.
type chanKey struct {
	name    string
	sharded bool
}

// objectChannel is an object's channel as the object publishes it: by the
// mode in force (sharded on a Cluster that supports it), or, when plain, with
// PUBLISH whatever the mode, for an object whose scripts run in another slot
// than the channel's, where SPUBLISH could not reach it (a latch whose name
// carries its own hash tag). The object decides; the service keeps no list.
type objectChannel struct {
	name  string
	plain bool
}

// pubsubService multiplexes every channel this client listens to over one
// go-redis PubSub (one connection), or, with sharded pub/sub on Cluster, one
// per master node. Subscriptions are reference-counted: the first local
// waiter on a channel subscribes, the last one to leave unsubscribes (after
// a linger). go-redis re-dials a dropped connection and re-subscribes every
// channel; each re-subscription confirmation wakes all waiters of the channel
// so that a message lost while disconnected costs one extra poll, not a hang.
//
// The service is split by job:
//   - pubsub.go: the type, construction, close, the mode probe and the
//     publish command of object scripts;
//   - pubsub_conn.go: connections and their write queues, the receive loop,
//     replacement and re-routing of connections, the presence check;
//   - pubsub_channels.go: channel entries, reference counts, linger, topic
//     fan-out;
//   - pubsub_waiters.go: object subscriptions, the waiter queue, wake
//     policies, the cross-client hand-off and the yield window.
//
// Goroutines. Each connection's receive loop (receive) is started by the
// first write sent on it and returns when the service closes or the
// connection is retired; a re-route after an unasked sunsubscribe runs on a
// goroutine of its own. Both are counted in loops, which close waits for.
// Writes (SUBSCRIBE, UNSUBSCRIBE) run on no goroutine of their own: the
// caller that queued the first of a connection's pending writes sends them
// all (drain). Linger and hand-off timers run their callbacks (expire,
// fireDelayed) on timer goroutines; close stops them, and a callback that
// already fired finds its entry forgotten or its timer field cleared and
// does nothing.
//
// Locking. mu guards conns, backoffs, entries, closed, the counters, every
// field of every channelEntry and psConn except the immutable ones (key,
// ps, ready), and the waiter queues; sharded is atomic; the other fields are
// set by newPubSub and never written again (closing is closed once, under
// mu). A subscription's fields are set when it is made, except since,
// which only the goroutine waiting on it writes; a listener's dropped count
// is atomic. mu is the only mutex of the service, so there is no lock
// order, and no function releases it for its caller: a section that
// decides network writes queues them and returns them as effects, which the
// caller carries out with flush after mu.Unlock(). Wake-ups are delivered
// under mu, as channel sends that never block: a waiter's channel has room
// for its single wake-up, a listener's send is dropped when its buffer is
// full, ready is closed once.
//
// Topics use the same connections: a topic's local subscribers are
// listeners of its channel entry, each with its own buffer. So do the
// delayed queues' movers, as listeners that are also told when their
// channel is subscribed again after a reconnect.
type pubsubService struct {
	rdb      redis.UniversalClient
	cluster  *redis.ClusterClient // nil outside Cluster
	mode     PubSubMode
	sharded  atomic.Int32  // object channels: 0 not probed yet, 1 plain, 2 sharded
	health   time.Duration // idle time after which a connection is pinged
	linger   time.Duration // how long an unused channel stays subscribed
	presence string        // this client's presence channel; "" unless single node or Sentinel
	closing  chan struct{} // closed by close
	loops    sync.WaitGroup

	mu       sync.Mutex
	conns    map[connKey]*psConn
	backoffs map[connKey]time.Duration // receive back-off carried over to a replacing connection
	entries  map[chanKey]*channelEntry
	closed   bool
	rerouted int // channels moved to another node's connection: see stats
	replaced int // connections replaced: see stats
	redialed int // plain connections go-redis dialled again after a failure

	emit *emitter // set by New before first use
}

func newPubSub(rdb redis.UniversalClient, topo topology, id string, mode PubSubMode, health, linger time.Duration) *pubsubService {
	presence := ""
	if topo.single {
		presence = "redisson_go_presence:" + id
	}
	return &pubsubService{
		presence: presence,
		rdb:      rdb,
		cluster:  topo.cluster,
		mode:     mode,
		health:   health,
		linger:   linger,
		conns:    make(map[connKey]*psConn),
		backoffs: make(map[connKey]time.Duration),
		entries:  make(map[chanKey]*channelEntry),
		closing:  make(chan struct{}),
	}
}

// objectsSharded reports whether object channels use sharded pub/sub,
// probing the cluster once in PubSubAuto mode. A probe that fails for a
// transient reason (network, timeout, the context) is not remembered and
// returns its error: a waiter must not subscribe plain while the channel's
// publishers, once the probe succeeds, publish sharded.
func (p *pubsubService) objectsSharded(ctx context.Context) (bool, error) {
	switch p.sharded.Load() {
	case 1:
		return false, nil
	case 2:
		return true, nil
	}
	sharded := false
	switch {
	case p.cluster == nil || p.mode == PubSubPlain:
	case p.mode == PubSubSharded:
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

// isTransient reports an error that says nothing about the server's
// features (a network error or timeout).
func isTransient(err error) bool {
	if err == nil {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

// publishArg is the publish command object scripts must use: "spublish"
// when object channels are sharded, "publish" otherwise (also while the
// probe fails: the script call then most likely fails the same way).
func (p *pubsubService) publishArg(ctx context.Context) any {
	if sharded, _ := p.objectsSharded(ctx); sharded {
		return "spublish"
	}
	return "publish"
}

// publishArgBackground is publishArg for the client's own background work
// (the watchdog), probing with a bounded context of its own.
func (p *pubsubService) publishArgBackground() any {
	switch p.sharded.Load() { // known after the first probe: nothing to send
	case 1:
		return "publish"
	case 2:
		return "spublish"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return p.publishArg(ctx)
}

// objectKey is the subscription key of an object channel, by the mode in
// force (plain until probed) unless the channel is plain.
func (p *pubsubService) objectKey(ch objectChannel) chanKey {
	return chanKey{name: ch.name, sharded: !ch.plain && p.sharded.Load() == 2}
}

// close stops the receive loops, wakes every waiter with ErrClientClosed and
// waits for the loops to return.
func (p *pubsubService) close() {
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

// pubsubStats is a snapshot of the service's counts.
type pubsubStats struct {
	channels    int // channels subscribed, lingering ones included
	connections int // pub/sub connections open
	rerouted    int // channels moved to another node's connection so far
	replaced    int // connections replaced so far
	redialed    int // plain connections dialled again by go-redis so far
}

// stats returns a snapshot of the service's counts (read by tests).
func (p *pubsubService) stats() pubsubStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return pubsubStats{channels: len(p.entries), connections: len(p.conns), rerouted: p.rerouted, replaced: p.replaced, redialed: p.redialed}
}
