package redisson

import (
	"context"
	"iter"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The inspection API, the keyspace: ListObjects names the objects behind
// the keys this library and Redisson write (docs/keys.md), found with SCAN
// on every master, batch by batch.

// ObjectKind is what ListObjects recognises a key as, from Redisson's key
// naming and the key's Redis type.
type ObjectKind string

// The kinds ListObjects reports. A key names its object in ObjectInfo.Name.
const (
	// KindLock is a lock hash of owners (Lock, or FairLock: the hash alone
	// does not say; a fair lock with waiters also has a KindFairQueue key):
	// a hash of at most 64 fields, each "<id>:<n>" (or with ":write") with
	// an integer count. A Map that happens to look so is listed as a lock.
	KindLock ObjectKind = "lock"
	// KindReadWriteLock is a read-write lock hash (a field "mode").
	KindReadWriteLock ObjectKind = "rwlock"
	// KindFencingCounter is redisson_lock_token:{name}.
	KindFencingCounter ObjectKind = "lock-token"
	// KindFairQueue, KindFairDeadlines and KindFairLiveness are a fair
	// lock's redisson_lock_queue:{name}, redisson_lock_timeout:{name} and
	// redisson_lock_alive:{name}.
	KindFairQueue     ObjectKind = "fair-queue"
	KindFairDeadlines ObjectKind = "fair-deadlines"
	KindFairLiveness  ObjectKind = "fair-alive"
	// KindReadLease is one read hold's lease {name}:<owner>:rwlock_timeout:<n>.
	KindReadLease ObjectKind = "read-lease"
	// KindHeldPermits is a PermitExpirableSemaphore's {name}:timeout.
	KindHeldPermits ObjectKind = "held-permits"
	// KindRateLimiter is a RateLimiter's config hash, KindRateLimiterState
	// its window ({name}:value, {name}:permits and their per-client forms).
	KindRateLimiter      ObjectKind = "ratelimiter"
	KindRateLimiterState ObjectKind = "ratelimiter-state"
	// KindFixedWindowLimiter and KindGCRALimiter are one identity's state
	// of a keyed limiter, the string <name>:{<key>} with an expiry: a
	// FixedWindowLimiter's count (any decimal string below 2^53), or a
	// GCRALimiter's TAT (a time in µs that agrees with the key's expiry).
	// Name is the limiter's name, Identity the key: the key is split at
	// its last ":{", so a name containing ":{" is listed whole while an
	// identity containing it is not. A Bucket or AtomicLong named so that
	// holds a number with a TTL is listed as a fixed window (the key alone
	// does not say which). Client.InspectKeyedLimiter reads one.
	KindFixedWindowLimiter ObjectKind = "fixedwindow-limiter"
	KindGCRALimiter        ObjectKind = "gcra-limiter"
	// KindBloomConfig is a BloomFilter's {name}:config, KindIDAllocation an
	// IdGenerator's {name}:allocation.
	KindBloomConfig  ObjectKind = "bloom-config"
	KindIDAllocation ObjectKind = "id-allocation"
	// KindAdderFlushed is a LongAdder's or DoubleAdder's {name}:adder-flushed
	// (the flushed mode's durable part).
	KindAdderFlushed ObjectKind = "adder-flushed"
	// KindMap is any other hash: a Map, or a LocalCachedMap's hash (the
	// key alone does not say which).
	KindMap ObjectKind = "map"
	// KindMapCache is a MapCache's hash of entries at its name: a hash with
	// a companion key in the same slot (redisson__timeout__set:{name},
	// redisson__idle__set:{name}, the last-access zset or the options), or
	// whose values all have MapCache's entry encoding (an 8-byte max idle,
	// an 8-byte little-endian length, the encoded value).
	KindMapCache ObjectKind = "mapcache"
	// KindMapCacheExpiry, KindMapCacheIdle and KindMapCacheAccess are a
	// MapCache's redisson__timeout__set:{name} (entry deadlines),
	// redisson__idle__set:{name} (idle deadlines) and
	// redisson__map_cache__last_access__set:{name} (LRU times or LFU
	// uses, once SetMaxSize set a limit); KindMapCacheOptions is its
	// {name}:redisson_options hash (max-size, mode, has-listeners).
	KindMapCacheExpiry  ObjectKind = "mapcache-expiry"
	KindMapCacheIdle    ObjectKind = "mapcache-idle"
	KindMapCacheAccess  ObjectKind = "mapcache-access"
	KindMapCacheOptions ObjectKind = "mapcache-options"
	// KindLocalCacheUpdates is a LocalCachedMap's
	// redisson__cache_updates_log:{name} (written with ReconnectLoad);
	// KindLocalCacheClear is the acknowledgement counter name:clear:<id> of
	// one ClearLocalCache call, which lives a minute at most.
	KindLocalCacheUpdates ObjectKind = "localcache-updates"
	KindLocalCacheClear   ObjectKind = "localcache-clear"
	// KindQueueCapacity is a BoundedBlockingQueue's redisson_bqs:{name},
	// its free capacity.
	KindQueueCapacity ObjectKind = "queue-capacity"
	// KindQueueInFlight is one client's in-flight list of a blocking queue,
	// redisson_queue_inflight:{name}:<client uuid> (BlockingQueue) or
	// redisson_bqueue_inflight:{name}:<client uuid> (BoundedBlockingQueue):
	// elements moved for its takers and not yet settled. One that lingers
	// holds the elements of a client that died between move and settle.
	KindQueueInFlight ObjectKind = "queue-inflight"
	// KindQueueInFlightRegistry is a zset at
	// redisson_queue_inflight:{name} or redisson_bqueue_inflight:{name}:
	// the queue's registry of in-flight lists.
	KindQueueInFlightRegistry ObjectKind = "queue-inflight-registry"
	// KindQueueDrain is the list of one Drain call,
	// redisson_queue_drain:{name}:<client uuid>:<n>; like an in-flight list
	// it lives one round trip unless its client died meanwhile.
	KindQueueDrain ObjectKind = "queue-drain"
	// KindList is a list at a name of its own: a List or a queue (Queue,
	// Deque, BlockingQueue, BoundedBlockingQueue, a Redisson RQueue such as
	// a DelayedQueue's destination); the key alone does not say which (a
	// bounded queue also has a KindQueueCapacity key).
	KindList ObjectKind = "list"
	// KindSet is a set at a name of its own: a Set.
	KindSet ObjectKind = "set"
	// KindSortedSet is a zset at a name of its own: a SortedSet.
	KindSortedSet ObjectKind = "sorted-set"
	// KindSetCache is a zset whose scores are member expiries: a SetCache.
	// It is told from a SortedSet by its scores (inspect_key.lua): a member
	// scored as one without TTL, or a first page of scores that are all
	// whole milliseconds between 2001 and 2286, so a SortedSet of such
	// timestamps lists as set-cache too.
	KindSetCache ObjectKind = "set-cache"
	// KindStream is a stream at a name of its own: a ReliableQueue's jobs, a
	// ReliableTopic, or a Redisson RStream; the key alone does not say which.
	KindStream ObjectKind = "stream"
	// KindReliableDelayed is a ReliableQueue's redisson_rq_delayed:{name}
	// or redisson_rq_jobs:{name}: its delayed jobs and retries waiting for
	// their back-off.
	KindReliableDelayed ObjectKind = "reliable-delayed"
	// KindDeadLetters is a ReliableQueue's redisson_rq_dead:{name}.
	KindDeadLetters ObjectKind = "dead-letters"
	// KindReliablePartitions is a partitioned ReliableQueue's
	// redisson_rq_partitions:{name}, its partition count.
	KindReliablePartitions ObjectKind = "reliable-partitions"
	// KindElection is an Election's redisson_election:{name} (its lock is a
	// KindLock at name).
	KindElection ObjectKind = "election"
	// KindScheduler is a Scheduler's job definitions,
	// redisson_scheduler:{name}; KindSchedulerState its fire state, fencing
	// token and runs in progress.
	KindScheduler      ObjectKind = "scheduler"
	KindSchedulerState ObjectKind = "scheduler-state"
	// KindDelayDeadlines and KindDelayPending are a DelayedQueue's
	// redisson_delay_queue_timeout:{name} and redisson_delay_queue:{name};
	// their Name is the queue's destination.
	KindDelayDeadlines ObjectKind = "delay-deadlines"
	KindDelayPending   ObjectKind = "delay-pending"
	// KindValue is any other string at a name of its own: a Bucket, AtomicLong,
	// Semaphore, PermitExpirableSemaphore count, CountDownLatch, BloomFilter
	// bitmap or IdGenerator (the key alone does not say which).
	KindValue ObjectKind = "value"
	// KindBookkeeping is a key this library writes for its own calls:
	// release latches, call markers and the semaphore's queue. They
	// expire on their own.
	KindBookkeeping ObjectKind = "bookkeeping"
	// KindMultimapValues is one key's values of a ListMultimap (a list) or
	// SetMultimap (a set), {name}:<id>, the id 22 characters of Base64; the
	// multimap's index hash at name lists as KindMap.
	KindMultimapValues ObjectKind = "multimap-values"
	// KindOther is a key of a type no object uses at a name of its own.
	KindOther ObjectKind = "other"
)

// ObjectInfo is one key ListObjects found.
type ObjectInfo struct {
	// Key is the Redis key, Name the object it belongs to.
	Key  string     `json:"key"`
	Name string     `json:"name"`
	Kind ObjectKind `json:"kind"`
	// Identity is a keyed limiter entry's identity key (KindFixedWindowLimiter,
	// KindGCRALimiter); "" for other kinds.
	Identity string `json:"identity,omitempty"`
	// Type is the key's Redis type ("hash", "string", "zset", ...).
	Type string `json:"type"`
	// TTL is the remaining time to live; 0 with NoExpiry for a key
	// without one.
	TTL      time.Duration `json:"ttl"`
	NoExpiry bool          `json:"no_expiry"`
	// Node is the address of the Cluster master the key was found on; ""
	// elsewhere.
	Node string `json:"node"`
}

// ListObjects returns an iterator over the keys matching pattern (SCAN's
// MATCH syntax; "" is "*"), each named with its object and kind, reading
// about batch keys per round trip from each master in turn (all masters of
// a Cluster, found with ForEachMaster): SCAN, then one pipeline of a
// read-only script per key for its type, TTL and shape. It never reads the
// keyspace at once and never uses KEYS. It does no I/O until ranged over:
//
//	it := c.ListObjects("orders:*", 100)
//	for o := range it.All(ctx) {
//		...
//	}
//	if err := it.Err(); err != nil {
//		...
//	}
//
// As with SCAN, a key present for the whole iteration is yielded at least
// once (possibly more than once); keys written or deleted meanwhile may or
// may not be. A batch below 1 makes Err return ErrInvalidBatch.
func (c *Client) ListObjects(pattern string, batch int) *ObjectIterator {
	if pattern == "" {
		pattern = "*"
	}
	return &ObjectIterator{c: c, pattern: pattern, batch: batch}
}

// ObjectIterator iterates the keys ListObjects finds. It is for one
// goroutine at a time; All may be ranged over more than once, each time a
// new scan. Each batch costs two round trips to one node (SCAN, then the
// pipeline) and O(batch) on the server (O(fields) for a small hash), so a
// full walk is O(keys). It has no Redisson counterpart (RKeys.getKeys
// lists names without kinds). The masters are those the Cluster client
// knows when the walk starts; a master that fails meanwhile ends the walk
// with its error (a SCAN cursor is only valid on its node), and keys it
// held that moved to a replica are not listed in that walk.
type ObjectIterator struct {
	c       *Client
	pattern string
	batch   int
	err     error
}

// All yields the objects, scanning with ctx. It stops at the first error,
// which Err then returns.
func (it *ObjectIterator) All(ctx context.Context) iter.Seq[ObjectInfo] {
	return func(yield func(ObjectInfo) bool) {
		it.err = it.scan(ctx, yield)
	}
}

// Err returns the error that ended the last iteration, or nil.
func (it *ObjectIterator) Err() error { return it.err }

// scanNode is one master to scan and its address.
type scanNode struct {
	cmd  redis.Cmdable
	addr string
}

func (it *ObjectIterator) scan(ctx context.Context, yield func(ObjectInfo) bool) error {
	c := it.c
	// Not observed (no op): each page is two round trips, its errors are
	// the node's own.
	open := func() error {
		if c.closed.Load() {
			return ErrClientClosed
		}
		return nil
	}
	p := &pager{c: c, kind: "list", name: it.pattern, batch: it.batch, check: open, wrap: func(err error) error { return err }}
	if err := p.start(ctx); err != nil {
		return err
	}
	nodes, err := c.masters(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		read := func(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
			return n.cmd.Scan(ctx, cursor, it.pattern, count).Result()
		}
		done, err := p.cursor(ctx, read, func(keys []string) (bool, error) {
			objs, err := describeKeys(ctx, n, keys)
			if err != nil {
				return false, err
			}
			for _, o := range objs {
				if !yield(o) {
					return false, nil
				}
			}
			return true, nil
		})
		if err != nil || !done {
			return err
		}
	}
	return nil
}

// masters returns every master to scan, in address order: the Cluster's,
// or the one server behind the client (no address: a Sentinel client's
// master may change).
func (c *Client) masters(ctx context.Context) ([]scanNode, error) {
	cc := c.topo.cluster
	if cc == nil {
		return []scanNode{{cmd: c.rdb}}, nil
	}
	var mu sync.Mutex
	var nodes []scanNode
	err := cc.ForEachMaster(ctx, func(_ context.Context, node *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		nodes = append(nodes, scanNode{cmd: node, addr: node.Options().Addr})
		return nil
	})
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].addr < nodes[j].addr })
	return nodes, err
}

