package redisson

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson/internal/pubsub"
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

// pubsubService is the Client's pub/sub service: the engine of
// internal/pubsub (its connections, channel entries, waiter queues and
// their one mutex, none of which this package can reach), wired to the
// client's topology, options and emitter, with the calls the objects make
// in the root's own types. See docs/architecture.md, "Locking in pub/sub".
//
// Topics use the same connections: a topic's local subscribers are
// listeners of its channel, each with its own buffer. So do the local
// caches and the delayed queues' movers.
type pubsubService struct {
	engine  *pubsub.Service
	closing <-chan struct{} // closed when the client closes
	emit    *emitter        // reports the engine's connection events
	// caps tells whether the server has sharded pub/sub, asked before a
	// sharded subscription the user chose (PubSubSharded on Cluster, a
	// sharded topic); forced reports PubSubSharded on Cluster.
	caps   *capsProbe
	forced bool
}

// newPubSub builds the service of client id over sub's client (a clone of
// the user's that marks its connections CLIENT NO-EVICT, see subscriber):
// it does no I/O.
func newPubSub(sub *subscriber, topo topology, id string, mode PubSubMode, health, linger time.Duration, em *emitter, caps *capsProbe) *pubsubService {
	p := &pubsubService{emit: em, caps: caps, forced: mode == PubSubSharded && topo.isCluster()}
	presence := ""
	if topo.single {
		presence = "redisson_go_presence:" + id
	}
	p.engine = pubsub.New(pubsub.Config{
		Redis:    sub.rdb,
		Cluster:  sub.cluster,
		Presence: presence,
		Mode:     mode.engine(),
		Health:   health,
		Linger:   linger,
		Report:   p.report,
		Closed:   ErrClientClosed,
	})
	p.closing = p.engine.Closing()
	return p
}

// engine is the engine's mode for m.
func (m PubSubMode) engine() pubsub.Mode {
	switch m {
	case PubSubSharded:
		return pubsub.ModeSharded
	case PubSubPlain:
		return pubsub.ModePlain
	}
	return pubsub.ModeAuto
}

// report hands one of the engine's connection events to the emitter.
func (p *pubsubService) report(r pubsub.Report) {
	t := EventPubSubLost
	switch r.Kind {
	case pubsub.Replaced:
		t = EventPubSubReplaced
	case pubsub.Rerouted:
		t = EventPubSubRerouted
	}
	p.emit.emit(Event{Type: t, Node: r.Node, Channels: r.Channels, Err: r.Err})
}

// objectsSharded reports whether object channels use sharded pub/sub,
// probing the cluster once in PubSubAuto mode. A probe that fails for a
// transient reason (network, timeout, the context) is not remembered and
// returns its error: a waiter must not subscribe plain while the channel's
// publishers, once the probe succeeds, publish sharded.
func (p *pubsubService) objectsSharded(ctx context.Context) (bool, error) {
	return p.engine.ObjectsSharded(ctx)
}

// publishArg is the publish command object scripts must use: "spublish"
// when object channels are sharded, "publish" otherwise (also while the
// probe fails: the script call then most likely fails the same way).
func (p *pubsubService) publishArg(ctx context.Context) any {
	if sharded, _ := p.engine.ObjectsSharded(ctx); sharded {
		return "spublish"
	}
	return "publish"
}

