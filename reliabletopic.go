package redisson

import (
	"context"
	"encoding/hex"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
)

// defaultSubscriberTimeout is how long a subscriber that stopped refreshing
// keeps its position: Redisson's reliableTopicWatchdogTimeout default.
const defaultSubscriberTimeout = 10 * time.Minute

// ReliableTopic is a durable publish/subscribe topic of values of type T:
// Redisson's RReliableTopic, on the same keys, so Java and Go publishers and
// subscribers of one name see each other's messages. Its messages are
// entries of a Redis stream named after the topic (field m holds the
// codec's bytes); each subscriber is a consumer group of that stream (the
// group's name is the subscriber's id) and has its own position in it; the
// zset {name}:timeout holds each subscriber's expiry, which a live
// subscriber refreshes. A subscriber that stops refreshing (its process
// died) keeps its position for its timeout (WithSubscriberTimeout, default
// 10 minutes): restarted with the same id (WithSubscriberID) within it, it
// receives every message published meanwhile; after it, the next publish or
// subscriber removes it (destroys its group), as Redisson does.
//
// Entries that every subscriber has consumed are trimmed; an entry a
// registered subscriber has not consumed (read and acknowledged) is never
// trimmed by this library. While the topic has no subscriber, messages
// accumulate for the next one to subscribe, bounded only by WithRetention.
//
// A ReliableTopic is safe for concurrent use.
type ReliableTopic[T any] struct {
	base
	timeouts string // {name}:timeout
	maxLen   int64  // retention without subscribers: -1 for none
	maxAge   time.Duration
}

// GetReliableTopic returns the reliable topic called name: the stream name
// and the zset {name}:timeout (name:timeout when name has a hash tag),
// which share a cluster slot. opts may set the codec (WithCodec; the
// default is the client's) and the retention (WithRetention).
func GetReliableTopic[T any](c *Client, name string, opts ...ObjectOption) *ReliableTopic[T] {
	var o objectOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	timeouts := suffixName(name, "timeout")
	t := &ReliableTopic[T]{base: newBase(c, "reliable topic", name, c.objectCodec(opts), timeouts),
		timeouts: timeouts, maxLen: -1}
	t.opKind = "reliable_topic"
	if o.retention != nil {
		t.maxLen, t.maxAge = o.retention.maxLen, o.retention.maxAge
	}
	return t
}

// WithRetention bounds what a ReliableTopic keeps while it has no
// subscriber: at most maxLen messages (0 keeps none; -1 is no bound) and
// none older than maxAge (0 is no bound), on the server's clock. Messages a
// registered subscriber has not consumed are kept whatever the bound. A
// maxLen below -1 or a negative maxAge makes the topic's calls return
// ErrInvalidRetention. Other objects ignore it.
func WithRetention(maxLen int64, maxAge time.Duration) ObjectOption {
	return func(o *objectOptions) { o.retention = &retentionBounds{maxLen: maxLen, maxAge: maxAge} }
}

// Name returns the topic's name, its stream's key.
func (t *ReliableTopic[T]) Name() string { return t.name }

func (t *ReliableTopic[T]) keys() []string { return []string{t.name, t.timeouts} }

// checkAll is check, then the retention's bounds.
func (t *ReliableTopic[T]) checkAll() error {
	if err := t.check(); err != nil {
		return err
	}
	if t.maxLen < -1 {
		return t.wrap(invalidOption(ErrInvalidRetention, "max length", t.maxLen, "-1 (no bound) or more"))
	}
	if t.maxAge < 0 {
		return t.wrap(invalidOption(ErrInvalidRetention, "max age", t.maxAge, "0 (no bound) or more"))
	}
	return nil
}

func (t *ReliableTopic[T]) retentionArgs() []any {
	return []any{t.maxLen, t.maxAge.Milliseconds()}
}

