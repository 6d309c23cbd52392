package redisson

import (
	"context"
	"slices"
	"time"

	"github.com/goredisson/redisson/internal/tracking"
	"github.com/redis/go-redis/v9"
)

// The wiring of client-side caching (ClientSideCaching): the object
// option, the Client's one tracking cache, and the cached reads and
// writes of Bucket and Map.

// WithClientSideCaching makes an object serve its plain reads from an
// in-process cache that Redis keeps fresh (see ClientSideCaching and the
// guarantees below): Bucket.Get, Map.Get, Map.GetAll and Map.ContainsKey,
// Buckets.Get, AtomicLong.Get and AtomicDouble.Get. A multi-key read
// (GetAll, Buckets.Get) serves the values cached and reads the others in
// one call; each value is as fresh as a single Get's, but together they
// are not one snapshot. Other objects and reads ignore it.
//
// On a Redis Cluster client the cache keeps one tracking connection per
// master (a master reports the writes of its own keys only), to the
// masters CLUSTER SLOTS lists; it stores values only while all of them are
// established, and the loss of any one of them, or a change of the
// masters (a failover, a master added or removed, checked every
// Options.PubSubHealthCheck), drops everything and re-creates them all.
// A slot migration needs nothing: both masters are tracked throughout.
//
// What a cached read may return: after a write made through an object of
// this Client with the option (same kind and name) has returned, never the
// value it replaced; after a write made any other way
// (another process, redis-cli, another object or method of this client),
// the replaced value until the write's invalidation message arrives (one
// message from the server, well under a millisecond on a local network)
// or, should the tracking connection be lost, until the loss is detected
// (at once for a closed connection, up to 2 × Options.PubSubHealthCheck
// for one that silently stopped answering, and up to PubSubHealthCheck
// after a Sentinel failover moved the master or a Cluster failover made a
// new master). Nothing is served while the
// tracking connection is down, and a loss drops everything.
//
// Cached values are shared between callers: do not modify a slice, map or
// pointer inside a value a cached read returned.
func WithClientSideCaching() ObjectOption {
	return func(o *objectOptions) { o.sideCache = true }
}

// cacheEntry is one value or absence in the client-side cache; only pointers
// to it are stored, so a hit asserts without allocating.
type cacheEntry[T any] struct {
	v  T
	ok bool
}

// clientCache returns the client's cache, started by the first call; nil
// for a go-redis client that is neither a *redis.Client nor a
// *redis.ClusterClient (a Ring), or once the client is closed.
func (c *Client) clientCache() *tracking.Cache {
	if tc := c.csc.Load(); tc != nil {
		return tc
	}
	node, nodes := c.topo.node, c.clusterMasters()
	if node == nil {
		node = c.topo.clusterNode
	}
	if node == nil {
		return nil
	}
	c.sharedMu.Lock()
	defer c.sharedMu.Unlock()
	if tc := c.csc.Load(); tc != nil || c.closed.Load() {
		return tc
	}
	o := c.opts.ClientSideCaching
	var master interface {
		Do(ctx context.Context, args ...any) *redis.Cmd
	}
	if nodes == nil {
		master = c.rdb
	}
	tc := tracking.New(tracking.Config{
		Server:      node,
		Master:      master,
		Nodes:       nodes,
		MaxEntries:  o.MaxEntries,
		TTL:         o.TTL,
		Prefixes:    append([]string(nil), o.Prefixes...),
		HealthCheck: c.opts.PubSubHealthCheck,
		Event: func(_ string, err error) {
			c.emit.emit(Event{Type: EventPubSubLost, Node: node.Addr, Channels: 1, Err: err}) // "" on Cluster: one of its masters
		},
	})
	c.csc.Store(tc)
	return tc
}

// clusterMasters returns, on Cluster, the function that lists the
// addresses of the masters serving slots (CLUSTER SLOTS, asked of any
// node), one tracking connection each; nil elsewhere.
func (c *Client) clusterMasters() func(ctx context.Context) ([]string, error) {
	cc := c.topo.cluster
	if cc == nil {
		return nil
	}
	return func(ctx context.Context) ([]string, error) {
		slots, err := cc.ClusterSlots(ctx).Result()
		if err != nil {
			return nil, err
		}
		var addrs []string
		for _, s := range slots {
			if len(s.Nodes) > 0 && !slices.Contains(addrs, s.Nodes[0].Addr) {
				addrs = append(addrs, s.Nodes[0].Addr)
			}
		}
		return addrs, nil
	}
}

