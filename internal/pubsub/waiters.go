package pubsub

import (
	"context"
	"math/rand/v2"
	"strings"
	"time"
)

// Wake is what a message on an object channel asks of the local waiters.
// The zero value wakes none.
type Wake struct {
	N       int           // waiters to wake: N > 0 up to N, N < 0 all, 0 none
	Handoff bool          // one waiter across all clients should retry: see apply
	Taken   bool          // a waiter just took the object: cancel delayed wake-ups
	Age     time.Duration // with Taken: how long that waiter had waited (< 0: unknown)
	Ignored bool          // not a message for waiters
	Tags    string        // wake exactly the waiters of these subscriptions, tags separated by spaces (see Subscription.SetTag)
}

// Policy interprets one message payload of an object channel. It runs
// under Service.mu: it must return quickly and must not call the service.
type Policy func(payload string) Wake

// waiter is one blocked wait of a subscription, queued in its channel
// entry by subscription arrival. ch has room for its single wake-up.
type waiter struct {
	ch    chan struct{}
	seq   uint64
	since time.Time // when its subscription first waited
	// woken is shared by the waiters of one wait on several channels
	// (WaitEither): the first wake-up records its entry, and the others
	// skip the waiter.
	woken *wokenBy
	tag   string // its subscription's
}

// wokenBy records the entry whose wake-up ended a wait (nil: none yet).
type wokenBy struct{ e *channelEntry }

// Subscribe joins object channel ch as a waiter whose wake-ups policy
// decides, subscribing in Redis if nobody in this client listens to it yet.
// It does not wait for Redis to confirm: see Subscription.Ready. It returns
// the mode probe's error (see ObjectsSharded), Config.Closed once the
// service is closed, or the error of finding the channel's node.
func (p *Service) Subscribe(ctx context.Context, ch Object, policy Policy) (*Subscription, error) {
	sharded, err := p.ObjectsSharded(ctx)
	if err != nil {
		return nil, err
	}
	return p.subscribeKey(ctx, Key{Name: ch.Name, Sharded: sharded && !ch.Plain}, policy, nil)
}

// Join joins object channel ch as a waiter if this client already listens
// to it as a waiter and Redis confirmed that, without I/O; it returns nil
// otherwise. queued
// reports whether other local waiters are already waiting on it; yield how
// long a new caller should leave the object to other clients' waiters first.
func (p *Service) Join(ch Object) (sub *Subscription, queued bool, yield time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[p.objectKey(ch)]
	if e == nil || !e.confirmed || p.closed || e.policy == nil {
		return nil, false, 0
	}
	return e.join(p), len(e.waiters) > 0, time.Until(e.yieldTill)
}

// yieldWindow is how long a client that just released an object other
// clients wait for leaves it to them before taking it again itself: about
// what their woken waiter needs to retry.
const yieldWindow = 2 * time.Millisecond

// Yield makes this client's next callers on an object channel that follows
// the mode (a lock's) wait yieldWindow before their first try (no effect if
// the client does not listen to channel). sent is when the release was
// sent: the winner's taken message may arrive before its reply.
func (p *Service) Yield(channel string, sent time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.entries[p.objectKey(Object{Name: channel})]; e != nil {
		e.yieldTill = time.Now().Add(yieldWindow)
		e.releasedAt = sent
	}
}

// Age returns how long the subscription has waited since its first wait,
// or -1 before it.
func (s *Subscription) Age() time.Duration {
	if s.since.IsZero() {
		return -1
	}
	return time.Since(s.since)
}

// PassOn wakes the next local waiter, if any: called by a waiter that
// leaves without taking the object, so that a wake-up it received, or the
// knowledge of the holder's lease it had, is not lost to the others.
func (s *Subscription) PassOn() {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	if len(s.e.waiters) > 0 {
		s.e.wakeNow(1)
	}
}

