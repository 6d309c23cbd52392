package redisson

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"
)

// Options configures a Client. The zero value of every field selects its
// default; a negative or out-of-range value makes New fail with
// ErrInvalidOption.
type Options struct {
	// WatchdogTimeout is the lease given to locks acquired without an
	// explicit lease; the watchdog renews such leases every third of it.
	// Default 30s, as in Redisson. Minimum 100ms.
	WatchdogTimeout time.Duration

	// WatchdogBatchSize is the largest number of leases renewed by one
	// script call. Default 100. Range 1 to 10000.
	WatchdogBatchSize int

	// CleanupTimeout bounds the clean-up that must outlive a caller's
	// context: an Unlock called with a cancelled context, or undoing an
	// acquire whose context ended while its reply was in flight.
	// Default 5s.
	CleanupTimeout time.Duration

	// RetryWindow is how long after a call go-redis may still resend it
	// (after a lost reply). A full release leaves a small latch key that
	// expires after it, so that a resent release is recognised; the client
	// deletes the latch in the background as soon as the release has
	// returned, so the window only matters when a release failed. Default:
	// derived from the go-redis client's MaxRetries, timeouts and backoff
	// (49s with go-redis v9.23's defaults), or 1m for client types it cannot
	// inspect.
	RetryWindow time.Duration

	// FairWaiterTimeout is how long a fair lock waiter may go silent before
	// it loses its place in the queue; waiters renew their place every third
	// of it, so a waiter whose process died delays the queue by at most
	// this. Default 5s. Minimum 30ms.
	FairWaiterTimeout time.Duration

	// TokenIdleTTL is how long the fencing counter of a lock name
	// (redisson_lock_token:{name}, taken by Lock, FairLock and the write
	// side of ReadWriteLock) lives after the name's latest acquisition:
	// every acquisition renews it, so a name locked once leaves no key
	// behind for longer. Tokens still grow when the key is created again
	// (see Lock.Token). Default 24h. Minimum 1ms.
	TokenIdleTTL time.Duration

	// TokenNeverExpires keeps every fencing counter forever (no expiry), as
	// Java's RFencedLock expects of the key it shares with this library:
	// its INCRs start again from 1 on a counter that expired. It cannot be
	// combined with a TokenIdleTTL. Default false.
	TokenNeverExpires bool

	// SubscriptionLinger is how long a channel stays subscribed after its
	// last local waiter left, so that an object contended again soon costs
	// no SUBSCRIBE/UNSUBSCRIBE. Default 2s.
	SubscriptionLinger time.Duration

	// PubSubHealthCheck is how long the shared pub/sub connection may stay
	// silent before it is pinged, so that a dead connection is noticed and
	// re-established. It is also how often a single-node or Sentinel client
	// checks, with one PUBSUB NUMSUB of a presence channel of its own, that
	// its pub/sub connection is on the current master (a Sentinel failover
	// leaves it on the old one). Default 5s.
	PubSubHealthCheck time.Duration

	// PubSubMode chooses plain or sharded pub/sub for the channels of
	// locks, semaphores and latches on Redis Cluster. Default PubSubAuto:
	// sharded (SSUBSCRIBE/SPUBLISH) when the cluster supports it, as
	// Redisson does by default, so that Go and Java clients hear each other.
	PubSubMode PubSubMode

	// ReplicaAck, when Replicas > 0, makes every lock acquisition (and
	// every ReliableQueue.Enqueue, which reports ErrNotReplicated without
	// undoing the job) wait until that many replicas have acknowledged it (Redis WAIT, sent in the
	// same round trip as the acquire script), for at most Timeout (default
	// 1s). An acquisition that too few replicas acknowledged is undone and
	// reported as ErrNotReplicated: with asynchronous replication, a lock
	// acquired just before a failover can otherwise vanish with the old
	// master and be granted twice. It is Redisson's remedy (its
	// checkLockSyncedSlaves). It narrows that window but does not close it
	// (a replica that acknowledged may still not be the one promoted), and
	// it costs the replication delay on every acquisition. Off by default.
	ReplicaAck ReplicaAck

	// Codec encodes the values of typed objects (Bucket, Map, Topic,
	// BloomFilter) that are not given a codec of their own. Default
	// MsgpackCodec. (Redisson's own default, Kryo5Codec, is Java-only;
	// Java services that share values with Go should use
	// MsgPackJacksonCodec, which MsgpackCodec matches for plain values, or
	// StringCodec.)
	Codec Codec

	// Logger receives the client's background events (a lost lease, a
	// failed renewal, a pub/sub connection replaced, a script reloaded),
	// never a line per successful operation: a healthy client logs nothing
	// at Info or above. Default slog.Default(); to silence the client, pass
	// slog.New(slog.DiscardHandler).
	Logger *slog.Logger

	// DisableAutoPipeline sends every script call as a command of its own.
	// By default, calls of goroutines sharing the Client that queue up
	// behind others in flight are written to Redis together as one go-redis
	// pipeline (one write and one read for all of them, on both sides): a
	// call goes out at once as a plain command while fewer than 4 sends
	// are in flight, so a lone call is never delayed; beyond that it waits
	// for the first send in flight to end and goes with every call queued
	// by then (at most 128). A call whose context ends before it is written
	// is not sent; one whose context ends while its batch is in flight
	// returns at once with the context's error, as a plain command does.
	// A go-redis Hook sees a batched call in ProcessPipelineHook, not
	// ProcessHook, under the context of the batch's oldest call without its
	// cancellation; an Observer still counts it as one round trip of its
	// operation. On a ClusterClient each master has its own queue, behind
	// one send in flight to that master (calls are routed by the slot of
	// their first key, as go-redis routes them), so a slow or failing master
	// holds up only its own calls. There a call sent alone goes through the
	// ClusterClient as without the auto-pipeline; a batch goes through the
	// master's node client (seen by that client's hooks, those
	// ClusterClient.OnNewNode adds, not the ClusterClient's), and a call it
	// answers with MOVED or ASK is sent again alone through the
	// ClusterClient, which follows the redirection. Default false.
	DisableAutoPipeline bool

	// ClientSideCaching configures the cache of the objects created with
	// the client-side caching option (see its type for the defaults).
	ClientSideCaching ClientSideCaching

	// Observer, when set, sees every public operation and background event
	// (see Observer); the redissonotel module provides one for
	// OpenTelemetry. Default none, at no cost.
	Observer Observer
}

