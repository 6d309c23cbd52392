package redisson

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// wake is what a message on a channel asks of the local waiters.
type wake struct {
	n       int           // waiters to wake: n > 0 up to n, n < 0 all, 0 none
	handoff bool          // one waiter across all clients should retry: see pubsubService
	taken   bool          // a waiter just took the object: cancel delayed wake-ups
	age     time.Duration // with taken: how long that waiter had waited (< 0: unknown)
	ignored bool          // not a message for waiters
}

// wakePolicy interprets one message payload.
type wakePolicy func(payload string) wake

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

// connKey names a pub/sub connection: the plain one, or the sharded one of
// a cluster node (addr; empty outside Cluster).
type connKey struct {
	sharded bool
	addr    string
}

// psConn is one go-redis PubSub and its receive loop.
type psConn struct {
	key     connKey
	ps      *redis.PubSub
	started bool // its receive loop runs; guarded by pubsubService.mu
	// writes waiting to be sent, in the order decided, and whether a
	// goroutine is sending them; guarded by pubsubService.mu. See send.
	queue   []func()
	writing bool
	retired bool // replaced: its loop returns at its next read

	// The presence channel (single node or Sentinel only), guarded by
	// pubsubService.mu: whether its SUBSCRIBE was sent, and when Redis last
	// confirmed it.
	presence   bool
	presenceAt time.Time
}

func (c *psConn) subscribe(channels ...string) {
	if c.key.sharded {
		_ = c.ps.SSubscribe(context.Background(), channels...)
	} else {
		_ = c.ps.Subscribe(context.Background(), channels...)
	}
}

func (c *psConn) unsubscribe(channel string) {
	if c.key.sharded {
		_ = c.ps.SUnsubscribe(context.Background(), channel)
	} else {
		_ = c.ps.Unsubscribe(context.Background(), channel)
	}
}

// pubsubService multiplexes every channel this client listens to over one
// go-redis PubSub (one connection), or, with sharded pub/sub on Cluster, one
// per master node. Subscriptions are reference-counted: the
// first local waiter on a channel subscribes, the last one to leave
// unsubscribes. go-redis re-dials a dropped connection and re-subscribes every
// channel; each re-subscription confirmation wakes all waiters of the channel
// so that a message lost while disconnected costs one extra poll, not a hang.
//
// Sharded connections are not left to go-redis's reconnect, which
// re-subscribes all channels in one SSUBSCRIBE (refused across slots) and
// stays on the node it first chose: any error on a sharded connection
// retires it, and its channels are subscribed again, one SSUBSCRIBE each, on
// the connection of the node that now serves their slot. A channel whose
// slot migrated away is unsubscribed by the server (an unasked
// "sunsubscribe"), and subscribed again on its new node the same way.
//
// Hand-off: every client listening to a lock channel receives each unlock
// message, and waking a waiter in each would make all but one of them retry
// in vain. A waiter that acquires after waiting announces it on the channel
// ("taken", with how long it waited). On the next unlock message, a client
// whose longest-waiting local waiter has waited about as long as the last
// winner (or longer) wakes it at once: in a steady queue that is the oldest
// waiter across all clients. The others delay their wake-up by 1 to 3ms and
// cancel it when the taken message arrives first. The result is close to
// global first-come order with about one retry per unlock.
//
// Topics use the same connections: a topic's local subscribers are
// listeners of its channel entry, each with its own buffer.
type pubsubService struct {
	rdb      redis.UniversalClient
	cluster  *redis.ClusterClient // nil outside Cluster
	mode     PubSubMode
	sharded  atomic.Int32  // object channels: 0 not probed yet, 1 plain, 2 sharded
	health   time.Duration // idle time after which a connection is pinged
	linger   time.Duration // how long an unused channel stays subscribed
	mu       sync.Mutex
	conns    map[connKey]*psConn
	backoffs map[connKey]time.Duration // receive back-off carried over to a replacing connection
	entries  map[chanKey]*channelEntry
	closed   bool
	closing  chan struct{} // closed by close
	loops    sync.WaitGroup
	rerouted atomic.Int64 // channels moved to another node's connection (for tests)
	replaced atomic.Int64 // connections replaced (for tests)
	presence string       // this client's presence channel; "" on Cluster
	plain    sync.Map     // object channels that stay plain whatever the mode
}

