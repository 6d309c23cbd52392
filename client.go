package redisson

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/goredisson/redisson/internal/tracking"
	"github.com/redis/go-redis/v9"
)

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
	janitor  *janitorService
	delayq   *delayMover
	queues   *queueService
	topo     topology
	emit     *emitter // background events: logged, and given to the Observer
	observed bool     // Options.Observer is set: operations are recorded (observe.go)
	owners   atomic.Uint64
	requests atomic.Uint64
	waiters  atomic.Int64 // callers blocked waiting for another holder (Stats)
	closed   atomic.Bool
	closing  chan struct{} // closed by Close: wakes callers asleep between tries

	// handles runs the goroutines of object handles (a LocalCachedMap's):
	// none starts once Close has begun, and Close joins them last. Each
	// ends when closing is closed.
	handles *lazyLoop
	// shared holds what the objects of one name share within the client,
	// by kind and name: the adders' subscriptions (adderhub.go's hubOf).
	sharedMu sync.Mutex
	shared   map[string]any

	retryWindowArg any // RetryWindow in ms, boxed once for script arguments
	// tokenExtra is the acquire arguments of the fenced kinds after the
	// common ones, [token TTL] (see tokenTTLArg), built once and never
	// modified: every identity of those kinds shares it.
	tokenExtra []any

	mapCaches *mapCacheService // evicts expired MapCache entries, joins their listeners
	caches    cacheRegistry    // the caches' counts, for Stats.Cache
	caps      *capsProbe       // the server's Capabilities, detected once
	sub       *subscriber      // the pub/sub engine's go-redis client, closed after it

	// mapLoaders holds the MapCaches' read-through loaders, one per name
	// and types, shared by the handles (any: a *readThrough[K, V]).
	mapLoaders sync.Map
	// writers holds the write-behind queues, written out by Close;
	// mapWriters the MapCaches' Writers, one per name and types.
	writers    writerRegistry
	mapWriters sync.Map

	csc atomic.Pointer[tracking.Cache] // the client-side cache, started lazily (clientcache.go)
}

// New returns a Client that works through rdb: a *redis.Client (single node,
// or a Sentinel failover client), a *redis.ClusterClient, or any other
// redis.UniversalClient. opts may be nil for the defaults. It returns
// ErrInvalidOption for out-of-range options and an error for a nil rdb. New
// does no I/O.
func New(rdb redis.UniversalClient, opts *Options) (*Client, error) {
	return newTuned(rdb, opts, defaultTuning)
}

// tuning is the services' settings that Options does not expose. New uses
// defaultTuning; a test that must see what a service would soon clean up
// stretches them through newTuned.
type tuning struct {
	janitorEvery  time.Duration // the janitor's flush interval
	mapCacheEvery time.Duration // the MapCache eviction pass's interval
}

var defaultTuning = tuning{janitorEvery: time.Second, mapCacheEvery: mapCacheEvictEvery}

// newTuned is New with the services tuned by tune.
func newTuned(rdb redis.UniversalClient, opts *Options, tune tuning) (*Client, error) {
	if rdb == nil {
		return nil, invalidOption(ErrInvalidOption, "redis client", nil, "a go-redis client")
	}
	o, err := opts.withDefaults(rdb)
	if err != nil {
		return nil, err
	}
	topo := topologyOf(rdb)
	em := &emitter{log: o.Logger, obs: o.Observer}
	s := newScripts(rdb, topo, em, o)
	id := uuid.NewString()
	caps := newCapsProbe(rdb, topo)
	sub := newSubscriber(rdb, topo, em)
	ps := newPubSub(sub, topo, id, o.PubSubMode, o.PubSubHealthCheck, o.SubscriptionLinger, em, caps)
	c := &Client{
		rdb:            rdb,
		id:             id,
		opts:           o,
		emit:           em,
		observed:       o.Observer != nil,
		scripts:        s,
		topo:           topo,
		pubsub:         ps,
		delayq:         newDelayMover(s, ps, em),
		mapCaches:      newMapCacheService(s, ps, em, tune.mapCacheEvery, mapCacheEvictBatch),
		watchdog:       newWatchdog(s, topo, em, o.WatchdogTimeout, o.WatchdogBatchSize, o.CleanupTimeout),
		janitor:        newJanitor(rdb, topo, em, tune.janitorEvery),
		queues:         newQueueService(rdb, s, ps, em, o.CleanupTimeout),
		handles:        newLazyLoop(),
		caps:           caps,
		sub:            sub,
		closing:        make(chan struct{}),
		retryWindowArg: strconv.FormatInt(o.RetryWindow.Milliseconds(), 10),
	}
	c.tokenExtra = []any{c.tokenTTLArg()}
	return c, nil
}

// ID returns the client's UUID, the first half of every owner field it
// writes (as in Redisson's "<uuid>:<thread id>").
func (c *Client) ID() string { return c.id }

// Options returns the options in force, defaults filled in.
func (c *Client) Options() Options { return c.opts }