// describeKeys runs inspect_key on each key (with the MapCache companions
// in its slot, so that a MapCache's hash is told from a Map's in the same
// round trip) in one pipeline to the node
// that holds them, loading the script there first if it is missing. Keys
// gone meanwhile are left out.
func describeKeys(ctx context.Context, n scanNode, keys []string) ([]ObjectInfo, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(keys))
		_, err := n.cmd.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				cmds[i] = p.EvalSha(ctx, scriptInspectKey.SHA(), mapCacheCompanions(k))
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && isNoScript(err) {
		if err = n.cmd.ScriptLoad(ctx, scriptInspectKey.Source()).Err(); err != nil {
			return nil, err
		}
		cmds, err = run()
	}
	if err != nil {
		return nil, err
	}
	out := make([]ObjectInfo, 0, len(keys))
	for i, k := range keys {
		res, err := cmds[i].Slice()
		if err != nil {
			return nil, err
		}
		typ, _ := res[0].(string)
		pttl, _ := res[1].(int64)
		shape, _ := res[2].(string)
		if typ == "none" || len(res) != 3 {
			continue
		}
		o := ObjectInfo{Key: k, Type: typ, Node: n.addr}
		if pttl >= 0 {
			o.TTL = time.Duration(pttl) * time.Millisecond
		} else {
			o.NoExpiry = true
		}
		o.Kind, o.Name = kindOf(k, typ, shape)
		if o.Kind == KindFixedWindowLimiter || o.Kind == KindGCRALimiter {
			o.Name, o.Identity = splitIdentityKey(k)
		}
		out = append(out, o)
	}
	return out, nil
}