// channelEntry is the local state of one subscribed channel. Guarded by
// pubsubService.mu.
type channelEntry struct {
	key       chanKey
	conn      *psConn
	policy    wakePolicy // nil for a topic
	listeners []*listener
	refs      int
	seq       uint64 // arrival order of subscriptions
	confirmed bool
	ready     chan struct{} // closed at the first subscribe confirmation
	asked     time.Time     // when SUBSCRIBE was last sent, until confirmed
	waiters   []*waiter     // ordered by subscription arrival
	pending   int           // wake-ups that found no waiter, at most refs
	delayed   *time.Timer   // a hand-off wake-up not yet delivered
	delayedN  int           // how many it wakes
	lastAge   time.Duration // how long the last announced winner had waited
	idle      *time.Timer   // unsubscribes the channel after linger unused
	yieldTill time.Time     // new local callers wait until then before trying
	takenAt   time.Time     // when the last taken message arrived
}

// listener is one local subscriber of a topic: the receive loop hands it
// payloads without blocking, dropping those that find its buffer full.
type listener struct {
	ch      chan string
	dropped atomic.Int64
}

type waiter struct {
	ch    chan struct{}
	seq   uint64
	since time.Time // when its subscription first waited
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return p.publishArg(ctx)
}

// objectKey is the subscription key of an object channel, by the mode in
// force (plain until probed).
func (p *pubsubService) objectKey(channel string) chanKey {
	if _, ok := p.plain.Load(channel); ok {
		return chanKey{name: channel}
	}
	return chanKey{name: channel, sharded: p.sharded.Load() == 2}
}

// keepPlain makes an object channel plain whatever the mode: its scripts
// run in another slot, where SPUBLISH could not reach it.
func (p *pubsubService) keepPlain(channel string) {
	p.plain.Store(channel, struct{}{})
}

// nodeOf returns the address of the master serving channel's slot, for a
// sharded subscription on Cluster; "" otherwise.
func (p *pubsubService) nodeOf(ctx context.Context, key chanKey) (string, error) {
	if !key.sharded || p.cluster == nil {
		return "", nil
	}
	node, err := p.cluster.MasterForKey(ctx, key.name)
	if err != nil {
		return "", err
	}
	return node.Options().Addr, nil
}

// connLocked returns the connection for key, creating it if needed. Caller
// holds p.mu.
func (p *pubsubService) connLocked(key connKey) *psConn {
	if c := p.conns[key]; c != nil {
		return c
	}
	// Subscribe with no channel creates the PubSub without connecting; the
	// first (S)SUBSCRIBE connects, on Cluster to the node of its channel.
	c := &psConn{key: key, ps: p.rdb.Subscribe(context.Background())}
	p.conns[key] = c
	return c
}

// subscription is one local waiter's share of a channel subscription.
type subscription struct {
	p     *pubsubService
	e     *channelEntry
	l     *listener // a topic subscriber's buffer; nil for a waiter
	seq   uint64
	since time.Time // zero until the first wait
}

// subscribe joins an object channel, subscribing in Redis if nobody in
// this client listens to it yet. It does not wait for Redis to confirm: see
// ready.
func (p *pubsubService) subscribe(ctx context.Context, channel string, policy wakePolicy) (*subscription, error) {
	sharded, err := p.objectsSharded(ctx)
	if err != nil {
		return nil, err
	}
	key := chanKey{name: channel, sharded: sharded}
	if _, ok := p.plain.Load(channel); ok {
		key.sharded = false
	}
	return p.subscribeKey(ctx, key, policy, nil)
}