// publishArgBackground is publishArg for the client's own background work
// (the watchdog), probing with a bounded context of its own.
func (p *pubsubService) publishArgBackground() any {
	if sharded, known := p.engine.Known(); known { // nothing to send
		if sharded {
			return "spublish"
		}
		return "publish"
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return p.publishArg(ctx)
}

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

func (ch objectChannel) engine() pubsub.Object { return pubsub.Object{Name: ch.name, Plain: ch.plain} }

// subscribe joins an object channel, subscribing in Redis if nobody in
// this client listens to it yet. It does not wait for Redis to confirm: see
// ready.
func (p *pubsubService) subscribe(ctx context.Context, ch objectChannel, policy wakePolicy) (*channelSub, error) {
	if p.forced && !ch.plain {
		if err := p.needSharded(ctx); err != nil {
			return nil, err
		}
	}
	s, err := p.engine.Subscribe(ctx, ch.engine(), policy.engine())
	return (*channelSub)(s), err
}

// join joins an object channel if this client already listens to it and
// Redis confirmed that, without I/O; it returns nil otherwise. queued
// reports whether other local waiters are already waiting on it; yield how
// long a new caller should leave the object to other clients' waiters first.
func (p *pubsubService) join(ch objectChannel) (sub *channelSub, queued bool, yield time.Duration) {
	s, queued, yield := p.engine.Join(ch.engine())
	return (*channelSub)(s), queued, yield
}

// listen joins a topic's channel as listener l (see Topic.Subscribe).
func (p *pubsubService) listen(ctx context.Context, key chanKey, l *listener) (*channelSub, error) {
	if key.sharded {
		if err := p.needSharded(ctx); err != nil {
			return nil, err
		}
	}
	s, err := p.engine.Listen(ctx, pubsub.Key{Name: key.name, Sharded: key.sharded}, l)
	return (*channelSub)(s), err
}

// needSharded returns ErrUnsupported naming SSUBSCRIBE when the server's
// Capabilities lack sharded pub/sub, so that a sharded subscription fails at
// once with that error rather than waiting for a confirmation that cannot
// come. A detection that fails says nothing: the subscription goes ahead,
// as it did before the check.
func (p *pubsubService) needSharded(ctx context.Context) error {
	if caps, err := p.caps.get(ctx); err != nil || caps.ShardedPubSub {
		return nil
	}
	return unsupported("ssubscribe", "sharded pub/sub")
}

// listening reports whether this client listens to an object channel that
// follows the mode (a lock's or a semaphore's).
func (p *pubsubService) listening(channel string) bool { return p.engine.Listening(channel) }

// yield makes this client's next callers on an object channel that follows
// the mode (a lock's) leave the object to other clients' waiters for a
// moment before their first try (no effect if the client does not listen
// to channel). sent is when the release was sent: the winner's taken
// message may arrive before its reply.
func (p *pubsubService) yield(channel string, sent time.Time) { p.engine.Yield(channel, sent) }

// close stops the receive loops, wakes every waiter with ErrClientClosed and
// waits for the loops to return.
func (p *pubsubService) close() { p.engine.Close() }

// pubsubStats is a snapshot of the service's counts: pubsub.Stats, whose
// fields say what each counts, in the root's names.
type pubsubStats struct{ channels, connections, rerouted, replaced, redialed int }

// stats returns a snapshot of the service's counts (Client.Stats).
func (p *pubsubService) stats() pubsubStats {
	s := p.engine.Stats()
	return pubsubStats{channels: s.Channels, connections: s.Connections, rerouted: s.Rerouted, replaced: s.Replaced, redialed: s.Redialed}
}

// wake is what a message on an object channel asks of the local waiters
// (see pubsub.Wake).
type wake struct {
	n       int           // waiters to wake: n > 0 up to n, n < 0 all, 0 none
	handoff bool          // one waiter across all clients should retry (the cross-client hand-off)
	taken   bool          // a waiter just took the object: cancel delayed wake-ups
	age     time.Duration // with taken: how long that waiter had waited (< 0: unknown)
	ignored bool          // not a message for waiters
	tags    string        // wake exactly the waiters of these subscriptions, tags separated by spaces (see subscription.setTag)
}

// wakePolicy interprets one message payload. It runs under the engine's
// lock: it must return quickly.
type wakePolicy func(payload string) wake

// engine is the engine's policy for f.
func (f wakePolicy) engine() pubsub.Policy {
	return func(payload string) pubsub.Wake {
		w := f(payload)
		return pubsub.Wake{N: w.n, Handoff: w.handoff, Taken: w.taken, Age: w.age, Ignored: w.ignored, Tags: w.tags}
	}
}

// waitState describes the caller of an attempt: whether it listens on the
// object's channel (so it should announce success, if the object does
// that), and for how long it has waited for a message.
type waitState struct {
	subscribed bool
	age        time.Duration
}

// channelSub is one local waiter's or listener's share of a channel
// subscription: the engine's, with the root's method names.
type channelSub pubsub.Subscription

func (s *channelSub) engine() *pubsub.Subscription { return (*pubsub.Subscription)(s) }

// ready waits until Redis confirmed the subscription, for at most d. It
// reports whether the subscription is confirmed.
func (s *channelSub) ready(ctx context.Context, d time.Duration) bool {
	return s.engine().Ready(ctx, d)
}

// confirmed returns a channel closed once Redis confirmed the subscription.
func (s *channelSub) confirmed() <-chan struct{} { return s.engine().Confirmed() }

// wait blocks until a message wakes this waiter (true, nil), d passes
// (false, nil; d <= 0: no bound), ctx ends (ctx.Err()) or the client closes
// (ErrClientClosed). Waiters are woken in the order their subscriptions
// joined, whatever the order of their waits.
func (s *channelSub) wait(ctx context.Context, d time.Duration) (bool, error) {
	return s.engine().Wait(ctx, d)
}

// waitEither is wait on s and o at once (a semaphore waiter's: its object's
// channel and its client's wake channel): a wake-up on either ends it.
func (s *channelSub) waitEither(ctx context.Context, d time.Duration, o *channelSub) (bool, error) {
	return s.engine().WaitEither(ctx, d, o.engine())
}

// close leaves the subscription; the last one out unsubscribes in Redis.
func (s *channelSub) close() { s.engine().Close() }

// setTag tags the subscription (see wake.tags); once, before its first wait.
func (s *channelSub) setTag(tag string) { s.engine().SetTag(tag) }

// passOn wakes the next local waiter, if any: called by a waiter that
// leaves without taking the object, so that a wake-up it received, or the
// knowledge of the holder's lease it had, is not lost to the others.
func (s *channelSub) passOn() { s.engine().PassOn() }

// takenSinceRelease reports whether a taken message arrived after this
// client last released the object (see yield) and no wake-up message after
// it: as far as this client heard, another owner took the object since and
// still holds it.
func (s *channelSub) takenSinceRelease() bool { return s.engine().TakenSinceRelease() }

// waitState describes the subscriber for an attempt; a nil subscription is
// not subscribed. A subscriber that has not waited yet has age -1.
func (s *channelSub) waiting() waitState {
	if s == nil {
		return waitState{}
	}
	return waitState{subscribed: true, age: s.engine().Age()}
}

// listener is one local subscriber of a topic: the engine hands it
// payloads without blocking, dropping those that find its buffer full.
// resubscribed, when not nil (a delayed queue's mover), receives a signal,
// without blocking, each time the channel is subscribed again after a
// reconnect: messages may have been lost meanwhile. A listener with a hook
// (a local cache, which must hear every message or know it may not have)
// gets its messages through the hook instead of ch. Its methods implement
// pubsub.Listener.
type listener struct {
	ch           chan string
	resubscribed chan struct{}
	dropped      atomic.Int64
	hook         channelHook
}

// Message hands payload to the hook, or to ch unless its buffer is full.
func (l *listener) Message(payload string) {
	if l.hook != nil {
		l.hook.message(payload)
		return
	}
	select {
	case l.ch <- payload:
	default:
		l.dropped.Add(1)
	}
}

// Lost tells the hook, if any, that messages may have been missed.
func (l *listener) Lost() {
	if l.hook != nil {
		l.hook.lost()
	}
}

// Resumed tells the hook, if any, that Redis confirmed the subscription.
func (l *listener) Resumed() {
	if l.hook != nil {
		l.hook.resumed()
	}
}

// Resubscribed signals resubscribed, if set, without blocking.
func (l *listener) Resubscribed() {
	if l.resubscribed != nil {
		select {
		case l.resubscribed <- struct{}{}:
		default:
		}
	}
}

// channelHook is told, in order and under the engine's lock, what happens
// on a channel: each message, that messages may have been missed (the
// connection carrying the channel failed or was replaced, or the server
// dropped the subscription), and that Redis confirmed the subscription (the
// first time, again after a loss, or at once when joining a confirmed one).
// Its methods must return quickly and must not call the service.
type channelHook interface {
	message(payload string)
	lost()
	resumed()
}
