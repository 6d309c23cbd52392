package redisson

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
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

// pubsubService multiplexes every channel this client listens to over one
// go-redis PubSub (one connection). Subscriptions are reference-counted: the
// first local waiter on a channel subscribes, the last one to leave
// unsubscribes. go-redis re-dials a dropped connection and re-subscribes every
// channel; each re-subscription confirmation wakes all waiters of the channel
// so that a message lost while disconnected costs one extra poll, not a hang.
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
type pubsubService struct {
	rdb      redis.UniversalClient
	health   time.Duration // idle time after which the connection is pinged
	linger   time.Duration // how long an unused channel stays subscribed
	mu       sync.Mutex
	wmu      sync.Mutex    // orders SUBSCRIBE/UNSUBSCRIBE writes; taken before mu is released
	ps       *redis.PubSub // nil until the first subscription
	entries  map[string]*channelEntry
	closed   bool
	closing  chan struct{} // closed by close
	loopDone chan struct{} // closed when the receive loop has returned
}

// channelEntry is the local state of one subscribed channel. Guarded by
// pubsubService.mu.
type channelEntry struct {
	channel   string
	policy    wakePolicy
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

type waiter struct {
	ch    chan struct{}
	seq   uint64
	since time.Time // when its subscription first waited
}

func newPubSub(rdb redis.UniversalClient, health, linger time.Duration) *pubsubService {
	return &pubsubService{
		rdb:      rdb,
		health:   health,
		linger:   linger,
		entries:  make(map[string]*channelEntry),
		closing:  make(chan struct{}),
		loopDone: make(chan struct{}),
	}
}

// subscription is one local waiter's share of a channel subscription.
type subscription struct {
	p     *pubsubService
	e     *channelEntry
	seq   uint64
	since time.Time // zero until the first wait
}

// subscribe joins channel, subscribing in Redis if nobody in this client
// listens to it yet. It does not wait for Redis to confirm: see ready.
func (p *pubsubService) subscribe(ctx context.Context, channel string, policy wakePolicy) (*subscription, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, ErrClientClosed
	}
	if p.ps == nil {
		p.ps = p.rdb.Subscribe(context.WithoutCancel(ctx))
		go p.receive(p.ps)
	}
	e := p.entries[channel]
	fresh := e == nil
	if fresh {
		e = &channelEntry{channel: channel, policy: policy, ready: make(chan struct{}), asked: time.Now()}
		p.entries[channel] = e
	}
	sub := e.join(p)
	if !fresh {
		p.mu.Unlock()
		return sub, nil
	}
	// A failed write is not fatal: go-redis keeps the channel and subscribes
	// it again when it reconnects; waits are bounded meanwhile.
	p.send(func(ps *redis.PubSub) { _ = ps.Subscribe(context.Background(), channel) })
	return sub, nil
}

// listening reports whether this client listens to channel.
func (p *pubsubService) listening(channel string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.entries[channel] != nil
}

// join joins channel if this client already listens to it and Redis
// confirmed that, without I/O; it returns nil otherwise. queued reports
// whether other local waiters are already waiting on it; yield how long a
// new caller should leave the object to other clients' waiters first.
func (p *pubsubService) join(channel string) (sub *subscription, queued bool, yield time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[channel]
	if e == nil || !e.confirmed || p.closed {
		return nil, false, 0
	}
	return e.join(p), len(e.waiters) > 0, time.Until(e.yieldTill)
}

// yieldWindow is how long a client that just released an object other
// clients wait for leaves it to them before taking it again itself: about
// what their woken waiter needs to retry.
const yieldWindow = 2 * time.Millisecond

