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
// Locks and synchronizers: Lock, ReadWriteLock, FairLock, MultiLock,
// RedLock, Semaphore, PermitExpirableSemaphore, CountDownLatch. Rate
// limiting: RateLimiter (Redisson's RRateLimiter), and the KeyedLimiter
// implementations FixedWindowLimiter and GCRALimiter, which the httplimit
// package turns into net/http middleware. Typed objects, created by generic
// package functions because methods cannot have type parameters:
// GetBucket, GetMap, GetTopic, GetShardedTopic, GetBloomFilter, plus
// AtomicLong and IdGenerator; their values go through a Codec
// (MsgpackCodec by default).
//
// Inspection, for operators and admin pages: Client.InspectLock (and its
// fair and read-write forms), InspectSemaphore,
// InspectPermitExpirableSemaphore, InspectCountDownLatch,
// InspectRateLimiter, InspectBucket, InspectMap and ListObjects read an
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
// matching ctx.Err() and leaves nothing behind in Redis.
//
// # Design
//
// docs/architecture.md in the repository draws the design: the layers, the
// shared services and who owns which goroutine, how a lock moves through
// them, the cross-client hand-off, the pub/sub modes and the script runner.
package redisson