// subscribeKey joins the channel key as a waiter (policy) or as a topic
// listener (l).
func (p *pubsubService) subscribeKey(ctx context.Context, key chanKey, policy wakePolicy, l *listener) (*subscription, error) {
	addr, err := p.nodeOf(ctx, key)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClientClosed
	}
	e := p.entries[key]
	fresh := e == nil
	if fresh {
		e = &channelEntry{key: key, policy: policy, ready: make(chan struct{}), asked: time.Now()}
		e.conn = p.connLocked(connKey{sharded: key.sharded, addr: addr})
		p.entries[key] = e
	}
	if e.policy == nil && policy != nil {
		// Created by a topic (listening, or lingering): the object's
		// waiters still need their messages interpreted.
		e.policy = policy
	}
	sub := e.join(p)
	if l != nil {
		sub.l = l
		e.listeners = append(e.listeners, l)
	}
	var fx effects
	if fresh {
		// A failed write is not fatal: the channel is subscribed again when
		// the connection comes back (or resubscribeUnconfirmed sends it
		// again); waits are bounded meanwhile.
		c := e.conn
		channels := append(p.presenceLocked(c), key.name)
		p.queueLocked(&fx, c, func() { c.subscribe(channels...) })
	}
	p.mu.Unlock()
	p.flush(fx)
	return sub, nil
}

// listening reports whether this client listens to an object channel.
func (p *pubsubService) listening(channel string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[p.objectKey(channel)] != nil
}

// join joins an object channel if this client already listens to it and
// Redis confirmed that, without I/O; it returns nil otherwise. queued
// reports whether other local waiters are already waiting on it; yield how
// long a new caller should leave the object to other clients' waiters first.
func (p *pubsubService) join(channel string) (sub *subscription, queued bool, yield time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[p.objectKey(channel)]
	if e == nil || !e.confirmed || p.closed || e.policy == nil {
		return nil, false, 0
	}
	return e.join(p), len(e.waiters) > 0, time.Until(e.yieldTill)
}

// yieldWindow is how long a client that just released an object other
// clients wait for leaves it to them before taking it again itself: about
// what their woken waiter needs to retry.
const yieldWindow = 2 * time.Millisecond

// yield makes this client's next callers on an object channel wait
// yieldWindow before their first try (no effect if the client does not
// listen to channel).
func (p *pubsubService) yield(channel string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[p.objectKey(channel)]; e != nil {
		e.yieldTill = time.Now().Add(yieldWindow)
	}
}

// join adds a subscriber. Caller holds p.mu.
func (e *channelEntry) join(p *pubsubService) *subscription {
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	e.refs++
	e.seq++
	return &subscription{p: p, e: e, seq: e.seq}
}

// effects are the writes a locked section decided on, for its caller to
// carry out once it has released p.mu: the connections whose queued writes
// it must send (see queueLocked). The zero value has none.
type effects struct {
	drain []*psConn
}

// queueLocked queues write on connection c. Writes on one connection are
// sent in the order in which the decisions to write were taken under p.mu,
// by one goroutine at a time: if none is sending c's writes, the caller
// becomes it, and fx names c for its flush. Caller holds p.mu.
func (p *pubsubService) queueLocked(fx *effects, c *psConn, write func()) {
	c.queue = append(c.queue, write)
	if !c.writing {
		c.writing = true
		fx.drain = append(fx.drain, c)
	}
}

// flush carries out fx. Caller does not hold p.mu.
func (p *pubsubService) flush(fx effects) {
	for _, c := range fx.drain {
		p.drain(c)
	}
}

// drain sends the writes queued on c until none is left, as the one
// goroutine that set c.writing, and starts c's receive loop after the first
// of them: a read before would connect to a random node. p.mu is released
// while a write runs, so a write that hangs (dialing an unreachable node)
// delays only the later writes of its own connection. Writes queued after
// the service closed are not sent. Caller does not hold p.mu.
func (p *pubsubService) drain(c *psConn) {
	p.mu.Lock()
	for len(c.queue) > 0 && !p.closed {
		w := c.queue[0]
		c.queue[0] = nil
		c.queue = c.queue[1:]
		p.mu.Unlock()
		w()
		p.mu.Lock()
		if !p.closed && !c.started && !c.retired {
			c.started = true
			p.loops.Add(1)
			go p.receive(c)
		}
	}
	c.queue = nil
	c.writing = false
	p.mu.Unlock()
}

