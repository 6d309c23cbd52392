package redisson

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// subscribeTimeout bounds how long Subscribe waits for Redis to confirm.
const subscribeTimeout = 10 * time.Second

// defaultTopicBuffer is the number of messages a subscriber may fall
// behind before messages are dropped for it.
const defaultTopicBuffer = 1024

// Topic is a publish/subscribe channel of values of type T: Redisson's
// RTopic (a plain channel named after the topic), or with GetShardedTopic
// its RShardedTopic (SSUBSCRIBE/SPUBLISH, Redis 7+). Messages are encoded
// with the topic's codec, so a Java RTopic with the same codec reads them.
//
// Delivery is Redis pub/sub: at most once, to the subscribers connected when
// the message is published. A message published while a client's pub/sub
// connection is down is lost for that client; the subscription itself comes
// back when the connection does.
//
// All local subscribers of a topic share one Redis subscription, carried by
// the client's shared pub/sub connection (one per client, or one per master
// node for sharded channels on Cluster). Each subscriber has its own buffer
// (WithBuffer, default 1024 messages) and goroutine: a slow handler delays
// only its own messages. A message that finds a subscriber's buffer full is
// dropped for that subscriber alone and counted (TopicSubscription.Dropped);
// the connection is never blocked.
//
// A Topic is safe for concurrent use.
type Topic[T any] struct {
	base    // kind: "topic" or "sharded topic"
	sharded bool
}

// GetTopic returns the topic called name (a plain Redis channel of that
// name). opts may set the codec (WithCodec); the default is the client's.
func GetTopic[T any](c *Client, name string, opts ...ObjectOption) *Topic[T] {
	return &Topic[T]{base: newBase(c, "topic", name, c.objectCodec(opts))}
}

// GetShardedTopic returns the sharded topic called name: its channel lives
// in the hash slot of name, so on Redis Cluster it is published and
// subscribed on one master node only (SPUBLISH/SSUBSCRIBE), which scales
// with the cluster where a plain channel is broadcast to every node. It
// needs Redis 7 or later, also outside Cluster.
func GetShardedTopic[T any](c *Client, name string, opts ...ObjectOption) *Topic[T] {
	return &Topic[T]{base: newBase(c, "sharded topic", name, c.objectCodec(opts)), sharded: true}
}

// Name returns the topic's name, its channel.
func (t *Topic[T]) Name() string { return t.name }

func (t *Topic[T]) object() string { return fmt.Sprintf("%s %q", t.kind, t.name) }

// Publish sends msg to the topic's subscribers and returns how many Redis
// subscriptions received it: one per subscribed client (all local
// subscribers of a client share one), Java Redisson clients included. On
// Cluster a plain topic counts only the subscriptions on the node that took
// the PUBLISH, as Redis does; a sharded topic counts them all. It returns ErrEmptyName, ErrClientClosed, an ErrCodec error when msg
// does not encode, or a Redis error.
func (t *Topic[T]) Publish(ctx context.Context, msg T) (_ int64, err error) {
	ctx, rec, err := t.open(ctx, opTopicPublish)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	b, err := encodeValue(t.codec, t.object(), msg)
	if err != nil {
		return 0, err
	}
	t.c.trip(ctx, 1)
	publish := t.c.rdb.Publish
	if t.sharded {
		publish = t.c.rdb.SPublish
	}
	n, err := publish(ctx, t.name, b).Result()
	return n, objectErr(t.kind, t.name, err)
}

// TopicOption configures one subscriber.
type TopicOption func(*topicOptions)

type topicOptions struct {
	buffer  int
	onError func(error)
	onExit  func() // called as the subscriber's goroutine returns (a MapCache listener's join)
}

// WithBuffer sets how many messages a subscriber may fall behind before
// messages are dropped for it (default 1024; at least 1).
func WithBuffer(n int) TopicOption {
	return func(o *topicOptions) { o.buffer = n }
}

// WithErrorHandler receives, on the subscriber's goroutine, the ErrCodec
// error of every message that does not decode (such messages are skipped).
// Without it they are skipped silently and counted (DecodeErrors).
func WithErrorHandler(f func(error)) TopicOption {
	return func(o *topicOptions) { o.onError = f }
}

// TopicSubscription is one local subscriber of a topic.
type TopicSubscription struct {
	sub       *channelSub
	l         *listener
	stop      chan struct{}
	done      chan struct{}
	once      sync.Once
	decodeErr atomic.Int64
}

// Close ends the subscription: no message is delivered after the one being
// handled, and the last local subscriber of a topic unsubscribes in Redis.
// Close does not wait for a running handler (so a handler may call it);
// Done is closed once the subscriber's goroutine has returned. Close is
// safe to call more than once.
func (s *TopicSubscription) Close() {
	s.once.Do(func() {
		close(s.stop)
		s.sub.close()
	})
}