// cacheHit returns the cached value of key's field, when the client's
// cache has one (hit).
func cacheHit[T any](c *Client, key, field string) (v T, ok, hit bool) {
	tc := c.csc.Load()
	if tc == nil {
		return v, false, false
	}
	return cached[T](tc, key, field)
}

// cached returns tc's value of key's field, when tc holds one of type T
// (hit): ok false for a cached absence.
func cached[T any](tc *tracking.Cache, key, field string) (v T, ok, hit bool) {
	if x, hit := tc.Get(key, field); hit {
		if e, ok := x.(*cacheEntry[T]); ok {
			return e.v, e.ok, true
		}
	}
	return v, false, false
}

// cachedGet is Bucket.Get (field "") and Map.Get (the encoded map key)
// through the client-side cache tc: a hit, or one cached_get call whose
// value and absence are cached when nothing invalidated the key meanwhile,
// until the key's expiry in Redis at the latest.
func cachedGet[T any](ctx context.Context, o *base, tc *tracking.Cache, field string) (T, bool, error) {
	return cachedRead(ctx, o, tc, field, func(reply any) (T, bool, error) { return decodeReply[T](o, reply, nil) })
}

// cachedRead is cachedGet with the reply (a bulk string or nil) decoded by
// decode; a value decode refuses is not cached.
func cachedRead[T any](ctx context.Context, o *base, tc *tracking.Cache, field string, decode func(reply any) (T, bool, error)) (T, bool, error) {
	if v, ok, hit := cached[T](tc, o.name, field); hit {
		return v, ok, nil
	}
	var zero T
	load := tc.Begin(o.name, field)
	start := time.Now()
	args := []any{}
	if field != "" {
		args = append(args, field)
	}
	o.c.trip(ctx, 1)
	reply, err := o.c.scripts.run(ctx, scriptCachedGet, []string{o.name}, args...).Slice()
	if err != nil || len(reply) != 2 {
		load.Store(nil, false)
		if err == nil {
			err = o.errorf("%w: cached_get replied %d values", ErrUnexpectedReply, len(reply))
		}
		return zero, false, o.wrap(err)
	}
	pttl, _ := reply[1].(int64)
	v, present, err := decode(reply[0])
	if err != nil {
		load.Store(nil, false)
		return zero, false, err
	}
	load.StoreUntil(&cacheEntry[T]{v: v, ok: present}, true, expiresAt(start, pttl))
	return v, present, nil
}

// expiresAt is when a value read at start from a key with pttl
// milliseconds to live (<= 0: none, or missing) stops being served; zero:
// no bound but the cache's TTL.
func expiresAt(start time.Time, pttl int64) time.Time {
	if pttl <= 0 {
		return time.Time{}
	}
	return start.Add(time.Duration(pttl) * time.Millisecond)
}

// cacheWrite marks a write of o's key through the cache tc (nil: none)
// and returns the function that ends it, which the write calls when its
// reply is in, whatever it was: until then no read caches the key, and
// the key's values are dropped at both ends.
func cacheWrite(tc *tracking.Cache, key string) func() {
	if tc == nil {
		return func() {}
	}
	tc.WriteBegin(key)
	return func() { tc.WriteEnd(key) }
}

// cacheFor returns the client-side cache for an object that asked for one
// (on: WithClientSideCaching), else nil.
func (c *Client) cacheFor(on bool) *tracking.Cache {
	if !on {
		return nil
	}
	return c.clientCache()
}

// cacheWriteKeys is cacheWrite for a write of several keys (Buckets.Set).
func cacheWriteKeys(tc *tracking.Cache, keys []string) func() {
	if tc == nil {
		return func() {}
	}
	for _, k := range keys {
		tc.WriteBegin(k)
	}
	return func() {
		for _, k := range keys {
			tc.WriteEnd(k)
		}
	}
}
