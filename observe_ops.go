package redisson

// Operation names, <kind>.<verb>: the one table of them (docs/observability.md
// lists each with the methods that report it).
const (
	opLockAcquire        = "lock.acquire" // Lock, LockLease, TryLock, and Do's acquisition
	opLockRelease        = "lock.release" // Unlock (Do's release too)
	opLockExtend         = "lock.extend"
	opLockForceUnlock    = "lock.force_unlock"
	opLockIsLocked       = "lock.is_locked"
	opLockIsHeld         = "lock.is_held"
	opLockHoldCount      = "lock.hold_count"
	opLockRemainingLease = "lock.remaining_lease"
	opLockQueueLength    = "lock.queue_length"

	opMultiAcquire = "multilock.acquire" // MultiLock and RedLock: Lock, TryLock, Do's acquisition
	opMultiRelease = "multilock.release"

	opElectionCampaign = "election.campaign"
	opElectionResign   = "election.resign"
	opElectionLeader   = "election.leader"
	opElectionObserve  = "election.observe"

	opIdemBegin  = "idempotency.begin"
	opIdemRenew  = "idempotency.renew"
	opIdemFinish = "idempotency.finish" // Complete, Abandon

	opSchedulerAdd    = "scheduler.add"
	opSchedulerRemove = "scheduler.remove"
	opSchedulerStart  = "scheduler.start" // Run's start: the checks and the channel's subscription
	opSchedulerLoad   = "scheduler.load"  // Run reading the jobs
	opSchedulerFire   = "scheduler.fire"  // acquired: this instance fired it; denied: fired elsewhere, or too early
	opSchedulerSkip   = "scheduler.skip"  // an instant skipped: an earlier run still held its lease
	opSchedulerRun    = "scheduler.run"   // a handler's run, with its error

	opSemAcquire       = "semaphore.acquire" // Acquire, TryAcquire
	opSemRelease       = "semaphore.release"
	opSemTrySetPermits = "semaphore.try_set_permits"
	opSemAddPermits    = "semaphore.add_permits"
	opSemAvailable     = "semaphore.available_permits"
	opSemDrain         = "semaphore.drain_permits"
	opSemDelete        = "semaphore.delete"

	opPermitAcquire       = "permit_semaphore.acquire" // Acquire, TryAcquire
	opPermitRelease       = "permit_semaphore.release"
	opPermitUpdateLease   = "permit_semaphore.update_lease"
	opPermitTrySetPermits = "permit_semaphore.try_set_permits"
	opPermitAddPermits    = "permit_semaphore.add_permits"
	opPermitAvailable     = "permit_semaphore.available_permits"
	opPermitAcquired      = "permit_semaphore.acquired_permits"
	opPermitDelete        = "permit_semaphore.delete"

	opLatchAwait       = "latch.await" // Await, TryAwait
	opLatchCountDown   = "latch.count_down"
	opLatchTrySetCount = "latch.try_set_count"
	opLatchCount       = "latch.count"
	opLatchDelete      = "latch.delete"

	opRateAcquire    = "ratelimit.acquire"      // RateLimiter: Acquire, TryAcquire, TryAcquireWait
	opRateAllow      = "ratelimit.allow"        // FixedWindowLimiter, GCRALimiter: Allow
	opRatePeek       = "ratelimit.peek"         // FixedWindowLimiter, GCRALimiter, LocalQuotaLimiter: Peek
	opRateReset      = "ratelimit.reset"        // FixedWindowLimiter, GCRALimiter, LocalQuotaLimiter: Reset
	opRateTrySetRate = "ratelimit.try_set_rate" // TrySetRate, TrySetRateKeepAlive
	opRateSetRate    = "ratelimit.set_rate"     // SetRate, SetRateKeepAlive
	opRateConfig     = "ratelimit.config"
	opRateAvailable  = "ratelimit.available_permits"
	opRateDelete     = "ratelimit.delete"

	opBucketGet           = "bucket.get"
	opBucketSet           = "bucket.set"           // Set, SetWithTTL
	opBucketSetIfAbsent   = "bucket.set_if_absent" // SetIfAbsent, SetIfAbsentWithTTL
	opBucketSetIfExists   = "bucket.set_if_exists" // SetIfExists, SetIfExistsWithTTL
	opBucketGetAndSet     = "bucket.get_and_set"
	opBucketGetAndDelete  = "bucket.get_and_delete"
	opBucketCompareAndSet = "bucket.compare_and_set"
	opBucketTTL           = "bucket.ttl"
	opBucketDelete        = "bucket.delete"

	opAtomicGet           = "atomiclong.get"
	opAtomicSet           = "atomiclong.set"
	opAtomicGetAndSet     = "atomiclong.get_and_set"
	opAtomicAddAndGet     = "atomiclong.add_and_get" // AddAndGet, IncrementAndGet, DecrementAndGet
	opAtomicGetAndAdd     = "atomiclong.get_and_add" // GetAndAdd, GetAndIncrement, GetAndDecrement
	opAtomicCompareAndSet = "atomiclong.compare_and_set"
	opAtomicGetAndDelete  = "atomiclong.get_and_delete"
	opAtomicDelete        = "atomiclong.delete"

	opAtomicDGet           = "atomicdouble.get"
	opAtomicDSet           = "atomicdouble.set"
	opAtomicDGetAndSet     = "atomicdouble.get_and_set"
	opAtomicDAddAndGet     = "atomicdouble.add_and_get" // AddAndGet, IncrementAndGet, DecrementAndGet
	opAtomicDGetAndAdd     = "atomicdouble.get_and_add" // GetAndAdd, GetAndIncrement, GetAndDecrement
	opAtomicDCompareAndSet = "atomicdouble.compare_and_set"
	opAtomicDGetAndDelete  = "atomicdouble.get_and_delete"
	opAtomicDDelete        = "atomicdouble.delete"

	opBatchExecute = "batch.execute" // Batch.Execute: the whole batch, one record

	opBucketsGet    = "buckets.get"
	opBucketsSet    = "buckets.set"
	opBucketsTrySet = "buckets.try_set"

	opAdderSum   = "adder.sum"   // LongAdder, DoubleAdder: Sum
	opAdderReset = "adder.reset" // LongAdder, DoubleAdder: Reset

	opMapGet         = "map.get"
	opMapGetAll      = "map.get_all"
	opMapPut         = "map.put"
	opMapPutIfAbsent = "map.put_if_absent"
	opMapRemove      = "map.remove"
	opMapFastPut     = "map.fast_put"
	opMapFastRemove  = "map.fast_remove"
	opMapContainsKey = "map.contains_key"
	opMapSize        = "map.size"
	opMapReadAll     = "map.read_all"
	opMapDelete      = "map.delete"
	opMapAddAndGet   = "map.add_and_get"
	opMapScan        = "map.scan" // one per batch an iterator fetches

	opTxGet      = "transaction.get"   // TxBucket, TxMap, TxMapCache: Get, GetForUpdate; ContainsKey; TxSet.Contains
	opTxWrite    = "transaction.write" // TxBucket: Set, Delete; TxMap, TxMapCache: Put, PutWithTTL, FastPut, Remove, FastRemove; TxSet: Add, Remove (the lock's wait included)
	opTxCommit   = "transaction.commit"
	opTxRollback = "transaction.rollback"

	opMapCacheGet         = "mapcache.get"
	opMapCacheContainsKey = "mapcache.contains_key"
	opMapCachePut         = "mapcache.put"                // Put, PutWithTTL
	opMapCachePutIfAbsent = "mapcache.put_if_absent"      // PutIfAbsent, PutIfAbsentWithTTL
	opMapCacheFastPut     = "mapcache.fast_put"           // FastPut, FastPutWithTTL
	opMapCacheFastAbsent  = "mapcache.fast_put_if_absent" // FastPutIfAbsent, FastPutIfAbsentWithTTL
	opMapCacheRemove      = "mapcache.remove"
	opMapCacheReadAll     = "mapcache.read_all"
	opMapCacheDelete      = "mapcache.delete"
	opMapCacheSetMaxSize  = "mapcache.set_max_size"
	opMapCacheListen      = "mapcache.listen" // OnCreated, OnUpdated, OnRemoved, OnExpired (Size and the iterator report map.size, map.scan)

	opCacheLoad  = "cache.load"  // a ReadThrough loader run (LocalCachedMap, MapCache); Kind tells which
	opCacheWrite = "cache.write" // a Writer call, write-through or write-behind (LocalCachedMap, MapCache)

	opBloomTryInit  = "bloomfilter.try_init"
	opBloomAdd      = "bloomfilter.add"      // Add, AddAll
	opBloomContains = "bloomfilter.contains" // Contains, ContainsAll
	opBloomConfig   = "bloomfilter.config"   // Config, Size, HashIterations, ExpectedInsertions, FalseProbability
	opBloomCount    = "bloomfilter.count"
	opBloomDelete   = "bloomfilter.delete"

	opIDTryInit = "idgenerator.try_init"
	opIDNext    = "idgenerator.next_id"
	opIDDelete  = "idgenerator.delete"

	opTopicPublish   = "topic.publish"
	opTopicSubscribe = "topic.subscribe" // Subscribe, Channel

	opReliablePublish   = "reliable_topic.publish"
	opReliableSubscribe = "reliable_topic.subscribe" // Subscribe, Channel
	opReliableSize      = "reliable_topic.size"
	opReliableCount     = "reliable_topic.count_subscribers"

	opListAdd      = "list.add" // Add, AddAll
	opListInsert   = "list.insert"
	opListGet      = "list.get"
	opListSet      = "list.set"
	opListFastSet  = "list.fast_set"
	opListRemove   = "list.remove"
	opListRemoveAt = "list.remove_at"
	opListIndexOf  = "list.index_of" // IndexOf, Contains
	opListSize     = "list.size"
	opListRange    = "list.range" // Range, ReadAll
	opListTrim     = "list.trim"
	opListDelete   = "list.delete"
	opListScan     = "list.scan" // one per batch an iterator fetches

	opSetAdd               = "set.add"    // Add, AddAll
	opSetRemove            = "set.remove" // Remove, RemoveAll
	opSetContains          = "set.contains"
	opSetSize              = "set.size"
	opSetMembers           = "set.members"
	opSetRandom            = "set.random_member" // RandomMember, RandomMembers
	opSetPop               = "set.pop"           // Pop, PopN
	opSetUnion             = "set.union"
	opSetIntersection      = "set.intersection"
	opSetDifference        = "set.difference"
	opSetUnionStore        = "set.union_store"
	opSetIntersectionStore = "set.intersection_store"
	opSetDifferenceStore   = "set.difference_store"
	opSetDelete            = "set.delete"
	opSetScan              = "set.scan" // one per batch an iterator fetches

	opZSetAdd         = "sorted_set.add" // Add, AddIfAbsent, AddAll
	opZSetAddScore    = "sorted_set.add_score"
	opZSetScore       = "sorted_set.score" // Score, Contains
	opZSetRank        = "sorted_set.rank"  // Rank, RevRank
	opZSetRemove      = "sorted_set.remove"
	opZSetSize        = "sorted_set.size"
	opZSetCount       = "sorted_set.count"
	opZSetRemoveRange = "sorted_set.remove_range" // RemoveRangeByRank, RemoveRangeByScore
	opZSetPoll        = "sorted_set.poll"         // PollFirst, PollLast
	opZSetRange       = "sorted_set.range"        // RangeByRank, RevRangeByRank, EntryRangeByRank, EntryRevRangeByRank, RangeByScore, EntryRangeByScore
	opZSetDelete      = "sorted_set.delete"
	opZSetScan        = "sorted_set.scan" // one per batch an iterator fetches

	opDelayOffer    = "delayed_queue.offer" // Offer, OfferAll
	opDelaySize     = "delayed_queue.size"
	opDelayContains = "delayed_queue.contains"
	opDelayRemove   = "delayed_queue.remove"
	opDelayReadAll  = "delayed_queue.read_all"
	opDelayDelete   = "delayed_queue.delete"

	// Queue, Deque, BlockingQueue, BoundedBlockingQueue (Kind tells which).
	opQueueOffer          = "queue.offer"  // Offer, OfferFirst, OfferLast
	opQueuePoll           = "queue.poll"   // Poll, PollFirst, PollLast; Poll(ctx, 0), PollFromAny(ctx, 0, ...)
	opQueuePeek           = "queue.peek"   // Peek, PeekFirst, PeekLast
	opQueueRemove         = "queue.remove" // PriorityQueue.Remove
	opQueueSize           = "queue.size"
	opQueueDelete         = "queue.delete"
	opQueueReadAll        = "queue.read_all"
	opQueueScan           = "queue.scan" // one per batch an iterator reads
	opQueueTake           = "queue.take" // Take; Poll, PollFromAny with a wait (Wait: the time blocked)
	opQueueDrain          = "queue.drain"
	opQueuePut            = "queue.put" // Wait: the time blocked for room
	opQueueTrySetCapacity = "queue.try_set_capacity"
	opQueueCapacity       = "queue.capacity" // Capacity, RemainingCapacity

	opRQEnqueue     = "reliable_queue.enqueue"
	opRQAck         = "reliable_queue.ack"         // a handler returned nil; Outcome Denied: the lease was lost
	opRQRun         = "reliable_queue.run"         // a handler's run of a job (Duration: the handler's; its calls on the client count in RoundTrips)
	opRQRetry       = "reliable_queue.retry"       // a handler failed: the job is due again after its back-off
	opRQGiveBack    = "reliable_queue.give_back"   // a job received but not run (or cut off by the shutdown) given back at once
	opRQDeadLetter  = "reliable_queue.dead_letter" // a job failed MaxDeliveries times or did not decode
	opRQStats       = "reliable_queue.stats"
	opRQDeadLetters = "reliable_queue.dead_letters" // DeadLetters
	opRQRequeue     = "reliable_queue.requeue"      // RequeueDeadLetter, RequeueDeadLetters
	opRQPurge       = "reliable_queue.purge_dead_letters"

	opSetCacheAdd      = "set_cache.add" // Add, AddWithTTL
	opSetCacheContains = "set_cache.contains"
	opSetCacheRemove   = "set_cache.remove"
	opSetCacheSize     = "set_cache.size"
	opSetCacheReadAll  = "set_cache.read_all"
	opSetCacheDelete   = "set_cache.delete"
	opSetCacheScan     = "set_cache.scan" // one per batch an iterator reads

	// ListMultimap and SetMultimap (Kind tells which: list_multimap, set_multimap).
	opMultimapPut           = "multimap.put" // Put, PutAll
	opMultimapGet           = "multimap.get"
	opMultimapRemove        = "multimap.remove"
	opMultimapRemoveAll     = "multimap.remove_all"
	opMultimapFastRemove    = "multimap.fast_remove"
	opMultimapReplace       = "multimap.replace_values"
	opMultimapContainsKey   = "multimap.contains_key"
	opMultimapContainsEntry = "multimap.contains_entry"
	opMultimapSize          = "multimap.size"
	opMultimapKeySize       = "multimap.key_size"
	opMultimapKeySet        = "multimap.key_set"
	opMultimapEntries       = "multimap.entries"
	opMultimapDelete        = "multimap.delete"
)