// Done is closed when the subscriber's goroutine has returned: after Close,
// or when the client closes.
func (s *TopicSubscription) Done() <-chan struct{} { return s.done }

// Dropped reports how many messages were dropped because the subscriber's
// buffer was full.
func (s *TopicSubscription) Dropped() int64 { return s.l.dropped.Load() }

// DecodeErrors reports how many messages were skipped because they did not
// decode.
func (s *TopicSubscription) DecodeErrors() int64 { return s.decodeErr.Load() }

// Subscribe calls handler, on a goroutine of the subscription's own, for
// every message published to the topic from the moment Subscribe returns
// until Close. Messages are handled one at a time, in the order this client
// received them. It returns once Redis has confirmed the subscription, or
// ErrNotSubscribed (or the context's error) if it did not in time; and
// ErrEmptyName, ErrInvalidName, ErrClientClosed, ErrInvalidBuffer, or an
// error for a nil handler.
func (t *Topic[T]) Subscribe(ctx context.Context, handler func(T), opts ...TopicOption) (_ *TopicSubscription, err error) {
	ctx, rec := t.begin(ctx, opTopicSubscribe)
	defer func() { rec.end(err, OutcomeOK) }()
	if handler == nil {
		return nil, objectErr(t.kind, t.name, invalidOption(ErrInvalidOption, "handler", nil, "a function"))
	}
	return t.subscribe(ctx, opts, func(s *TopicSubscription, v T) bool {
		handler(v)
		return true
	})
}

// Channel subscribes like Subscribe and delivers the messages on the
// returned channel instead, which is closed after cancel is called (or the
// client closes). Messages wait in the subscriber's buffer (WithBuffer)
// while the channel is not read; beyond it they are dropped.
func (t *Topic[T]) Channel(ctx context.Context, opts ...TopicOption) (_ <-chan T, _ func(), err error) {
	ctx, rec := t.begin(ctx, opTopicSubscribe)
	defer func() { rec.end(err, OutcomeOK) }()
	out := make(chan T)
	s, err := t.subscribe(ctx, opts, func(s *TopicSubscription, v T) bool {
		select {
		case out <- v:
			return true
		case <-s.stop:
			return false
		case <-t.c.pubsub.closing:
			return false
		}
	})
	if err != nil {
		return nil, nil, err
	}
	closeWhenDone(s.done, out)
	return out, s.Close, nil
}

// closeWhenDone closes out once done is closed: a Channel's output after
// its subscriber's goroutine returned.
func closeWhenDone[T any](done <-chan struct{}, out chan T) {
	go func() {
		<-done
		close(out)
	}()
}

func (t *Topic[T]) subscribe(ctx context.Context, opts []TopicOption, deliver func(*TopicSubscription, T) bool) (*TopicSubscription, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	o := topicOptions{buffer: defaultTopicBuffer}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.buffer < 1 {
		return nil, objectErr(t.kind, t.name, invalidOption(ErrInvalidBuffer, "buffer", o.buffer, "at least 1"))
	}
	if err := ctx.Err(); err != nil {
		return nil, t.errorf("subscribe: %w", err)
	}
	l := &listener{ch: make(chan string, o.buffer)}
	t.c.trip(ctx, 1) // SUBSCRIBE, and its confirmation
	sub, err := t.c.pubsub.listen(ctx, chanKey{name: t.name, sharded: t.sharded}, l)
	if err != nil {
		return nil, objectErr(t.kind, t.name, err)
	}
	s := &TopicSubscription{sub: sub, l: l, stop: make(chan struct{}), done: make(chan struct{})}
	if !sub.ready(ctx, subscribeTimeout) {
		s.Close()
		close(s.done)
		if err := ctx.Err(); err != nil {
			return nil, t.errorf("subscribe: %w", err)
		}
		if t.c.closed.Load() {
			return nil, ErrClientClosed
		}
		return nil, t.errorf("%w after %v", ErrNotSubscribed, subscribeTimeout)
	}
	closing := t.c.pubsub.closing
	go func() {
		defer close(s.done)
		if o.onExit != nil {
			defer o.onExit()
		}
		for {
			select {
			case <-s.stop:
				return
			case <-closing:
				return
			case raw := <-l.ch:
				select {
				case <-s.stop:
					return // closed while this message waited
				default:
				}
				v, err := decodeValue[T](t.codec, t.object(), []byte(raw))
				if err != nil {
					s.decodeErr.Add(1)
					if o.onError != nil {
						o.onError(err)
					}
					continue
				}
				if !deliver(s, v) {
					return
				}
			}
		}
	}()
	return s, nil
}
