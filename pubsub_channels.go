package redisson

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// channelEntry is the local state of one subscribed channel. Guarded by
// pubsubService.mu.
type channelEntry struct {
	key        chanKey
	conn       *psConn
	policy     wakePolicy // nil for a topic
	listeners  []*listener
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

// subscription is one local waiter's or topic subscriber's share of a
// channel subscription.
type subscription struct {
	p     *pubsubService
	e     *channelEntry
	l     *listener // a topic subscriber's buffer; nil for a waiter
	seq   uint64
	since time.Time // zero until the first wait
	// tag, when set (by setTag), names the subscription for messages that
	// wake exactly the subscriptions they name (a semaphore's wake
	// channel: the call ids of the waiters served).
	tag string
}

// setTag tags the subscription (see tag); once, before its first wait.
func (s *subscription) setTag(tag string) {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	s.tag = tag
	if s.e.tags == nil {
		s.e.tags = map[string]int{}
	}
	s.e.tags[tag]++
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
		if l.hook != nil && e.confirmed {
			l.hook.resumed()
		}
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

// listening reports whether this client listens to an object channel that
// follows the mode (a lock's or a semaphore's).
func (p *pubsubService) listening(channel string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[p.objectKey(objectChannel{name: channel})] != nil
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

// listener is one local subscriber of a topic: the receive loop hands it
// payloads without blocking, dropping those that find its buffer full.
// resubscribed, when not nil (a delayed queue's mover), receives a signal,
// without blocking, each time the channel is subscribed again after a
// reconnect: messages may have been lost meanwhile. A listener with a hook
// (a local cache, which must hear every message or know it may not have)
// gets its messages through the hook instead of ch.
type listener struct {
	ch           chan string
	resubscribed chan struct{}
	dropped      atomic.Int64
	hook         channelHook
}

// channelHook is told, in order and under pubsubService.mu, what happens on
// a channel: each message, that messages may have been missed (the
// connection carrying the channel failed or was replaced, or the server
// dropped the subscription), and that Redis confirmed the subscription (the
// first time, again after a loss, or at once when joining a confirmed one).
// Its methods must return quickly and must not call the service.
type channelHook interface {
	message(payload string)
	lost()
	resumed()
}

// hooksLocked calls f with the hook of every listener of e that has one.
// Caller holds p.mu.
func (e *channelEntry) hooksLocked(f func(channelHook)) {
	for _, l := range e.listeners {
		if l.hook != nil {
			f(l.hook)
		}
	}
}

// lostLocked tells the hooks of every channel carried by c that messages
// may have been missed. Caller holds p.mu.
func (p *pubsubService) lostLocked(c *psConn) {
	for _, e := range p.entries {
		if e.conn == c {
			e.hooksLocked(channelHook.lost)
		}
	}
}

// listen joins a topic's channel as listener l (see Topic.Subscribe).
func (p *pubsubService) listen(ctx context.Context, key chanKey, l *listener) (*subscription, error) {
	return p.subscribeKey(ctx, key, nil, l)
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
		if l.hook != nil {
			l.hook.message(m.Payload)
			continue
		}
		select {
		case l.ch <- m.Payload:
		default:
			l.dropped.Add(1)
		}
	}
}
