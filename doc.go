// Package redisson gives Go services the distributed coordination objects
// that Java services get from Redisson, on top of go-redis v9, and speaks
// Redisson's wire format: a Go service and a Java service that name the same
// lock exclude each other and wake each other (on a Redis 7 Cluster both
// use sharded pub/sub by default; see PubSubMode).
//
// A Client wraps any redis.UniversalClient (single node, Sentinel failover,
// Cluster) and hands out objects:
//
//	client, err := redisson.New(rdb, nil)
//	...
//	defer client.Close()
//
//	lock := client.GetLock("updateOrder") // may be shared by goroutines
//	ok, err := lock.TryLock(ctx, 100*time.Second, 10*time.Second) // wait up to 100s, hold for 10s
//	if err != nil { ... }
//	if ok {
//		defer lock.Unlock(ctx)
//		ctx, cancel := lock.Context(ctx) // cancelled on lease loss; re-entry goes through it
//		defer cancel()
//		...
//	}
//
// # Ownership
//
// Go has no thread identity and this package does not fake one. Between
// goroutines a *Lock behaves like a sync.Mutex: a handle kept in a struct
// field and shared by every request lets one goroutine hold it at a time,
// and Unlock may come from any goroutine. Every acquisition writes an owner
// of its own into Redis, "<client uuid>:<owner number>". Re-entry is
// explicit: a nested Lock or TryLock re-enters (hold count 2, as in
// Redisson) only when given the context of the hold, from lock.Context or
// Lock.Do; without it, it waits like any other owner. Read locks are
// shared: goroutines read through one handle at once.
//
// # Leases, the watchdog and fencing
//
// A lock taken with a lease expires after it unless unlocked first. A lock
// taken without one gets the client's watchdog timeout (30s by default) and
// one watchdog goroutine per Client renews every such lease each third of
// that, in batched, pipelined script calls. When a hold is lost (its key
// expired or was deleted, or it could not be renewed in time) the handle's
// Done channel closes and Err reports ErrLeaseLost; Context gives a context
// cancelled at that moment. Every acquisition also yields a fencing token
// (Token) that grows with each acquisition, so that a resource can refuse a
// holder whose lease ran out during a pause.
//
// # Objects
//
// Every object the Client hands out, with the constructor that returns it.
// Constructors do no I/O. Typed objects are created by generic package
// functions, because methods cannot have type parameters; their values go
// through a Codec (MsgpackCodec by default, WithCodec per object).
//
// Locks and synchronizers:
//   - Client.GetLock: Lock, a reentrant lock with leases, a watchdog and fencing tokens (RLock).
//   - Client.GetFairLock: a Lock granted in request order across processes (RFairLock).
//   - Client.GetReadWriteLock: ReadWriteLock, many readers or one writer (RReadWriteLock).
//   - NewMultiLock: MultiLock, all of several locks or none (RedissonMultiLock).
//   - NewRedLock: RedLock, a majority of locks on independent masters (RedissonRedLock).
//   - NewRedisLogger: RedisLogger, go-redis's own log lines as slog records (install with redis.SetLogger).
//   - Client.GetSemaphore: Semaphore, counted permits without owners (RSemaphore).
//   - Client.GetPermitExpirableSemaphore: PermitExpirableSemaphore, permits with ids and leases.
//   - Client.GetCountDownLatch: CountDownLatch, waiters released at zero (RCountDownLatch).
//   - Client.GetElection: Election, leader election over a Lock; the term is its fencing token.
//   - Client.GetScheduler: Scheduler, cron or interval jobs fired once per instant across instances, on the server clock.
//   - Client.GetIdempotencyRecord: IdempotencyRecord, work run once per key under a lease, its result replayed.
//
// Rate limiting:
//   - Client.GetRateLimiter: RateLimiter, Redisson's sliding-window RRateLimiter.
//   - Client.GetFixedWindowLimiter: FixedWindowLimiter, a KeyedLimiter, one counter per identity and window.
//   - Client.GetGCRALimiter: GCRALimiter, a KeyedLimiter by the generic cell rate algorithm.
//
// The httplimit package turns a KeyedLimiter into net/http middleware; it
// also limits requests in flight (NewConcurrency) and makes requests
// idempotent per Idempotency-Key (NewIdempotency, over IdempotencyRecord).
//
// Values and counters:
//   - GetBucket: Bucket, one typed value (RBucket).
//   - Client.GetAtomicLong: AtomicLong, an int64 counter (RAtomicLong).
//   - Client.GetIdGenerator: IdGenerator, unique ids allocated in blocks (RIdGenerator).
//   - GetBloomFilter: BloomFilter, Redisson's layout and bit positions (RBloomFilter).
//   - Client.GetAtomicDouble: AtomicDouble, a float64 counter as decimal text (RAtomicDouble).
//   - GetBuckets: Buckets, many Buckets read or written per call (RBuckets).
//   - GetTxBucket, GetTxMap, GetTxSet: TxBucket, TxMap, TxSet, a Bucket, Map and Set inside a Transaction
//     (Client.CreateTransaction; RTransaction): writes locked as Redisson locks them, applied by Commit;
//     GetTxLocalCachedMap: TxLocalCachedMap, whose Commit also invalidates the near caches;
//     GetTxMapCache: TxMapCache, a MapCache whose Commit writes TTLs and max idle as MapCache does.
//   - Client.CreateBatch: Batch, calls on several objects sent together, each returning a Future (RBatch);
//     its handles GetBatchBucket, Batch.GetAtomicLong, GetBatchMap, GetBatchSet, GetBatchList and GetBatchQueue.
//   - Client.GetLongAdder: LongAdder, an int64 sum counted in memory, summed by message (RLongAdder).
//   - Client.GetDoubleAdder: DoubleAdder, LongAdder's float64 twin (RDoubleAdder).
//
// Maps and caches:
//   - GetMap: Map, a typed hash (RMap).
//   - GetMapCache: MapCache, a map whose entries have a TTL and a max idle time (RMapCache).
//   - GetSetCache: SetCache, a set whose members each have a TTL (RSetCache).
//   - GetListMultimap, GetSetMultimap: ListMultimap, SetMultimap, a list or set of values per key (RListMultimap, RSetMultimap).
//   - GetLocalCachedMap: LocalCachedMap, a Map read from memory, invalidated across instances (RLocalCachedMap).
//
// Collections and queues:
//   - GetList: List, a typed Redis list (RList).
//   - GetSet: Set, a typed Redis set (RSet).
//   - GetSortedSet: SortedSet, a typed zset with scores (RScoredSortedSet).
//   - GetQueue: Queue, offer at the tail and poll at the head (RQueue).
//   - GetDeque: Deque, both ends of one list (RDeque).
//   - GetBlockingQueue: BlockingQueue, a Queue whose Take waits and never loses an element (RBlockingQueue).
//   - GetBlockingDeque: BlockingDeque, a BlockingQueue whose takers wait at either end (RBlockingDeque).
//   - GetPriorityQueue: PriorityQueue, a sorted list written under Redisson's lock, least first (RPriorityQueue, RPriorityBlockingQueue).
//   - GetBoundedBlockingQueue: BoundedBlockingQueue, a BlockingQueue with a capacity (RBoundedBlockingQueue).
//   - GetDelayedQueue: DelayedQueue, elements moved into a destination queue once due (RDelayedQueue).
//   - GetReliableQueue: ReliableQueue, a job queue on a stream whose jobs survive a worker's crash: leases, retries, dead letters.
//
// Messaging:
//   - GetTopic: Topic, typed publish and subscribe on a channel (RTopic).
//   - GetShardedTopic: a Topic on a sharded channel, SPUBLISH and SSUBSCRIBE (RShardedTopic).
//   - GetReliableTopic: ReliableTopic, durable fan-out on a stream, a position per subscriber (RReliableTopic).
//
// Inspection, for operators and admin pages: Client.InspectLock (and its
// fair and read-write forms), InspectSemaphore,
// InspectPermitExpirableSemaphore, InspectCountDownLatch,
// InspectRateLimiter, InspectBucket, InspectMap, InspectMapCache, InspectQueue
// and ListObjects read an
// object's state in Redis whoever holds it, Java's Redisson included,
// without changing it; cmd/redissonctl prints them.
//
// # Shared services
//
// Scripts are sent with EVALSHA only and loaded on NOSCRIPT. All waiting and
// all topics in a Client go through one pub/sub connection (one per master
// for sharded channels on Cluster) whose subscriptions are counted per
// channel. Every wait is also bounded by the holder's remaining lease, so a
// lost message delays a waiter but never strands it.
//
// # Errors
//
// Errors wrap the sentinels of errors.go (ErrNotHeld, ErrLeaseLost,
// ErrWrongType, ErrNegativeDuration, ErrEmptyName, ErrClientClosed, ...);
// compare with errors.Is. A blocking call whose context ends returns an error
// matching ctx.Err() and leaves nothing behind in Redis. Reaching Redis fails
// the same way from every call: ErrAuth (a wrong or missing password),
// ErrUnreachable (no connection could be made; the call did not run),
// ErrUnsupported (the server lacks a command, named in the error). New does
// no I/O: Client.Ping is the readiness check, and Client.Capabilities says
// what the server supports.
//
// # Design
//
// docs/architecture.md in the repository draws the design: the layers, the
// shared services and who owns which goroutine, how a lock moves through
// them, the cross-client hand-off, the pub/sub modes and the script runner.
package redisson