// waiting describes the subscriber for an attempt; a nil subscription is
// not subscribed. A subscriber that has not waited yet has age -1.
func (s *subscription) waiting() waiting {
	if s == nil {
		return waiting{}
	}
	w := waiting{subscribed: true, age: -1}
	if !s.since.IsZero() {
		w.age = time.Since(s.since)
	}
	return w
}

// passOn wakes the next local waiter, if any: called by a waiter that
// leaves without taking the object, so that a wake-up it received, or the
// knowledge of the holder's lease it had, is not lost to the others.
func (s *subscription) passOn() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if len(s.e.waiters) > 0 {
		s.e.wakeNow(1)
	}
}

// takenSince reports whether a taken message arrived after t.
func (s *subscription) takenSince(t time.Time) bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	return s.e.takenAt.After(t)
}

// ready waits until Redis confirmed the subscription, for at most d. It
// reports whether the subscription is confirmed.
func (s *subscription) ready(ctx context.Context, d time.Duration) bool {
	select {
	case <-s.e.ready:
		return true
	default:
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-s.e.ready:
		return true
	case <-t.C:
	case <-ctx.Done():
	case <-s.p.closing:
	}
	return false
}

// wait blocks until a message wakes this waiter (nil, true), d passes (nil,
// false; d <= 0: no bound), ctx ends (ctx.Err()) or the client closes
// (ErrClientClosed). Waiters are woken in the order their subscriptions
// joined, whatever the order of their waits.
func (s *subscription) wait(ctx context.Context, d time.Duration) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p, e := s.p, s.e
	p.mu.Lock()
	if e.pending > 0 {
		e.pending--
		p.mu.Unlock()
		return true, nil
	}
	if s.since.IsZero() {
		s.since = time.Now()
	}
	w := &waiter{ch: make(chan struct{}, 1), seq: s.seq, since: s.since}
	i := len(e.waiters)
	for i > 0 && e.waiters[i-1].seq > w.seq {
		i--
	}
	e.waiters = append(e.waiters, nil)
	copy(e.waiters[i+1:], e.waiters[i:])
	e.waiters[i] = w
	p.mu.Unlock()

	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-w.ch:
		return true, nil
	case <-timeout:
	case <-ctx.Done():
		err = ctx.Err()
	case <-p.closing:
		err = ErrClientClosed
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !e.remove(w) {
		if err == nil {
			return true, nil // woken as the timer fired
		}
		e.wakeNow(1) // woken while giving up: pass it on
	}
	return false, err
}

// close leaves the subscription; the last one out unsubscribes in Redis.
func (s *subscription) close() {
	p, e := s.p, s.e
	var fx effects
	p.mu.Lock()
	if s.l != nil {
		for i, l := range e.listeners {
			if l == s.l {
				e.listeners = append(e.listeners[:i], e.listeners[i+1:]...)
				break
			}
		}
	}
	e.refs--
	e.pending = min(e.pending, e.refs)
	// Unused but unconfirmed, it lingers from its confirmation on (see
	// dispatch), so that a later SUBSCRIBE of the channel is never confused
	// with this one.
	if e.refs == 0 && e.confirmed {
		p.lingerLocked(&fx, e)
	}
	p.mu.Unlock()
	p.flush(fx)
}

// lingerLocked keeps an unused, confirmed channel subscribed for p.linger,
// so that an object contended again soon pays no SUBSCRIBE and UNSUBSCRIBE,
// and its new waiters still hear (and make) announcements; without linger
// (or once closed) it drops the channel now. Caller holds p.mu.
func (p *pubsubService) lingerLocked(fx *effects, e *channelEntry) {
	if p.linger <= 0 || p.closed {
		p.dropLocked(fx, e)
		return
	}
	e.idle = time.AfterFunc(p.linger, func() { p.expire(e) })
}