// optionRules is the table of Options' ranged fields, checked in this order
// by New: the default a zero value selects, and the accepted range (a value
// outside it fails New with ErrInvalidOption naming the field).
var optionRules = []optionRule{
	// name, the field, its default, minimum, maximum
	ranged("WatchdogTimeout", func(o *Options) *time.Duration { return &o.WatchdogTimeout }, fixed(30*time.Second), 100*time.Millisecond, 0),
	ranged("WatchdogBatchSize", func(o *Options) *int { return &o.WatchdogBatchSize }, fixed(100), 1, 10000),
	ranged("CleanupTimeout", func(o *Options) *time.Duration { return &o.CleanupTimeout }, fixed(5*time.Second), 0, 0),
	ranged("RetryWindow", func(o *Options) *time.Duration { return &o.RetryWindow }, retryWindow, time.Millisecond, 0),
	ranged("FairWaiterTimeout", func(o *Options) *time.Duration { return &o.FairWaiterTimeout }, fixed(5*time.Second), 30*time.Millisecond, 0),
	exclusive("TokenIdleTTL", func(o *Options) bool { return o.TokenNeverExpires && o.TokenIdleTTL != 0 }, "with TokenNeverExpires"),
	ranged("TokenIdleTTL", func(o *Options) *time.Duration { return &o.TokenIdleTTL }, fixed(24*time.Hour), time.Millisecond, 0),
	ranged("SubscriptionLinger", func(o *Options) *time.Duration { return &o.SubscriptionLinger }, fixed(2*time.Second), 0, 0),
	ranged("PubSubHealthCheck", func(o *Options) *time.Duration { return &o.PubSubHealthCheck }, fixed(5*time.Second), 10*time.Millisecond, 0),
	ranged("ReplicaAck.Replicas", func(o *Options) *int { return &o.ReplicaAck.Replicas }, nil, 0, 0),
	ranged("ReplicaAck.Timeout", func(o *Options) *time.Duration { return &o.ReplicaAck.Timeout }, fixed(time.Second), 0, 0),
	ranged("ClientSideCaching.MaxEntries", func(o *Options) *int { return &o.ClientSideCaching.MaxEntries }, fixed(10000), 1, 0),
	ranged("ClientSideCaching.TTL", func(o *Options) *time.Duration { return &o.ClientSideCaching.TTL }, nil, 0, 0),
	ranged("PubSubMode", func(o *Options) *PubSubMode { return &o.PubSubMode }, nil, PubSubAuto, PubSubPlain),
}

// withDefaults returns o (nil: the zero Options) with every zero field set
// to its default, or ErrInvalidOption for a field out of range.
func (o *Options) withDefaults(rdb redis.UniversalClient) (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	for _, r := range optionRules {
		if err := r.apply(&v, rdb); err != nil {
			return Options{}, err
		}
	}
	if isNil(v.Codec) { // nil, or a typed nil pointer such as (*JSONCodec)(nil)
		v.Codec = MsgpackCodec{}
	}
	if v.Logger == nil {
		v.Logger = slog.Default()
	}
	if isNil(v.Observer) {
		v.Observer = nil
	}
	return v, nil
}

