package redisson

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
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

	// ReplicaAck, when Replicas > 0, makes every lock acquisition wait
	// until that many replicas have acknowledged it (Redis WAIT, sent in the
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
}

const (
	defaultWatchdogTimeout = 30 * time.Second
	defaultBatchSize       = 100
	defaultCleanupTimeout  = 5 * time.Second
	defaultHealthCheck     = 5 * time.Second
	defaultLinger          = 2 * time.Second
	defaultFairWaiter      = 5 * time.Second
)

func (o *Options) withDefaults(rdb redis.UniversalClient) (Options, error) {
	var v Options
	if o != nil {
		v = *o
	}
	bad := func(field string, val any) (Options, error) {
		return Options{}, fmt.Errorf("%w: %s = %v", ErrInvalidOption, field, val)
	}
	switch {
	case v.WatchdogTimeout == 0:
		v.WatchdogTimeout = defaultWatchdogTimeout
	case v.WatchdogTimeout < 100*time.Millisecond:
		return bad("WatchdogTimeout", v.WatchdogTimeout)
	}
	switch {
	case v.WatchdogBatchSize == 0:
		v.WatchdogBatchSize = defaultBatchSize
	case v.WatchdogBatchSize < 1 || v.WatchdogBatchSize > 10000:
		return bad("WatchdogBatchSize", v.WatchdogBatchSize)
	}
	switch {
	case v.CleanupTimeout == 0:
		v.CleanupTimeout = defaultCleanupTimeout
	case v.CleanupTimeout < 0:
		return bad("CleanupTimeout", v.CleanupTimeout)
	}
	switch {
	case v.RetryWindow == 0:
		v.RetryWindow = retryWindow(rdb)
	case v.RetryWindow < time.Millisecond:
		return bad("RetryWindow", v.RetryWindow)
	}
	switch {
	case v.FairWaiterTimeout == 0:
		v.FairWaiterTimeout = defaultFairWaiter
	case v.FairWaiterTimeout < 30*time.Millisecond:
		return bad("FairWaiterTimeout", v.FairWaiterTimeout)
	}
	switch {
	case v.SubscriptionLinger == 0:
		v.SubscriptionLinger = defaultLinger
	case v.SubscriptionLinger < 0:
		return bad("SubscriptionLinger", v.SubscriptionLinger)
	}
	switch {
	case v.PubSubHealthCheck == 0:
		v.PubSubHealthCheck = defaultHealthCheck
	case v.PubSubHealthCheck < 10*time.Millisecond:
		return bad("PubSubHealthCheck", v.PubSubHealthCheck)
	}
	switch {
	case v.ReplicaAck.Replicas < 0:
		return bad("ReplicaAck.Replicas", v.ReplicaAck.Replicas)
	case v.ReplicaAck.Timeout < 0:
		return bad("ReplicaAck.Timeout", v.ReplicaAck.Timeout)
	case v.ReplicaAck.Timeout == 0:
		v.ReplicaAck.Timeout = time.Second
	}
	if v.PubSubMode < PubSubAuto || v.PubSubMode > PubSubPlain {
		return bad("PubSubMode", v.PubSubMode)
	}
	if isNil(v.Codec) { // nil, or a typed nil pointer such as (*JSONCodec)(nil)
		v.Codec = MsgpackCodec{}
	}
	return v, nil
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

// Client hands out distributed objects that live in Redis and runs the
// services they share: the script cache, one multiplexed pub/sub connection
// and the lease watchdog. A Client is safe for concurrent use. Create one per
// process and Close it when done; it does not close the go-redis client.
type Client struct {
	rdb      redis.UniversalClient
	id       string
	opts     Options
	scripts  *scripts
	pubsub   *pubsubService
	watchdog *watchdog
	janitor  *janitor
	topo     topology
	owners   atomic.Uint64
	requests atomic.Uint64
	closed   atomic.Bool

	retryWindowArg any // RetryWindow in ms, boxed once for script arguments
}

// New returns a Client that works through rdb: a *redis.Client (single node,
// or a Sentinel failover client), a *redis.ClusterClient, or any other
// redis.UniversalClient. opts may be nil for the defaults. It returns
// ErrInvalidOption for out-of-range options and an error for a nil rdb. New
// does no I/O.
func New(rdb redis.UniversalClient, opts *Options) (*Client, error) {
	if rdb == nil {
		return nil, fmt.Errorf("%w: nil redis client", ErrInvalidOption)
	}
	o, err := opts.withDefaults(rdb)
	if err != nil {
		return nil, err
	}
	topo := topologyOf(rdb)
	s := &scripts{rdb: rdb, topo: topo}
	id := uuid.NewString()
	return &Client{
		rdb:            rdb,
		id:             id,
		opts:           o,
		scripts:        s,
		topo:           topo,
		pubsub:         newPubSub(rdb, topo, id, o.PubSubMode, o.PubSubHealthCheck, o.SubscriptionLinger),
		watchdog:       newWatchdog(s, topo, o.WatchdogTimeout, o.WatchdogBatchSize),
		janitor:        newJanitor(rdb, topo, time.Second),
		retryWindowArg: strconv.FormatInt(o.RetryWindow.Milliseconds(), 10),
	}, nil
}

// ID returns the client's UUID, the first half of every owner field it
// writes (as in Redisson's "<uuid>:<thread id>").
func (c *Client) ID() string { return c.id }

// Options returns the options in force, defaults filled in.
func (c *Client) Options() Options { return c.opts }

// Close stops the watchdog and the pub/sub service and waits for their
// goroutines. Locks held through this client are no longer renewed (their
// handles report ErrClientClosed) and expire with their lease; waiters return
// ErrClientClosed. Every later call on an object of this client returns
// ErrClientClosed. Close does not close the go-redis client and is safe to
// call more than once.
func (c *Client) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.watchdog.close()
	c.pubsub.close()
	c.janitor.close()
	return nil
}

// checkObject is the precondition every object's calls share: a name, one
// usable on this topology (badName, from nameError), and an open client.
func (c *Client) checkObject(name string, badName error) error {
	switch {
	case name == "":
		return ErrEmptyName
	case badName != nil:
		return badName
	case c.closed.Load():
		return ErrClientClosed
	}
	return nil
}

// nameError returns ErrInvalidName (wrapped) when, on Redis Cluster, a name
// containing '{' does not put every one of keys in its own slot; nil
// otherwise. Redisson's key naming keeps an object's keys together only for
// names without braces or with a complete hash tag.
func (c *Client) nameError(kind, name string, keys ...string) error {
	if !c.topo.isCluster() || !strings.Contains(name, "{") {
		return nil
	}
	for _, k := range keys {
		if hashSlot(k) != hashSlot(name) {
			return objectErrorf(kind, name, "%w: braces without a hash tag put its keys in different cluster slots", ErrInvalidName)
		}
	}
	return nil
}

// newOwner returns a fresh owner field "<client uuid>:<n>".
func (c *Client) newOwner() string {
	return c.id + ":" + strconv.FormatUint(c.owners.Add(1), 10)
}

// newRequest returns an id unique within this client.
func (c *Client) newRequest() string {
	return strconv.FormatUint(c.requests.Add(1), 10)
}

func (c *Client) slot(key string) int { return c.topo.slot(key) }