// Close stops the watchdog, the pub/sub service and the MapCache eviction
// pass and waits for their goroutines (MapCache listeners' included); a
// renewal in flight on a server that does not answer is waited for at most
// CleanupTimeout, then abandoned. Every hold of a lock taken
// through this client ends (its handle's Done closes and Err reports
// ErrClientClosed, with a watchdog lease or an explicit one); the locks
// are no longer renewed and expire in Redis with their lease; waiters return
// ErrClientClosed, blocked queue takes at once (Close waits up to a second
// for the queues' dispatcher loops to finish their BLMOVE and put back what
// they hold). The delayed queues it runs stop (a move in flight either ran
// whole on the server or not at all). Every later call on an object of this
// client returns ErrClientClosed. Before all that, it writes out the
// write-behind queues of the maps with WithWriteBehind (each for its
// CloseTimeout at most; lost keys are an EventWriteBehindDropped), while
// the client still works. Close does not close the go-redis client and is
// safe to call more than once.
func (c *Client) Close() error {
	// The write-behind queues first, while the client still works: a
	// Writer may use it.
	c.writers.closeAll()
	if c.closed.Swap(true) {
		return nil
	}
	close(c.closing)
	c.handles.stop() // no handle starts a goroutine after this
	c.queues.close()
	c.delayq.close()
	c.watchdog.close()
	c.pubsub.close()
	c.sub.close()
	c.mapCaches.close() // after pubsub: its listeners end with it
	c.janitor.close()
	c.closeClientCache()
	c.handles.wait()
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
	var buf [64]byte // a UUID, ':' and a uint64 fit: one allocation, the string
	b := append(append(buf[:0], c.id...), ':')
	return string(strconv.AppendUint(b, c.owners.Add(1), 10))
}

// newRequest returns an id unique within this client.
func (c *Client) newRequest() string {
	return strconv.FormatUint(c.requests.Add(1), 10)
}

func (c *Client) slot(key string) int { return c.topo.slot(key) }

// objectCodec resolves the codec of an object created with opts.
func (c *Client) objectCodec(opts []ObjectOption) Codec {
	var o objectOptions
	for _, f := range opts {
		if f != nil {
			f(&o)
		}
	}
	if isNil(o.codec) { // nil, or a typed nil pointer such as (*JSONCodec)(nil)
		return c.opts.Codec
	}
	return o.codec
}

// begin starts observing a public operation: with an Observer it returns
// the context the operation must run under (carrying the record) and the
// record; without one, ctx and nil, and does nothing else.
func (c *Client) begin(ctx context.Context, kind, name, op string) (context.Context, *opRecord) {
	if c.observed {
		return c.beginObserved(ctx, kind, name, op)
	}
	return ctx, nil
}

func (c *Client) beginObserved(ctx context.Context, kind, name, op string) (context.Context, *opRecord) {
	r := &opRecord{obs: c.opts.Observer, parent: recordOf(ctx)}
	r.op = Operation{Kind: kind, Name: name, Op: op, Start: time.Now()}
	r.op.Group, _ = ctx.Value(groupKey{}).(string)
	ctx = context.WithValue(ctx, opKey{}, r)
	if octx := r.obs.OperationStart(ctx, &r.op); octx != nil {
		ctx = octx
	}
	r.ctx = ctx
	return ctx, r
}

// trip counts n Redis round trips made for the operation ctx belongs to,
// when the client is observed.
func (c *Client) trip(ctx context.Context, n int) {
	if c.observed {
		countTrips(ctx, n)
	}
}

// blockStart marks the caller as blocked, waiting for another holder (see
// Stats.Waiters), and returns when the block began when observed (zero
// otherwise). blockEnd ends it.
func (c *Client) blockStart() time.Time {
	c.waiters.Add(1)
	if !c.observed {
		return time.Time{}
	}
	return time.Now()
}

// blockEnd ends a block begun at start, adding its time to the operation's
// Wait.
func (c *Client) blockEnd(ctx context.Context, start time.Time) {
	c.waiters.Add(-1)
	if start.IsZero() {
		return
	}
	if r := recordOf(ctx); r != nil {
		r.wait.Add(int64(time.Since(start)))
	}
}

// Stats returns a snapshot of the client's background state. It does no
// I/O.
func (c *Client) Stats() Stats {
	ps := c.pubsub.stats()
	live, pass, calls := c.watchdog.snapshot()
	return Stats{
		LeasesHeld:      live,
		Waiters:         int(c.waiters.Load()),
		Channels:        ps.channels,
		PubSubConns:     ps.connections,
		PubSubReplaced:  uint64(ps.replaced + ps.redialed),
		PubSubRerouted:  uint64(ps.rerouted),
		LastRenewalPass: pass,
		LastRenewalSize: calls,
		Cache:           c.cacheTotal(),
	}
}

// reject reports an operation refused before it began (bad input, a closed
// client) by a method that begins observing only once its input is checked.
func (c *Client) reject(ctx context.Context, kind, name, op string, err error) {
	if !c.observed {
		return
	}
	_, rec := c.beginObserved(ctx, kind, name, op)
	rec.end(err, OutcomeOK)
}

// tokenTTLArg is the fencing counter's idle lifetime in ms, for the acquire
// scripts ("0": no expiry; see prelude_fencing.lua).
func (c *Client) tokenTTLArg() any {
	if c.opts.TokenNeverExpires {
		return "0"
	}
	return strconv.FormatInt(max(c.opts.TokenIdleTTL.Milliseconds(), 1), 10)
}

// closeClientCache stops the client-side cache, if it was started.
func (c *Client) closeClientCache() {
	c.sharedMu.Lock()
	tc := c.csc.Load()
	c.sharedMu.Unlock()
	if tc != nil {
		tc.Close()
	}
}

// cacheTotal is Stats.Cache: the caches' counts and the client-side
// cache's.
func (c *Client) cacheTotal() CacheStats {
	s := c.caches.total()
	if tc := c.csc.Load(); tc != nil {
		st := tc.Stats()
		s.add(CacheStats{Hits: st.Hits, Misses: st.Misses, Evictions: st.Evictions, Invalidations: st.Invalidations, Size: st.Entries})
	}
	return s
}