// optionRule checks one field of Options and fills in its default.
type optionRule interface {
	apply(o *Options, rdb redis.UniversalClient) error
}

// rangedOption is an optionRule for a numeric field: zero selects def (nil:
// zero stays), and any other value must lie in [min, max] (max 0: no
// maximum).
type rangedOption[T ~int | ~int64] struct {
	name     string
	field    func(*Options) *T
	def      func(redis.UniversalClient) T
	min, max T
}

func ranged[T ~int | ~int64](name string, field func(*Options) *T, def func(redis.UniversalClient) T, min, max T) optionRule {
	return rangedOption[T]{name: name, field: field, def: def, min: min, max: max}
}

// fixed is a default that does not depend on the go-redis client.
func fixed[T any](v T) func(redis.UniversalClient) T {
	return func(redis.UniversalClient) T { return v }
}

func (r rangedOption[T]) apply(o *Options, rdb redis.UniversalClient) error {
	p := r.field(o)
	switch {
	case *p == 0 && r.def != nil:
		*p = r.def(rdb)
	case *p < r.min || (r.max != 0 && *p > r.max):
		return invalidOption(ErrInvalidOption, r.name, *p, r.rule())
	}
	return nil
}

// rule says the range the field must lie in.
func (r rangedOption[T]) rule() string {
	rule := fmt.Sprintf("%v to %v", r.min, r.max)
	if r.max == 0 {
		rule = fmt.Sprintf("at least %v", r.min)
	}
	if r.def != nil && r.min > 0 {
		rule = "0 (the default) or " + rule
	}
	return rule
}

// exclusiveOption is an optionRule for a field that must not be set
// together with another: bad reports the conflict, which why explains.
type exclusiveOption struct {
	name string
	bad  func(*Options) bool
	why  string
}

func exclusive(name string, bad func(*Options) bool, why string) optionRule {
	return exclusiveOption{name: name, bad: bad, why: why}
}

func (r exclusiveOption) apply(o *Options, _ redis.UniversalClient) error {
	if r.bad(o) {
		return invalidOption(ErrInvalidOption, r.name, "set", "it unset "+r.why)
	}
	return nil
}

// ReplicaAck configures Options.ReplicaAck.
type ReplicaAck struct {
	Replicas int           // replicas that must acknowledge; 0: off
	Timeout  time.Duration // how long to wait for them; default 1s
}

// retryWindow estimates how long go-redis may resend a command after its
// first send: each retry may dial, write and read, each up to its timeout,
// after a backoff.
func retryWindow(rdb redis.UniversalClient) time.Duration {
	var retries int
	var rt, wt, dial, backoff time.Duration
	switch c := rdb.(type) {
	case *redis.Client:
		o := c.Options()
		retries, rt, wt, dial, backoff = o.MaxRetries, o.ReadTimeout, o.WriteTimeout, o.DialTimeout, o.MaxRetryBackoff
	case *redis.ClusterClient:
		o := c.Options()
		retries, rt, wt, dial, backoff = o.MaxRetries, o.ReadTimeout, o.WriteTimeout, o.DialTimeout, o.MaxRetryBackoff
	default:
		return time.Minute
	}
	if retries <= 0 {
		return time.Second
	}
	if rt <= 0 || wt <= 0 {
		return time.Minute // blocking reads: no bound to derive
	}
	return time.Duration(retries)*(max(dial, 0)+wt+rt+max(backoff, 0)) + time.Second
}

// ObjectOption configures one typed object when it is created.
type ObjectOption func(*objectOptions)

type objectOptions struct {
	codec      Codec
	retention  *retentionBounds // WithRetention: ReliableTopic only
	partitions int              // WithPartitions: ReliableQueue only
	loader     any              // WithReadThrough: a ReadThrough[K, V], LocalCachedMap and MapCache only
	writer     any              // the map's write-through or write-behind writer: LocalCachedMap and MapCache only
	behind     *WriteBehind     // write-behind's configuration; nil: write-through
	sideCache  bool             // the client-side caching option: Bucket and Map only
}

// objectOptionsOf applies opts.
func objectOptionsOf(opts []ObjectOption) objectOptions {
	var o objectOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// WithCodec makes an object encode its values with codec instead of the
// client's default (Options.Codec). A nil codec, or a nil pointer to one,
// keeps the default.
func WithCodec(codec Codec) ObjectOption {
	return func(o *objectOptions) { o.codec = codec }
}

// retentionBounds is WithRetention's bounds.
type retentionBounds struct {
	maxLen int64
	maxAge time.Duration
}