// yield makes this client's next callers on channel wait yieldWindow before
// their first try (no effect if the client does not listen to channel).
func (p *pubsubService) yield(channel string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[channel]; e != nil {
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

// send runs write on the PubSub after releasing p.mu, in the order in which
// the decisions to write were taken under p.mu. Caller holds p.mu.
func (p *pubsubService) send(write func(ps *redis.PubSub)) {
	ps, closed := p.ps, p.closed
	p.wmu.Lock()
	p.mu.Unlock()
	defer p.wmu.Unlock()
	if !closed {
		write(ps)
	}
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
	p.mu.Lock()
	e.refs--
	e.pending = min(e.pending, e.refs)
	if e.refs > 0 || !e.confirmed {
		// Unconfirmed and unused: dropped when its confirmation arrives, so
		// that a later SUBSCRIBE of the channel is never confused with this one.
		p.mu.Unlock()
		return
	}
	p.idle(e)
}

// idle keeps an unused, confirmed channel subscribed for p.linger, so that
// an object contended again soon pays no SUBSCRIBE and UNSUBSCRIBE, and its
// new waiters still hear (and make) announcements. Caller holds p.mu, which
// idle releases.
func (p *pubsubService) idle(e *channelEntry) {
	if p.linger <= 0 || p.closed {
		p.drop(e)
		return
	}
	e.idle = time.AfterFunc(p.linger, func() {
		p.mu.Lock()
		if p.entries[e.channel] != e || e.refs > 0 || e.idle == nil {
			p.mu.Unlock()
			return
		}
		e.idle = nil
		p.drop(e)
	})
	p.mu.Unlock()
}

// drop forgets e and unsubscribes its channel. Caller holds p.mu, which drop
// releases.
func (p *pubsubService) drop(e *channelEntry) {
	delete(p.entries, e.channel)
	e.cancelDelayed()
	if e.idle != nil {
		e.idle.Stop()
		e.idle = nil
	}
	p.send(func(ps *redis.PubSub) { _ = ps.Unsubscribe(context.Background(), e.channel) })
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
	if e.delayed == nil || p.entries[e.channel] != e {
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

var ageWeight = true

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

// receive is the single reader of the pub/sub connection. It returns when
// the service closes.
func (p *pubsubService) receive(ps *redis.PubSub) {
	defer close(p.loopDone)
	ctx := context.Background()
	backoff := time.Duration(0)
	var pinged time.Time // when an unanswered ping was sent
	lastCheck := time.Now()
	for {
		msg, err := ps.ReceiveTimeout(ctx, p.health)
		select {
		case <-p.closing:
			return
		default:
		}
		if time.Since(lastCheck) >= p.health {
			lastCheck = time.Now()
			p.resubscribeUnconfirmed()
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
				continue
			}
			// Idle. A connection that does not even answer a ping is dead
			// without knowing it (no reset arrived): replace it.
			if !pinged.IsZero() && time.Since(pinged) >= p.health {
				if ps = p.replace(); ps == nil {
					return
				}
				pinged = time.Time{}
				continue
			}
			if pinged.IsZero() {
				pinged = time.Now()
				_ = ps.Ping(ctx)
			}
			continue
		}
		backoff, pinged = 0, time.Time{}
		p.dispatch(msg)
	}
}

// replace closes the current pub/sub connection and subscribes every
// channel again on a new one. Confirmed channels then wake all their
// waiters (see dispatch), since messages may have been lost. It returns nil
// when the service is closing.
func (p *pubsubService) replace() *redis.PubSub {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	old := p.ps
	ps := p.rdb.Subscribe(context.Background())
	p.ps = ps
	channels := make([]string, 0, len(p.entries))
	for ch, e := range p.entries {
		channels = append(channels, ch)
		e.asked = time.Now()
	}
	p.send(func(ps *redis.PubSub) {
		if len(channels) > 0 {
			_ = ps.Subscribe(context.Background(), channels...)
		}
	})
	_ = old.Close()
	return ps
}

// resubscribeUnconfirmed sends SUBSCRIBE again for channels whose
// confirmation has not arrived within twice the health interval (a write
// lost around a reconnect).
func (p *pubsubService) resubscribeUnconfirmed() {
	p.mu.Lock()
	var late []string
	for ch, e := range p.entries {
		if !e.confirmed && time.Since(e.asked) >= 2*p.health {
			late = append(late, ch)
			e.asked = time.Now()
		}
	}
	if len(late) == 0 || p.closed {
		p.mu.Unlock()
		return
	}
	p.send(func(ps *redis.PubSub) { _ = ps.Subscribe(context.Background(), late...) })
}

func (p *pubsubService) dispatch(msg any) {
	p.mu.Lock()
	switch m := msg.(type) {
	case *redis.Message:
		if e := p.entries[m.Channel]; e != nil {
			e.apply(p, e.policy(m.Payload))
		}
	case *redis.Subscription:
		e := p.entries[m.Channel]
		if e == nil || (m.Kind != "subscribe" && m.Kind != "ssubscribe") {
			break
		}
		if e.confirmed {
			// Subscribed again after a reconnect: messages may have been
			// lost meanwhile, so every waiter polls once more.
			e.wakeNow(-1)
			break
		}
		e.confirmed = true
		close(e.ready)
		if e.refs == 0 {
			p.idle(e) // releases p.mu
			return
		}
	}
	p.mu.Unlock()
}

// close stops the receive loop, wakes every waiter with ErrClientClosed and
// waits for the loop to return.
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
	ps := p.ps
	p.mu.Unlock()
	if ps == nil {
		return
	}
	_ = ps.Close()
	<-p.loopDone
}

// channels reports how many channels are subscribed, lingering ones
// included (for tests).
func (p *pubsubService) channels() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.entries)
}