// expire drops e when its linger ran out with nobody joining it.
func (p *pubsubService) expire(e *channelEntry) {
	var fx effects
	p.mu.Lock()
	if p.entries[e.key] == e && e.refs == 0 && e.idle != nil {
		e.idle = nil
		p.dropLocked(&fx, e)
	}
	p.mu.Unlock()
	p.flush(fx)
}

// dropLocked forgets e and queues the unsubscribe of its channel. Caller
// holds p.mu.
func (p *pubsubService) dropLocked(fx *effects, e *channelEntry) {
	delete(p.entries, e.key)
	e.cancelDelayed()
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	c := e.conn
	p.queueLocked(fx, c, func() { c.unsubscribe(e.key.name) })
}

func (e *channelEntry) remove(w *waiter) bool {
	for i, x := range e.waiters {
		if x == w {
			copy(e.waiters[i:], e.waiters[i+1:])
			e.waiters[len(e.waiters)-1] = nil
			e.waiters = e.waiters[:len(e.waiters)-1]
			return true
		}
	}
	return false
}

// apply carries out what a message asks. Caller holds p.mu.
func (e *channelEntry) apply(p *pubsubService, w wake) {
	switch {
	case w.ignored:
	case w.taken:
		e.cancelDelayed()
		e.pending = 0
		e.takenAt = time.Now()
		if w.age >= 0 {
			e.lastAge = w.age
		}
	case w.handoff && len(e.waiters) > 0:
		if time.Since(e.waiters[0].since) >= e.lastAge*9/10 {
			e.wakeNow(w.n)
			return
		}
		e.delayedN += w.n
		if e.delayed == nil {
			d := handoffDelay + time.Duration(rand.Int64N(int64(2*handoffDelay)))
			e.delayed = time.AfterFunc(d, func() { p.fireDelayed(e) })
		}
	default:
		e.wakeNow(w.n)
	}
}

// handoffDelay is the shortest delay of a deferred hand-off wake-up: long
// enough for another client's taken message to arrive first on a local
// network, and about the resolution of an idle Go timer anyway.
const handoffDelay = time.Millisecond

func (p *pubsubService) fireDelayed(e *channelEntry) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e.delayed == nil || p.entries[e.key] != e {
		return
	}
	n := e.delayedN
	e.delayed, e.delayedN = nil, 0
	e.wakeNow(n)
}

func (e *channelEntry) cancelDelayed() {
	if e.delayed != nil {
		e.delayed.Stop()
		e.delayed, e.delayedN = nil, 0
	}
}

// wakeNow wakes up to n waiters in order (all when n < 0). Wake-ups that
// find no waiter are kept for subscribers about to wait, up to one per
// subscriber. Caller holds p.mu.
func (e *channelEntry) wakeNow(n int) {
	all := n < 0
	woken := 0
	for (all || woken < n) && len(e.waiters) > 0 {
		w := e.waiters[0]
		e.waiters[0] = nil
		e.waiters = e.waiters[1:]
		w.ch <- struct{}{}
		woken++
	}
	if all {
		n = e.refs
	}
	if n -= woken; n > 0 {
		e.pending = min(e.pending+n, e.refs)
	}
}