// Publish appends msg to the topic and returns how many subscribers it
// has: Java and Go, connected or not, whose timeout has not run out (those
// whose timeout has are removed first). It returns ErrEmptyName,
// ErrInvalidName, ErrClientClosed, ErrInvalidRetention, ErrNilValue or an
// ErrCodec error when msg does not encode, ErrWrongType when a key holds
// another type (Redis is left unchanged), or a Redis error.
func (t *ReliableTopic[T]) Publish(ctx context.Context, msg T) (_ int64, err error) {
	ctx, rec, err := t.open(ctx, opReliablePublish)
	defer func() { rec.end(err, OutcomeOK) }()
	if err == nil {
		err = t.checkAll()
	}
	if err != nil {
		return 0, err
	}
	b, err := t.encode(msg)
	if err != nil {
		return 0, err
	}
	t.c.trip(ctx, 1)
	args := append([]any{b}, t.retentionArgs()...)
	n, err := t.c.scripts.run(ctx, scriptRTopicPublish, t.keys(), args...).Int64()
	return n, t.wrap(err)
}

// Size returns how many messages the topic's stream holds: those some
// subscriber has not consumed, and those kept for the next subscriber. It
// returns ErrEmptyName, ErrInvalidName, ErrClientClosed, ErrWrongType, or a
// Redis error.
func (t *ReliableTopic[T]) Size(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := t.open(ctx, opReliableSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	t.c.trip(ctx, 1)
	n, err := t.c.rdb.XLen(ctx, t.name).Result()
	return n, t.wrap(err)
}

// CountSubscribers returns how many subscribers the topic has (its consumer
// groups), Java and Go, connected or within their timeout. It returns
// ErrEmptyName, ErrInvalidName, ErrClientClosed, ErrWrongType, or a Redis
// error.
func (t *ReliableTopic[T]) CountSubscribers(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := t.open(ctx, opReliableCount)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	t.c.trip(ctx, 1)
	groups, err := t.c.rdb.XInfoGroups(ctx, t.name).Result()
	if err != nil && strings.Contains(err.Error(), "no such key") {
		return 0, nil
	}
	return int64(len(groups)), t.wrap(err)
}

// newSubscriberID returns a random id in Redisson's form: 32 hex digits.
func newSubscriberID() string {
	id := uuid.New()
	return hex.EncodeToString(id[:])
}

// subscribeScript registers subscriber id and reports whether it resumes.
func (t *ReliableTopic[T]) register(ctx context.Context, id string, timeout time.Duration) (bool, error) {
	t.c.trip(ctx, 1)
	n, err := t.c.scripts.run(ctx, scriptRTopicSubscribe, t.keys(), id, timeout.Milliseconds()).Int64()
	return n == 1, t.wrap(err)
}

// settle acknowledges ids, refreshes subscriber id and trims; it reports
// false when the subscriber is no longer registered.
func (t *ReliableTopic[T]) settle(ctx context.Context, id string, timeout time.Duration, ids []string) (bool, error) {
	args := make([]any, 0, 4+len(ids))
	args = append(args, id, timeout.Milliseconds())
	args = append(args, t.retentionArgs()...)
	for _, e := range ids {
		args = append(args, e)
	}
	n, err := t.c.scripts.run(ctx, scriptRTopicSettle, t.keys(), args...).Int64()
	return n >= 0, t.wrap(err)
}

// unregister removes subscriber id for good.
func (t *ReliableTopic[T]) unregister(ctx context.Context, id string) error {
	args := append([]any{id}, t.retentionArgs()...)
	return t.wrap(t.c.scripts.run(ctx, scriptRTopicUnsubscribe, t.keys(), args...).Err())
}

// readGroup reads up to count entries for subscriber id: its own
// unacknowledged ones from the start (from "0"), or new ones (">") waiting
// up to block. No entry is (nil, nil).
func (t *ReliableTopic[T]) readGroup(ctx context.Context, id, from string, count int64, block time.Duration) ([]redis.XMessage, error) {
	a := &redis.XReadGroupArgs{Group: id, Consumer: "consumer", Streams: []string{t.name, from}, Count: count, Block: -1}
	if from == ">" {
		a.Block = block
	}
	res, err := t.c.rdb.XReadGroup(ctx, a).Result()
	if err == redis.Nil || (err == nil && len(res) == 0) {
		return nil, nil
	}
	if err != nil {
		return nil, t.wrap(err)
	}
	return res[0].Messages, nil
}
