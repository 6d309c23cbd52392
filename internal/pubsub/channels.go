package pubsub

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// channelEntry is the local state of one subscribed channel. Guarded by
// Service.mu.
type channelEntry struct {
	key        Key
	conn       *psConn
	policy     Policy // nil for a topic
	listeners  []Listener
	refs       int
	seq        uint64 // arrival order of subscriptions
	confirmed  bool
	ready      chan struct{}   // closed at the first subscribe confirmation
	asked      time.Time       // when SUBSCRIBE was last sent, until confirmed
	waiters    []*waiter       // ordered by subscription arrival
	pending    int             // wake-ups that found no waiter, at most refs
	delayed    *time.Timer     // a hand-off wake-up not yet delivered
	delayedN   int             // how many it wakes
	lastAge    time.Duration   // how long the last announced winner had waited
	unlockAt   time.Time       // when the last hand-off (unlock) message arrived
	idle       *time.Timer     // unsubscribes the channel after linger unused
	yieldTill  time.Time       // new local callers wait until then before trying
	releasedAt time.Time       // when this client's release that set yieldTill was sent
	takenAt    time.Time       // when the last taken message arrived
	freedAt    time.Time       // when the last message that wakes waiters arrived
	tags       map[string]int  // subscriptions by tag (see subscription.tag)
	tagged     map[string]bool // tags whose wake-up found no waiter
}

// Subscription is one local waiter's or listener's share of a channel
// subscription. Its methods are safe for concurrent use, except Wait,
// WaitEither and Age, which one goroutine at a time may call: the time of
// the first wait is theirs.
type Subscription struct {
	p     *Service
	e     *channelEntry
	l     Listener // a listener's; nil for a waiter
	seq   uint64
	since time.Time // zero until the first wait
	// tag, when set (by SetTag), names the subscription for messages that
	// wake exactly the subscriptions they name (a semaphore's wake
	// channel: the call ids of the waiters served).
	tag string
}

// SetTag tags the subscription (see Wake.Tags); once, before its first wait.
func (s *Subscription) SetTag(tag string) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.tag = tag
	if s.e.tags == nil {
		s.e.tags = map[string]int{}
	}
	s.e.tags[tag]++
}

// subscribeKey joins the channel key as a waiter (policy) or as a
// listener (l).
func (p *Service) subscribeKey(ctx context.Context, key Key, policy Policy, l Listener) (*Subscription, error) {
	addr, err := p.nodeOf(ctx, key)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, p.errClose
	}
	e := p.entries[key]
	fresh := e == nil
	if fresh {
		e = &channelEntry{key: key, policy: policy, ready: make(chan struct{}), asked: time.Now()}
		e.conn = p.connLocked(connKey{sharded: key.Sharded, addr: addr})
		p.entries[key] = e
	}
	if e.policy == nil && policy != nil {
		// Created by a listener (listening, or lingering): the object's
		// waiters still need their messages interpreted.
		e.policy = policy
	}
	sub := e.join(p)
	if l != nil {
		sub.l = l
		e.listeners = append(e.listeners, l)
		if e.confirmed {
			l.Resumed()
		}
	}
	var fx effects
	if fresh {
		// A failed write is not fatal: the channel is subscribed again when
		// the connection comes back (or resubscribeUnconfirmed sends it
		// again); waits are bounded meanwhile.
		c := e.conn
		channels := append(p.presenceLocked(c), key.Name)
		p.queueLocked(&fx, c, func() { c.subscribe(channels...) })
	}
	p.mu.Unlock()
	p.flush(fx)
	return sub, nil
}

// Listening reports whether this client listens to the object channel
// named channel that follows the mode (a lock's or a semaphore's). It does
// no I/O.
func (p *Service) Listening(channel string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[p.objectKey(Object{Name: channel})] != nil
}

// join adds a subscriber. Caller holds p.mu.
func (e *channelEntry) join(p *Service) *Subscription {
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	e.refs++
	e.seq++
	return &Subscription{p: p, e: e, seq: e.seq}
}

// Ready waits until Redis confirmed the subscription, for at most d or
// until ctx ends or the service closes. It reports whether the subscription
// is confirmed.
func (s *Subscription) Ready(ctx context.Context, d time.Duration) bool {
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

// Confirmed returns a channel closed once Redis confirmed the subscription
// (see Ready).
func (s *Subscription) Confirmed() <-chan struct{} { return s.e.ready }

// Close leaves the subscription; the last one out unsubscribes in Redis
// (after the linger). Call it once.
func (s *Subscription) Close() {
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
	if s.tag != "" {
		if e.tags[s.tag]--; e.tags[s.tag] <= 0 {
			delete(e.tags, s.tag)
			delete(e.tagged, s.tag)
		}
	}
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
func (p *Service) lingerLocked(fx *effects, e *channelEntry) {
	if p.linger <= 0 || p.closed {
		p.dropLocked(fx, e)
		return
	}
	e.idle = time.AfterFunc(p.linger, func() { p.expire(e) })
}

// expire drops e when its linger ran out with nobody joining it.
func (p *Service) expire(e *channelEntry) {
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
func (p *Service) dropLocked(fx *effects, e *channelEntry) {
	delete(p.entries, e.key)
	e.cancelDelayed()
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	c := e.conn
	p.queueLocked(fx, c, func() { c.unsubscribe(e.key.Name) })
}

// Listener is one local subscriber of a channel that is not a waiter (a
// topic's subscriber, a local cache, a delayed queue's mover). The service
// tells it, in order and under Service.mu, what happens on its channel:
// each message, that messages may have been missed (the connection carrying
// the channel failed or was replaced, or the server dropped the
// subscription), that Redis confirmed the subscription (the first time,
// again after a loss, or at once when joining a confirmed one), and, after
// Resumed, when the confirmation was a re-subscription after a reconnect.
// Its methods must return quickly, must not block and must not call the
// service.
type Listener interface {
	Message(payload string)
	Lost()
	Resumed()
	Resubscribed()
}

// tellLocked calls f with every listener of e. Caller holds p.mu.
func (e *channelEntry) tellLocked(f func(Listener)) {
	for _, l := range e.listeners {
		f(l)
	}
}

// lostLocked tells the listeners of every channel carried by c that
// messages may have been missed. Caller holds p.mu.
func (p *Service) lostLocked(c *psConn) {
	for _, e := range p.entries {
		if e.conn == c {
			e.tellLocked(Listener.Lost)
		}
	}
}

// Listen joins the channel key as listener l, subscribing in Redis if
// nobody in this client listens to it yet. It does not wait for Redis to
// confirm: see Subscription.Ready. It returns Config.Closed once the
// service is closed, or the error of finding the channel's node.
func (p *Service) Listen(ctx context.Context, key Key, l Listener) (*Subscription, error) {
	return p.subscribeKey(ctx, key, nil, l)
}

// messageLocked hands a message to its channel's waiters and listeners.
// Caller holds p.mu.
func (p *Service) messageLocked(c *psConn, m *redis.Message) {
	e := p.entries[Key{Name: m.Channel, Sharded: c.key.sharded}]
	if e == nil {
		return
	}
	if e.policy != nil {
		e.apply(p, e.policy(m.Payload))
	}
	for _, l := range e.listeners {
		l.Message(m.Payload)
	}
}