// receive is the single reader of connection c. It returns when the
// service closes or c is retired.
func (p *pubsubService) receive(c *psConn) {
	defer p.loops.Done()
	ctx := context.Background()
	p.mu.Lock()
	backoff := p.backoffs[c.key] // a replaced connection's, so that failing replacements back off too
	p.mu.Unlock()
	var pinged time.Time // when an unanswered ping was sent
	lastCheck := time.Now()
	for {
		msg, err := c.ps.ReceiveTimeout(ctx, p.health)
		select {
		case <-p.closing:
			return
		default:
		}
		p.mu.Lock()
		retired := c.retired
		p.mu.Unlock()
		if retired {
			return
		}
		if time.Since(lastCheck) >= p.health {
			lastCheck = time.Now()
			p.resubscribeUnconfirmed(c)
			if p.presenceLost(c) {
				p.replace(c)
				return
			}
		}
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				// go-redis re-dials on the next read; do not spin meanwhile.
				backoff = min(max(2*backoff, 20*time.Millisecond), time.Second)
				select {
				case <-p.closing:
					return
				case <-time.After(backoff):
				}
				if c.key.sharded {
					// See pubsubService: sharded connections are replaced,
					// their channels re-routed to the nodes serving them now.
					p.mu.Lock()
					p.backoffs[c.key] = backoff
					p.mu.Unlock()
					p.replace(c)
					return
				}
				continue
			}
			// Idle. A connection that does not even answer a ping is dead
			// without knowing it (no reset arrived): replace it.
			if !pinged.IsZero() && time.Since(pinged) >= p.health {
				p.replace(c)
				return
			}
			if pinged.IsZero() {
				pinged = time.Now()
				_ = c.ps.Ping(ctx)
			}
			continue
		}
		if backoff != 0 {
			p.mu.Lock()
			delete(p.backoffs, c.key)
			p.mu.Unlock()
		}
		backoff, pinged = 0, time.Time{}
		p.dispatch(c, msg)
	}
}

// replace retires connection c and subscribes its channels again: on a new
// plain connection, or, for sharded ones, each on the connection of the node
// now serving its slot. Confirmed channels then wake all their waiters (see
// dispatch), since messages may have been lost.
func (p *pubsubService) replace(c *psConn) {
	if c.key.sharded && p.cluster != nil {
		// Have go-redis refresh its view of the slots, so that a failover
		// or migration is seen by the next lookups.
		p.cluster.ReloadState(context.Background())
	}
	p.mu.Lock()
	if p.closed || c.retired {
		p.mu.Unlock()
		return
	}
	c.retired = true
	p.replaced.Add(1)
	delete(p.conns, c.key)
	var moved []*channelEntry
	for _, e := range p.entries {
		if e.conn == c {
			moved = append(moved, e)
		}
	}
	p.mu.Unlock()
	_ = c.ps.Close()
	for _, e := range moved {
		p.reroute(e, "")
	}
}

// reroute subscribes entry e again, on the connection its channel belongs
// to now. A lookup that fails leaves e unconfirmed on a connection chosen
// as best as possible; resubscribeUnconfirmed and later errors retry.
//
// away names the node that just unsubscribed e's channel (its slot left
// it), "" otherwise: go-redis's slot map, which nothing refreshed yet,
// would name it again, and its MOVED answer would cost the replacement of
// the whole connection. The map is reloaded until it names another node,
// for up to p.health.
func (p *pubsubService) reroute(e *channelEntry, away string) {
	addr, err := p.nodeAway(e.key, away)
	var fx effects
	p.mu.Lock()
	if !p.closed && p.entries[e.key] == e {
		if err != nil {
			addr = e.conn.key.addr
		}
		c := p.connLocked(connKey{sharded: e.key.sharded, addr: addr})
		if c != e.conn {
			p.rerouted.Add(1)
		}
		e.conn = c
		e.asked = time.Now()
		channels := append(p.presenceLocked(c), e.key.name)
		p.queueLocked(&fx, c, func() { c.subscribe(channels...) })
	}
	p.mu.Unlock()
	p.flush(fx)
}

