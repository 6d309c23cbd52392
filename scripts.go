package redisson

// Every Lua script the library runs, one lua/<name>.lua file each, grouped by
// the object that runs it. mustScript joins a script after the preludes its
// header names (lua/prelude_*.lua: shared local functions, never run alone),
// so the source loaded and hashed is the whole of what Redis runs.
var (
	// Lock (rlock*.go, lockkind.go): the reentrant lock, and what the fair
	// and read-write locks share with it (state, renewal, stale field drop).
	// lock_release joins prelude_release_latch.
	scriptLockAcquire = mustScript("lock_acquire")
	scriptLockRelease = mustScript("lock_release")
	scriptLockForce   = mustScript("lock_force_unlock")
	scriptLockRenew   = mustScript("lock_renew")
	scriptLockDrop    = mustScript("lock_drop_owner")
	scriptLockState   = mustScript("lock_state")

	// FairLock (fairlock.go). fair_release joins prelude_release_latch.
	scriptFairAcquire = mustScript("fair_acquire")
	scriptFairRelease = mustScript("fair_release")
	scriptFairForce   = mustScript("fair_force_unlock")
	scriptFairLeave   = mustScript("fair_leave")

	// ReadWriteLock (lockkind.go, rwlock.go): the read and write sides. The
	// two releases join prelude_release_latch.
	scriptRWReadAcquire  = mustScript("rw_read_acquire")
	scriptRWReadRelease  = mustScript("rw_read_release")
	scriptRWReadRenew    = mustScript("rw_read_renew")
	scriptRWWriteAcquire = mustScript("rw_write_acquire")
	scriptRWWriteRelease = mustScript("rw_write_release")
	scriptRWWriteDrop    = mustScript("rw_write_drop")
	scriptRWForce        = mustScript("rw_force_unlock")
	scriptRWState        = mustScript("rw_state")

	// Election (election.go): a leader record beside the election's lock
	// (a plain Lock), written by the leader, validated against the lock.
	scriptElectionAnnounce = mustScript("election_announce")
	scriptElectionLeader   = mustScript("election_leader")
	scriptElectionResign   = mustScript("election_resign")

	// Scheduler (scheduler*.go, jobrun.go): job definitions and last fired
	// instants in two hashes, each run's lease in its job's sorted set of
	// runs; sched_fire decides each (job, instant) on the server's clock.
	scriptSchedAdd    = mustScript("sched_add")
	scriptSchedRemove = mustScript("sched_remove")
	scriptSchedLoad   = mustScript("sched_load")
	scriptSchedFire   = mustScript("sched_fire")
	scriptSchedRenew  = mustScript("sched_renew")
	scriptSchedDone   = mustScript("sched_done")
	// inspect_sched_runs reads the runs in progress (inspect_scheduler.go).
	scriptInspectSchedRuns = mustScript("inspect_sched_runs")

	// IdempotencyRecord (idempotency_record.go): one hash per key; idem_begin
	// decides run, replay or wait in one call.
	scriptIdemBegin  = mustScript("idem_begin")
	scriptIdemFinish = mustScript("idem_finish")
	scriptIdemRenew  = mustScript("idem_renew")

	// Semaphore (semaphore.go): Redisson's RSemaphore, with a queue of
	// this library's waiters and a marker per call. acquire, add, set and
	// cancel join prelude_semqueue.
	scriptSemAcquire = mustScript("semaphore_acquire")
	scriptSemAdd     = mustScript("semaphore_add")
	scriptSemSet     = mustScript("semaphore_set")
	scriptSemDrain   = mustScript("semaphore_drain")
	scriptSemCancel  = mustScript("semaphore_cancel")
	scriptSemDelete  = mustScript("semaphore_delete")

	// PermitExpirableSemaphore (permitsemaphore.go): Redisson's
	// RPermitExpirableSemaphore, with the Semaphore's queue of waiters. All
	// but permit_set and permit_leave join prelude_semqueue and
	// prelude_permits; permit_leave joins prelude_semqueue.
	scriptPermitAcquire   = mustScript("permit_acquire")
	scriptPermitRelease   = mustScript("permit_release")
	scriptPermitUpdate    = mustScript("permit_update")
	scriptPermitAvailable = mustScript("permit_available")
	scriptPermitSet       = mustScript("permit_set")
	scriptPermitAdd       = mustScript("permit_add")
	scriptPermitLeave     = mustScript("permit_leave")

	// CountDownLatch (countdownlatch.go).
	scriptLatchSet       = mustScript("latch_set")
	scriptLatchCountDown = mustScript("latch_count_down")
	scriptLatchDelete    = mustScript("latch_delete")

	// RateLimiter (ratelimit.go): Redisson's RRateLimiter, a sliding window
	// over a grant log. acquire and available join prelude_ratelimit_config
	// and prelude_ratelimit_log; undo joins prelude_ratelimit_config.
	scriptRateAcquire   = mustScript("ratelimit_acquire")
	scriptRateSet       = mustScript("ratelimit_set")
	scriptRateAvailable = mustScript("ratelimit_available")
	scriptRateUndo      = mustScript("ratelimit_undo")

	// The limiters of this library only (fixedwindow.go, gcra.go): a
	// decision, a look without spending (peek) and the one reset both use.
	scriptFixedWindow     = mustScript("fixed_window")
	scriptFixedWindowPeek = mustScript("fixed_window_peek")
	scriptGCRA            = mustScript("gcra")
	scriptGCRAPeek        = mustScript("gcra_peek")
	scriptKeyedReset      = mustScript("keyed_reset")

	// BloomFilter (bloomfilter.go): Redisson's RBloomFilter. All four join
	// prelude_bloom_config.
	scriptBloomInit     = mustScript("bloom_init")
	scriptBloomAdd      = mustScript("bloom_add")
	scriptBloomContains = mustScript("bloom_contains")
	scriptBloomCount    = mustScript("bloom_count")

	// AtomicLong (atomiclong.go) and Bucket (bucket.go).
	scriptAtomicAdd    = mustScript("atomic_add")
	scriptAtomicSet    = mustScript("atomic_set")
	scriptAtomicCAS    = mustScript("atomic_compare_and_set")
	scriptAtomicGetDel = mustScript("atomic_get_and_delete")
	scriptBucketSet    = mustScript("bucket_set")
	scriptBucketCAS    = mustScript("bucket_compare_and_set")

	// The reads of objects cached with WithClientSideCaching (clientcache.go,
	// clientcache_multi.go).
	scriptCachedGet       = mustScript("cached_get")
	scriptCachedGetFields = mustScript("cached_get_fields")
	scriptCachedGetKeys   = mustScript("cached_get_keys")

	// AtomicDouble (atomicdouble.go): Redisson's RAtomicDouble, with the
	// call markers of AtomicLong.
	scriptAtomicDAdd    = mustScript("atomicd_add")
	scriptAtomicDSet    = mustScript("atomicd_set")
	scriptAtomicDCAS    = mustScript("atomicd_compare_and_set")
	scriptAtomicDGetDel = mustScript("atomicd_get_and_delete")

	// LongAdder and DoubleAdder (adder.go): Redisson's sum-by-message
	// protocol, and the Go-only flushed part.
	scriptAdderAnswer  = mustScript("adder_answer")
	scriptAdderCollect = mustScript("adder_collect")
	scriptAdderFlush   = mustScript("adder_flush")

	// Map (rmap.go): Redisson's RMap.
	scriptMapPut         = mustScript("map_put")
	scriptMapPutIfAbsent = mustScript("map_put_if_absent")
	scriptMapRemove      = mustScript("map_remove")
	scriptMapAddMsgpack  = mustScript("map_add_msgpack")
	scriptMapAddJSON     = mustScript("map_add_json")

	// IDGenerator (idgenerator.go).
	scriptIDGenInit = mustScript("idgen_init")
	scriptIDGenNext = mustScript("idgen_next")

	// Inspection (inspect*.go): read-only views for operators, whoever
	// holds the object. inspect_ratelimit joins prelude_ratelimit_log;
	// inspect_key and inspect_keyed join prelude_keyed_shape.
	scriptInspectLock      = mustScript("inspect_lock")
	scriptInspectValue     = mustScript("inspect_value")
	scriptInspectPermits   = mustScript("inspect_permits")
	scriptInspectRateLimit = mustScript("inspect_ratelimit")
	scriptInspectMap       = mustScript("inspect_map")
	scriptInspectKey       = mustScript("inspect_key")
	scriptInspectQueue     = mustScript("inspect_queue")
	scriptInspectMapCache  = mustScript("inspect_mapcache")
	scriptInspectKeyed     = mustScript("inspect_keyed")

	// List and Set (rlist.go, rset_ops.go): Redisson's RList and RSet. The
	// three list scripts join prelude_list.
	scriptListInsert   = mustScript("list_insert")
	scriptListRemoveAt = mustScript("list_remove_at")
	scriptListSet      = mustScript("list_set")
	scriptSetStore     = mustScript("set_store")

	// DelayedQueue (delayqueue.go, delayqueue_mover.go): Redisson's
	// RDelayedQueue. All three join prelude_delayq.
	scriptDelayOffer    = mustScript("delayq_offer")
	scriptDelayTransfer = mustScript("delayq_transfer")
	scriptDelayFind     = mustScript("delayq_find")

	// LocalCachedMap (localcache.go): Redisson's RLocalCachedMap. The four
	// writes join prelude_localcache_notify.
	scriptLocalPut          = mustScript("localcache_put")
	scriptLocalRemove       = mustScript("localcache_remove")
	scriptLocalPutAll       = mustScript("localcache_put_all")
	scriptLocalFastRemove   = mustScript("localcache_fast_remove")
	scriptLocalDelete       = mustScript("localcache_delete")
	scriptLocalClearAck     = mustScript("localcache_clear_ack")
	scriptLocalUpdatesSince = mustScript("localcache_updates_since")

	// ReadThrough (readthrough.go): one load per key across the instances
	// of a LocalCachedMap or MapCache, under a lease, waking the waiters.
	scriptLoadClaim  = mustScript("load_claim")
	scriptLoadFinish = mustScript("load_finish")

	// Queues (blockingqueue.go, boundedqueue.go, queue_dispatch.go):
	// Redisson's RBlockingQueue and RBoundedBlockingQueue. take and settle
	// are this library's lossless hand-over through an in-flight list; the
	// bqueue scripts keep Redisson's free-capacity counter.
	scriptQueueTake    = mustScript("queue_take")
	scriptQueueSettle  = mustScript("queue_settle")
	scriptBQueueSetCap = mustScript("bqueue_set_capacity")
	scriptBQueueOffer  = mustScript("bqueue_offer")
	scriptBQueuePoll   = mustScript("bqueue_poll")

	// MapCache (mapcache*.go): Redisson's RMapCache. All join
	// prelude_mapcache.
	scriptMapCachePut     = mustScript("mapcache_put")
	scriptMapCacheGet     = mustScript("mapcache_get")
	scriptMapCacheRemove  = mustScript("mapcache_remove")
	scriptMapCacheReadAll = mustScript("mapcache_read_all")
	scriptMapCacheScan    = mustScript("mapcache_scan")
	scriptMapCacheEvict   = mustScript("mapcache_evict")

	// SetCache (setcache.go): Redisson's RSetCache. All join
	// prelude_setcache.
	scriptSetCacheAdd      = mustScript("setcache_add")
	scriptSetCacheContains = mustScript("setcache_contains")
	scriptSetCacheSize     = mustScript("setcache_size")
	scriptSetCacheReadAll  = mustScript("setcache_read_all")
	scriptSetCacheScan     = mustScript("setcache_scan")
	scriptSetCacheEvict    = mustScript("setcache_evict")

	// ListMultimap and SetMultimap (multimap.go, multimap_read.go):
	// Redisson's RListMultimap and RSetMultimap. All join prelude_multimap.
	scriptMultimapPut        = mustScript("multimap_put")
	scriptMultimapRemove     = mustScript("multimap_remove")
	scriptMultimapRemoveAll  = mustScript("multimap_remove_all")
	scriptMultimapReplace    = mustScript("multimap_replace")
	scriptMultimapFastRemove = mustScript("multimap_fast_remove")
	scriptMultimapSize       = mustScript("multimap_size")
	scriptMultimapEntries    = mustScript("multimap_entries")
	scriptMultimapDelete     = mustScript("multimap_delete")

	// ReliableTopic (reliabletopic.go, reliablereader.go): Redisson's
	// RReliableTopic, a stream with a consumer group per subscriber. All
	// four join prelude_rtopic.
	scriptRTopicPublish     = mustScript("rtopic_publish")
	scriptRTopicSubscribe   = mustScript("rtopic_subscribe")
	scriptRTopicSettle      = mustScript("rtopic_settle")
	scriptRTopicUnsubscribe = mustScript("rtopic_unsubscribe")

	// Local-quota mode of the keyed limiters (localquota.go): chunks taken
	// from the shared state before they are served in process, and a fixed
	// window's unused permits given back to their own window only.
	scriptFixedWindowReserve = mustScript("fixed_window_reserve")
	scriptFixedWindowReturn  = mustScript("fixed_window_return")
	scriptGCRAReserve        = mustScript("gcra_reserve")

	// ReliableQueue (reliablequeue*.go, deadletter.go): a job queue on a
	// stream and consumer group. All join prelude_rq; all but rq_renew join
	// prelude_delayq too (the server clock, the WRONGTYPE check).
	scriptRQInit    = mustScript("rq_init")
	scriptRQEnqueue = mustScript("rq_enqueue")
	scriptRQFetch   = mustScript("rq_fetch")
	scriptRQSettle  = mustScript("rq_settle")
	scriptRQRenew   = mustScript("rq_renew")
	scriptRQRequeue = mustScript("rq_requeue")
	scriptRQPurge   = mustScript("rq_purge")

	// Transaction (transaction*.go, txlock.go): Redisson's RTransaction. A
	// lock per written object or map key (tx_lock_acquire joins
	// prelude_lease; the release is lock_release), and one commit script.
	scriptTxLockAcquire = mustScript("tx_lock_acquire")
	scriptTxCommit      = mustScript("tx_commit")
)
