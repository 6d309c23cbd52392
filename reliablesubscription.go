package redisson

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// reliableBatch is how many entries a subscriber reads at a time.
const reliableBatch = 100

// reliableBlock bounds one blocking read of a subscriber, so that a pool
// connection is held at most this long by an idle subscriber and a closed
// subscription ends within it.
const reliableBlock = time.Second

// SubscriberOption configures one subscriber of a ReliableTopic.
type SubscriberOption func(*subscriberOptions)

type subscriberOptions struct {
	id      string
	idSet   bool
	timeout time.Duration
	onError func(error)
}

// WithSubscriberID gives the subscriber a stable id (its consumer group's
// name): a process restarted with the same id within the subscriber's
// timeout resumes where it stopped, and Close keeps its position. Without
// it the id is random and Close removes the subscriber. An empty id is
// ErrInvalidOption.
func WithSubscriberID(id string) SubscriberOption {
	return func(o *subscriberOptions) { o.id, o.idSet = id, true }
}

// WithSubscriberTimeout sets how long the subscriber keeps its position
// once it stops refreshing it (its process died or lost Redis): default 10
// minutes, Redisson's; at least a second, else ErrInvalidSubscriberTimeout.
// A live subscriber refreshes it every third of it.
func WithSubscriberTimeout(d time.Duration) SubscriberOption {
	return func(o *subscriberOptions) { o.timeout = d }
}

// WithSubscriberErrors receives, on the subscriber's goroutine, every error
// the subscriber meets: the ErrCodec error of a message that does not decode
// (it is skipped and acknowledged, never handed to the handler), Redis
// errors of its reads (it retries after a second), and ErrSubscriberExpired
// when it had lost its registration and subscribed again.
func WithSubscriberErrors(f func(error)) SubscriberOption {
	return func(o *subscriberOptions) { o.onError = f }
}

// ReliableSubscription is one subscriber of a ReliableTopic. It is safe
// for concurrent use.
type ReliableSubscription struct {
	id        string
	resumed   bool
	keep      bool // a stable id: Close keeps the position
	cancel    context.CancelFunc
	done      chan struct{}
	once      sync.Once
	remove    atomic.Bool // Unsubscribe: remove the subscriber as the loop ends
	decodeErr atomic.Int64
	handled   atomic.Int64
}

// ID returns the subscriber's id, its consumer group's name.
func (s *ReliableSubscription) ID() string { return s.id }

// Resumed reports whether the subscriber existed when Subscribe was called
// (same id, within its timeout): it then receives what it had not consumed.
func (s *ReliableSubscription) Resumed() bool { return s.resumed }

// DecodeErrors reports how many messages were skipped because they did not
// decode.
func (s *ReliableSubscription) DecodeErrors() int64 { return s.decodeErr.Load() }

// Handled reports how many messages were handed to the handler.
func (s *ReliableSubscription) Handled() int64 { return s.handled.Load() }

// Done is closed when the subscriber's goroutine has returned: after Close,
// Unsubscribe, or when the client closes.
func (s *ReliableSubscription) Done() <-chan struct{} { return s.done }

// Close stops the subscriber: no message is handed over after the one being
// handled, which is acknowledged. A subscriber with a stable id
// (WithSubscriberID) keeps its position for its timeout, for a later
// Subscribe with that id; one with a random id is removed. Close does not
// wait for a running handler (so a handler may call it); Done is closed
// once the goroutine has returned. It is safe to call more than once.
func (s *ReliableSubscription) Close() {
	s.once.Do(s.cancel)
}

// Unsubscribe stops the subscriber like Close, waits for its goroutine,
// and removes it from Redis whatever its id (Redisson's removeListener):
// its position is gone. It must not be called from the subscription's own
// handler. It returns the context's error if ctx ends first.
func (s *ReliableSubscription) Unsubscribe(ctx context.Context) error {
	s.remove.Store(true)
	s.Close()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Subscribe registers a subscriber and calls handler, on a goroutine of the
// subscription's own, for every message it has not consumed: those the
// stream holds (the messages published while the topic had no subscriber,
// within WithRetention, for a new subscriber; those published since it
// stopped, for one resuming under its id), then every message published
// until Close. Messages are handled one at a time in stream order; each is
// acknowledged after handler returns, so a process that dies while handling
// one receives it again when it resumes (at least once). A slow handler
// delays only its own subscriber. It returns ErrEmptyName, ErrInvalidName,
// ErrClientClosed, ErrInvalidOption (a nil handler, an empty id),
// ErrInvalidSubscriberTimeout, ErrInvalidRetention, ErrWrongType when a key
// holds another type (Redis is left unchanged), the context's error (a
// random-id subscriber that may have been registered is removed), or a
// Redis error.
func (t *ReliableTopic[T]) Subscribe(ctx context.Context, handler func(T), opts ...SubscriberOption) (_ *ReliableSubscription, err error) {
	ctx, rec, err := t.open(ctx, opReliableSubscribe)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if handler == nil {
		return nil, t.wrap(invalidOption(ErrInvalidOption, "handler", nil, "a function"))
	}
	return t.subscribe(ctx, opts, func(_ context.Context, v T) bool {
		handler(v)
		return true
	})
}

// Channel subscribes like Subscribe and delivers the messages on the
// returned channel instead, closed after cancel is called (or the client
// closes). A message is acknowledged once it is received from the channel;
// cancel stops the subscriber like Close.
func (t *ReliableTopic[T]) Channel(ctx context.Context, opts ...SubscriberOption) (_ <-chan T, _ func(), err error) {
	ctx, rec, err := t.open(ctx, opReliableSubscribe)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, nil, err
	}
	out := make(chan T)
	s, err := t.subscribe(ctx, opts, func(stop context.Context, v T) bool {
		select {
		case out <- v:
			return true
		case <-stop.Done():
			return false
		}
	})
	if err != nil {
		return nil, nil, err
	}
	closeWhenDone(s.done, out)
	return out, s.Close, nil
}

func (t *ReliableTopic[T]) subscribe(ctx context.Context, opts []SubscriberOption, deliver func(context.Context, T) bool) (*ReliableSubscription, error) {
	if err := t.checkAll(); err != nil {
		return nil, err
	}
	o := subscriberOptions{timeout: defaultSubscriberTimeout}
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if o.idSet && o.id == "" {
		return nil, t.wrap(invalidOption(ErrInvalidOption, "subscriber id", `""`, "a non-empty id"))
	}
	if o.timeout < time.Second {
		return nil, t.wrap(invalidOption(ErrInvalidSubscriberTimeout, "subscriber timeout", o.timeout, "at least 1s"))
	}
	if !o.idSet {
		o.id = newSubscriberID()
	}
	if err := ctx.Err(); err != nil {
		return nil, t.errorf("subscribe: %w", err)
	}
	resumed, err := t.register(ctx, o.id, o.timeout)
	if err != nil {
		if !o.idSet { // the reply may be what was lost: remove what may have been registered
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.c.opts.CleanupTimeout)
			t.unregister(cctx, o.id)
			cancel()
		}
		return nil, err
	}
	s := &ReliableSubscription{id: o.id, resumed: resumed, keep: o.idSet, done: make(chan struct{})}
	stop, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	r := &reliableReader[T]{t: t, s: s, o: o, deliver: deliver}
	if !t.c.handles.spawn(func(closing context.Context) { r.run(stop, closing) }) {
		cancel()
		close(s.done)
		return nil, ErrClientClosed
	}
	return s, nil
}