// nodeAway is nodeOf, reloading the cluster's slot map while it still
// names away, for up to p.health.
func (p *pubsubService) nodeAway(key chanKey, away string) (string, error) {
	deadline := time.Now().Add(p.health)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), p.health)
		addr, err := p.nodeOf(ctx, key)
		cancel()
		if err != nil || away == "" || addr != away || p.cluster == nil || time.Now().After(deadline) {
			return addr, err
		}
		p.cluster.ReloadState(context.Background())
		select {
		case <-p.closing:
			return addr, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// presenceLocked returns the presence channel if c must still subscribe it
// (the plain connection of a single-node or Sentinel client), marking it
// sent. Caller holds p.mu.
//
// A Sentinel failover client does not move a pub/sub connection when the
// master changes: it stays on the old master, which hears none of the new
// master's messages until it rejoins as a replica (about 10s). So the
// receive loop asks the master, through a command connection (which does
// follow the failover), whether anyone listens on this client's presence
// channel; when nobody does, the connection is on another server (or
// silently dead) and is replaced.
func (p *pubsubService) presenceLocked(c *psConn) []string {
	if p.presence == "" || c.key.sharded || c.presence {
		return nil
	}
	c.presence = true
	return []string{p.presence}
}

// presenceLost reports whether the master has nobody on this client's
// presence channel although c subscribed it more than a second ago.
func (p *pubsubService) presenceLost(c *psConn) bool {
	p.mu.Lock()
	at := c.presenceAt
	p.mu.Unlock()
	if p.presence == "" || at.IsZero() || time.Since(at) < time.Second {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.health)
	defer cancel()
	n, err := p.rdb.PubSubNumSub(ctx, p.presence).Result()
	return err == nil && n[p.presence] == 0
}

// resubscribeUnconfirmed sends SUBSCRIBE again for the channels of c whose
// confirmation has not arrived within twice the health interval (a write
// lost around a reconnect). Sharded ones are re-routed, in case their slot
// moved.
func (p *pubsubService) resubscribeUnconfirmed(c *psConn) {
	p.mu.Lock()
	var late []*channelEntry
	for _, e := range p.entries {
		if e.conn == c && !e.confirmed && time.Since(e.asked) >= 2*p.health {
			late = append(late, e)
			e.asked = time.Now()
		}
	}
	p.mu.Unlock()
	for _, e := range late {
		p.reroute(e, "")
	}
}

// dispatch handles one message read from connection c.
func (p *pubsubService) dispatch(c *psConn, msg any) {
	var fx effects
	p.mu.Lock()
	switch m := msg.(type) {
	case *redis.Message:
		p.messageLocked(c, m)
	case *redis.Subscription:
		p.subscriptionLocked(&fx, c, m)
	}
	p.mu.Unlock()
	p.flush(fx)
}

// messageLocked hands a message to its channel's waiters and listeners.
// Caller holds p.mu.
func (p *pubsubService) messageLocked(c *psConn, m *redis.Message) {
	e := p.entries[chanKey{name: m.Channel, sharded: c.key.sharded}]
	if e == nil {
		return
	}
	if e.policy != nil {
		e.apply(p, e.policy(m.Payload))
	}
	for _, l := range e.listeners {
		select {
		case l.ch <- m.Payload:
		default:
			l.dropped.Add(1)
		}
	}
}

// subscriptionLocked handles a (un)subscribe confirmation, asked or not.
// Caller holds p.mu.
func (p *pubsubService) subscriptionLocked(fx *effects, c *psConn, m *redis.Subscription) {
	if m.Channel == p.presence && m.Kind == "subscribe" {
		c.presenceAt = time.Now()
		return
	}
	e := p.entries[chanKey{name: m.Channel, sharded: c.key.sharded}]
	if e == nil || e.conn != c {
		return
	}
	switch m.Kind {
	case "sunsubscribe":
		// Unasked (the entry is still wanted): the slot left this node. An
		// unconfirmed entry's sunsubscribe is the answer to an earlier drop
		// of the same channel, not news.
		if e.confirmed {
			e.asked = time.Now()
			if !p.closed {
				p.loops.Add(1)
				go func() {
					defer p.loops.Done()
					p.reroute(e, c.key.addr)
				}()
			}
		}
	case "subscribe", "ssubscribe":
		if e.confirmed {
			// Subscribed again after a reconnect: messages may have been
			// lost meanwhile, so every waiter polls once more.
			e.wakeNow(-1)
			return
		}
		e.confirmed = true
		close(e.ready)
		if e.refs == 0 {
			p.lingerLocked(fx, e)
		}
	}
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

// channels reports how many channels are subscribed, lingering ones
// included (for tests).
func (p *pubsubService) channels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}

// connections reports how many pub/sub connections are open (for tests).
func (p *pubsubService) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}