// TakenSinceRelease reports whether a taken message arrived after this
// client last released the object (see Yield) and no wake-up message after
// it: as far as this client heard, another owner took the object since and
// still holds it.
func (s *Subscription) TakenSinceRelease() bool {
	s.p.mu.Lock()
	defer s.p.mu.Unlock()
	e := s.e
	return e.takenAt.After(e.releasedAt) && !e.freedAt.After(e.takenAt)
}

// Wait blocks until a message wakes this waiter (true, nil), d passes
// (false, nil; d <= 0: no bound), ctx ends (ctx.Err()) or the service
// closes (Config.Closed). Waiters are woken in the order their subscriptions
// joined, whatever the order of their waits.
func (s *Subscription) Wait(ctx context.Context, d time.Duration) (bool, error) {
	return waitOn(ctx, d, s)
}

// WaitEither is Wait on s and o at once (a semaphore waiter's: its object's
// channel and its client's wake channel): a wake-up on either ends it.
func (s *Subscription) WaitEither(ctx context.Context, d time.Duration, o *Subscription) (bool, error) {
	return waitOn(ctx, d, s, o)
}

// waitOn is Wait on every subscription of subs (all of one service).
func waitOn(ctx context.Context, d time.Duration, subs ...*Subscription) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	p := subs[0].p
	p.mu.Lock()
	for _, s := range subs {
		if s.tag != "" && s.e.tagged[s.tag] {
			delete(s.e.tagged, s.tag)
			p.mu.Unlock()
			return true, nil
		}
		if s.e.pending > 0 {
			s.e.pending--
			p.mu.Unlock()
			return true, nil
		}
	}
	ch, woken := make(chan struct{}, 1), new(wokenBy)
	ws := make([]*waiter, len(subs))
	for k, s := range subs {
		if s.since.IsZero() {
			s.since = time.Now()
		}
		w := &waiter{ch: ch, seq: s.seq, since: s.since, woken: woken, tag: s.tag}
		ws[k] = w
		e := s.e
		i := len(e.waiters)
		for i > 0 && e.waiters[i-1].seq > w.seq {
			i--
		}
		e.waiters = append(e.waiters, nil)
		copy(e.waiters[i+1:], e.waiters[i:])
		e.waiters[i] = w
	}
	p.mu.Unlock()

	var timeout <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timeout = t.C
	}
	var err error
	select {
	case <-ch:
	case <-timeout:
	case <-ctx.Done():
		err = ctx.Err()
	case <-p.closing:
		err = p.errClose
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, s := range subs {
		s.e.remove(ws[k])
	}
	by := woken.e // the entry whose message woke this waiter
	switch {
	case by == nil:
		return false, err
	case err != nil:
		by.wakeNow(1) // woken while giving up: pass it on
		return false, err
	}
	return true, nil
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
//
// Hand-off: every client listening to a lock channel receives each unlock
// message, and waking a waiter in each would make all but one of them retry
// in vain, the fastest one winning whatever its wait. A waiter that acquires
// after waiting announces it on the channel ("taken", with how long it
// waited). In a steady queue each winner has waited about as long as the
// last one, and the next waiters in global order have waited one, two, ...
// hand-off intervals less (the time between unlock messages). So on an
// unlock message, a client whose longest-waiting local waiter has waited
// at least the last winner's wait less half an interval wakes it at once:
// that is the oldest waiter across all clients, and usually only one client
// qualifies. The others defer their wake-up, the longer the further their
// oldest waiter is behind (by intervals: 1 ms plus 1 ms per interval, up to
// 4 ms), and cancel it when the taken message arrives first; if nobody
// qualified (the queue changed), the oldest deferred waiter goes first.
// The result is close to global first-come order with about one try per
// unlock. When the unlock comes longer after the previous one than the last
// winner waited, there is no steady queue: a client whose oldest waiter was
// already waiting when the holder took the object (it lost to the holder,
// so it came before every waiter that arrived during the hold) wakes it at
// once, so that a resigning leader's successor starts within a round trip,
// not after a deferral; each such client tries once. A client whose
// waiters all came during the hold defers as above, behind those.
func (e *channelEntry) apply(p *Service, w Wake) {
	switch {
	case w.Ignored:
	case w.Tags != "":
		e.wakeTagged(strings.Fields(w.Tags))
	case w.Taken:
		e.cancelDelayed()
		e.pending = 0
		e.takenAt = time.Now()
		if w.Age >= 0 {
			e.lastAge = w.Age
		}
	case w.Handoff:
		now := time.Now()
		e.freedAt = now
		interval := now.Sub(e.unlockAt)
		longHold := !e.unlockAt.IsZero() && interval >= e.lastAge
		if e.unlockAt.IsZero() || longHold {
			// Unknown, or longer than a wait: no queue to keep in order.
			interval = 0
		}
		e.unlockAt = now
		if len(e.waiters) == 0 || (longHold && e.lostToHolder(e.waiters[0])) {
			// No waiter; or no queue and this client's oldest waiter is
			// of the oldest kind: not deferred.
			e.wakeNow(w.N)
			return
		}
		behind := e.lastAge - now.Sub(e.waiters[0].since)
		margin := e.lastAge / 10
		if interval > 0 {
			margin = min(margin, interval/2)
		}
		if behind <= margin {
			e.wakeNow(w.N)
			return
		}
		e.delayedN += w.N
		if e.delayed == nil {
			e.delayed = time.AfterFunc(handoffWait(behind, interval), func() { p.fireDelayed(e) })
		}
	default:
		if w.N != 0 {
			e.freedAt = time.Now()
		}
		e.wakeNow(w.N)
	}
}

// lostToHolder reports that w was already waiting when the object's
// holder took it, as far as this client heard (a taken message).
func (e *channelEntry) lostToHolder(w *waiter) bool {
	return !e.takenAt.IsZero() && !w.since.After(e.takenAt)
}

// handoffDelay is the shortest delay of a deferred hand-off wake-up: long
// enough for another client's taken message to arrive first on a local
// network, and about the resolution of an idle Go timer anyway.
const handoffDelay = time.Millisecond

// handoffWait is how long a client defers a hand-off wake-up when its
// oldest waiter is behind (> 0) the expected winner, given the interval
// between unlock messages (0: unknown): handoffDelay plus handoffDelay per
// interval behind, up to three, and up to a quarter handoffDelay at random
// to break ties; with the interval unknown, 1 to 3 handoffDelay at random.
func handoffWait(behind, interval time.Duration) time.Duration {
	if interval <= 0 {
		return handoffDelay + rand.N(2*handoffDelay)
	}
	steps := min(float64(behind)/float64(interval), 3)
	return handoffDelay + time.Duration(steps*float64(handoffDelay)) + rand.N(handoffDelay/4)
}

func (p *Service) fireDelayed(e *channelEntry) {
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

// wakeTagged wakes the waiter of each subscription tagged with one of
// tags; a tagged subscription not waiting now keeps its wake-up for its
// next wait. Caller holds p.mu.
func (e *channelEntry) wakeTagged(tags []string) {
	for _, tag := range tags {
		found := false
		for i, w := range e.waiters {
			if w.tag != tag || w.woken.e != nil {
				continue
			}
			copy(e.waiters[i:], e.waiters[i+1:])
			e.waiters[len(e.waiters)-1] = nil
			e.waiters = e.waiters[:len(e.waiters)-1]
			w.woken.e = e
			w.ch <- struct{}{}
			found = true
			break
		}
		if !found && e.tags[tag] > 0 {
			if e.tagged == nil {
				e.tagged = map[string]bool{}
			}
			e.tagged[tag] = true
		}
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
		if w.woken.e != nil {
			continue // woken through its other channel
		}
		w.woken.e = e
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
