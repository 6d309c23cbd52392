package redisson

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// keyRow is one row of docs/keys.md: a key pattern in the doc's notation,
// its Redis type, and its lifetime as the test can see it.
type keyRow struct {
	object  string // the doc's object (section) name
	pattern string // as written in the doc
	typ     string // Redis TYPE
	life    keyLife
	rare    bool // arises only on a lost reply or a close: not driven here
}

type keyLife int

const (
	permanent keyLife = iota // PTTL -1
	expiring                 // PTTL > 0
	janitored                // PTTL > 0, and deleted by the janitor once the call returned
)

func (l keyLife) String() string {
	return [...]string{"permanent", "expiring", "expiring, deleted by the janitor"}[l]
}

// documentedKeys mirrors the tables of docs/keys.md, line by line. Rows
// whose lifetime depends on an option list the state under the option the
// test uses; the variants are objects of their own (… with keep-alive).
var documentedKeys = []keyRow{
	{"Lock", "name", "hash", expiring, false},
	{"Lock", "redisson_lock_token:{name}", "string", expiring, false},
	{"Lock", "redisson_unlock_latch:{name}:<token>", "string", janitored, false},
	{"Lock", "redisson_unlock_latch:{name}:c:<field>:<n>", "string", janitored, true},

	{"FairLock", "name", "hash", expiring, false},
	{"FairLock", "redisson_lock_token:{name}", "string", expiring, false},
	{"FairLock", "redisson_unlock_latch:{name}:<token>", "string", janitored, false},
	{"FairLock", "redisson_unlock_latch:{name}:c:<field>:<n>", "string", janitored, true},
	{"FairLock", "redisson_lock_queue:{name}", "list", expiring, false},
	{"FairLock", "redisson_lock_timeout:{name}", "zset", expiring, false},
	{"FairLock", "redisson_lock_alive:{name}", "zset", expiring, false},

	{"ReadWriteLock", "name", "hash", expiring, false},
	{"ReadWriteLock", "{name}:<owner>:rwlock_timeout:<n>", "string", expiring, false},
	{"ReadWriteLock", "redisson_lock_token:{name}", "string", expiring, false},
	{"ReadWriteLock", "redisson_unlock_latch:{name}:<token>", "string", janitored, false},
	{"ReadWriteLock", "redisson_unlock_latch:{name}:<owner>:<n>", "string", janitored, false},
	{"ReadWriteLock", "redisson_unlock_latch:{name}:c:<field>:<n>", "string", janitored, true},

	{"Semaphore", "name", "string", permanent, false},
	{"Semaphore", "redisson_sc_queue:{name}", "zset", expiring, false},
	{"Semaphore", "redisson_sc_waiters:{name}", "hash", expiring, false},
	{"Semaphore", "redisson_sc_call:{name}:<client uuid>:<n>", "string", janitored, false},

	{"PermitExpirableSemaphore", "name", "string", permanent, false},
	{"PermitExpirableSemaphore", "{name}:timeout", "zset", permanent, false},
	{"PermitExpirableSemaphore", "redisson_permit_latch:{name}:<client uuid>:<n>", "string", janitored, false},

	{"CountDownLatch", "name", "string", permanent, false},
	{"CountDownLatch", "redisson_countdownlatch_call:{name}:<client uuid>:<n>", "string", janitored, false},

	{"RateLimiter", "name", "hash", permanent, false},
	{"RateLimiter", "{name}:value", "string", expiring, false},
	{"RateLimiter", "{name}:permits", "zset", expiring, false},
	{"RateLimiter", "{name}:permits:sum", "string", expiring, false},
	{"RateLimiter per client", "name", "hash", permanent, false},
	{"RateLimiter per client", "{name}:value:<client uuid>", "string", expiring, false},
	{"RateLimiter per client", "{name}:permits:<client uuid>", "zset", expiring, false},
	{"RateLimiter per client", "{name}:permits:<client uuid>:sum", "string", expiring, false},
	{"RateLimiter with keep-alive", "name", "hash", expiring, false},
	{"RateLimiter with keep-alive", "{name}:value", "string", expiring, false},
	{"RateLimiter with keep-alive", "{name}:permits", "zset", expiring, false},
	{"RateLimiter with keep-alive", "{name}:permits:sum", "string", expiring, false},

	{"FixedWindowLimiter", "name:{<key>}", "string", expiring, false},
	{"GCRALimiter", "name:{<key>}", "string", expiring, false},

	{"Bucket", "name", "string", permanent, false},
	{"Bucket with TTL", "name", "string", expiring, false},
	{"AtomicLong", "name", "string", permanent, false},
	{"AtomicLong", "redisson_al_call:{name}:<client uuid>:<n>", "string", janitored, false},
	{"AtomicDouble", "name", "string", permanent, false},
	{"AtomicDouble", "redisson_ad_call:{name}:<client uuid>:<n>", "string", janitored, false},
	{"Map", "name", "hash", permanent, false},
	{"MapCache", "name", "hash", permanent, false},
	{"MapCache", "redisson__timeout__set:{name}", "zset", permanent, false},
	{"MapCache", "redisson__idle__set:{name}", "zset", permanent, false},
	{"MapCache", "redisson__map_cache__last_access__set:{name}", "zset", permanent, false},
	{"MapCache", "{name}:redisson_options", "hash", permanent, false},
	{"MapCache", "{name}:load:<key hash>", "string", expiring, true},
	{"MapCache", "{name}:notfound:<key hash>", "string", expiring, false},
	{"List", "name", "list", permanent, false},
	{"Set", "name", "set", permanent, false},
	{"SortedSet", "name", "zset", permanent, false},
	{"LocalCachedMap", "name", "hash", permanent, false},
	{"LocalCachedMap", "redisson__cache_updates_log:{name}", "zset", permanent, false},
	{"LocalCachedMap", "name:clear:<request id>", "string", expiring, true},
	{"LocalCachedMap", "{name}:load:<key hash>", "string", expiring, true},
	{"LocalCachedMap", "{name}:notfound:<key hash>", "string", expiring, false},
	{"BloomFilter", "name", "string", permanent, false},
	{"BloomFilter", "{name}:config", "hash", permanent, false},
	{"IdGenerator", "name", "string", permanent, false},
	{"IdGenerator", "{name}:allocation", "string", permanent, false},
	{"DelayedQueue", "name", "list", permanent, false},
	{"DelayedQueue", "redisson_delay_queue_timeout:{name}", "zset", permanent, false},
	{"DelayedQueue", "redisson_delay_queue:{name}", "list", permanent, false},
	{"Queue", "name", "list", permanent, false},
	{"Deque", "name", "list", permanent, false},
	{"BlockingQueue", "name", "list", permanent, false},
	{"BlockingQueue", "redisson_queue_inflight:{name}:<client uuid>", "list", permanent, true},
	{"BlockingQueue", "redisson_queue_inflight:{name}", "zset", permanent, true},
	{"BlockingQueue", "redisson_queue_drain:{name}:<client uuid>:<n>", "list", permanent, true},
	{"BoundedBlockingQueue", "name", "list", permanent, false},
	{"BoundedBlockingQueue", "redisson_bqs:{name}", "string", permanent, false},
	{"BoundedBlockingQueue", "redisson_bqueue_inflight:{name}:<client uuid>", "list", permanent, true},
	{"BoundedBlockingQueue", "redisson_queue_drain:{name}:<client uuid>:<n>", "list", permanent, true},
	{"ReliableQueue", "name", "stream", permanent, false},
	{"ReliableQueue", "redisson_rq_delayed:{name}", "zset", permanent, false},
	{"ReliableQueue", "redisson_rq_jobs:{name}", "hash", permanent, false},
	{"ReliableQueue", "redisson_rq_dead:{name}", "stream", permanent, false},
	{"ReliableQueue", "redisson_rq_dedup:{name}:<dedup id>", "string", expiring, false},
	{"ReliableQueue", "redisson_rq_call:{name}:<client uuid>:<n>", "string", janitored, false},
	{"SetCache", "name", "zset", permanent, false},
	{"ListMultimap", "name", "hash", permanent, false},
	{"ListMultimap", "{name}:<multimap id>", "list", permanent, false},
	{"SetMultimap", "name", "hash", permanent, false},
	{"SetMultimap", "{name}:<multimap id>", "set", permanent, false},
	// Topic, ShardedTopic: no keys. MultiLock, RedLock: their parts' (Lock).
}

// keyPlaceholders are the doc's placeholders as regular expressions.
var keyPlaceholders = map[string]string{
	"<client uuid>": `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`,
	"<owner>":       `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+`,
	"<field>":       `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+(:write)?`,
	"<token>":       `[0-9]+`,
	"<n>":           `[0-9]+`,
	"<key>":         `.+`,
	"<request id>":  `[0-9a-f]{32}`,
	"<dedup id>":    `[^:]+`,
	"<multimap id>": `[A-Za-z0-9+/]{22}`,
	"<key hash>":    `[0-9a-f]{32}`,
}

// keyRegexp turns a doc pattern into an anchored regular expression for the
// object called name (a name without braces).
func keyRegexp(t *testing.T, pattern, name string) *regexp.Regexp {
	t.Helper()
	var b strings.Builder
	b.WriteString("^")
	for p := pattern; p != ""; {
		switch {
		case strings.HasPrefix(p, "{name}"):
			b.WriteString(regexp.QuoteMeta("{" + name + "}"))
			p = p[len("{name}"):]
		case strings.HasPrefix(p, "name"):
			b.WriteString(regexp.QuoteMeta(name))
			p = p[len("name"):]
		case p[0] == '<':
			end := strings.IndexByte(p, '>')
			re, ok := keyPlaceholders[p[:end+1]]
			if end < 0 || !ok {
				t.Fatalf("pattern %q: unknown placeholder", pattern)
			}
			b.WriteString(re)
			p = p[end+1:]
		default:
			b.WriteString(regexp.QuoteMeta(p[:1]))
			p = p[1:]
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// TestObjectKeysMatchDocumentedLifetimes exercises every object once and
// checks every key in Redis against docs/keys.md (documentedKeys): each key
// matches one documented pattern of its object, has the documented type,
// and expires or not as documented; every documented row (but the rare
// ones) is seen; and the janitor's keys are gone once it has run.
func TestObjectKeysMatchDocumentedLifetimes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	// Hold the janitor's deletions until the end, so that the latches and
	// call markers it would delete within a second can be seen.
	tune := defaultTuning
	tune.janitorEvery = time.Hour
	c := newTunedClient(t, rdb, nil, tune)

	// The objects' names: one per instance; MultiLock's parts are Locks.
	names := map[string][]string{}
	name := func(object string) string {
		n := "keys:" + strings.ReplaceAll(object, " ", "-") + ":" + string(rune('a'+len(names[object])))
		names[object] = append(names[object], n)
		return n
	}
	type rowRe struct {
		row keyRow
		re  *regexp.Regexp
	}
	var rows []rowRe // filled once every name is known
	compile := func() {
		rows = rows[:0]
		for _, r := range documentedKeys {
			for _, n := range names[r.object] {
				rows = append(rows, rowRe{r, keyRegexp(t, r.pattern, n)})
			}
		}
	}
	seen := map[keyRow]bool{}
	scan := func(step string) map[string]keyRow {
		t.Helper()
		compile()
		found := map[string]keyRow{}
		var cursor uint64
		for {
			keys, next, err := rdb.Scan(ctx, cursor, "*", 1000).Result()
			if err != nil {
				t.Fatalf("%s: SCAN: %v", step, err)
			}
			for _, k := range keys {
				var match []keyRow
				for _, r := range rows {
					if r.re.MatchString(k) {
						match = append(match, r.row)
					}
				}
				if len(match) != 1 {
					t.Errorf("%s: key %q matches %d documented patterns %v, want 1", step, k, len(match), match)
					continue
				}
				r := match[0]
				found[k], seen[r] = r, true
				if typ := rdb.Type(ctx, k).Val(); typ != r.typ && typ != "none" {
					t.Errorf("%s: %s key %q (%s) is a %s, want %s", step, r.object, k, r.pattern, typ, r.typ)
				}
				d, err := rdb.PTTL(ctx, k).Result()
				switch {
				case err != nil:
					t.Fatalf("%s: PTTL %s: %v", step, k, err)
				case d == -2*time.Nanosecond: // gone meanwhile
				case (d == -1*time.Nanosecond) != (r.life == permanent):
					t.Errorf("%s: %s key %q (%s) has PTTL %v, want %s", step, r.object, k, r.pattern, d, r.life)
				}
			}
			if cursor = next; cursor == 0 {
				return found
			}
		}
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	mustTrue := func(what string, ok bool, err error) {
		t.Helper()
		if err == nil && !ok {
			err = errors.New("got false, want true")
		}
		must(what, err)
	}

	// Lock: a released hold (latch) and a held one.
	lock := c.GetLock(name("Lock"))
	must("Lock", lock.Lock(ctx))
	must("Unlock", lock.Unlock(ctx))
	must("Lock again", lock.Lock(ctx))

	// MultiLock: its parts are Locks.
	multi := NewMultiLock(c.GetLock(name("Lock")), c.GetLock(name("Lock")))
	must("MultiLock.Lock", multi.Lock(ctx))

	// FairLock: a holder and a queued waiter.
	fairName := name("FairLock")
	fair, fairWaiter := c.GetFairLock(fairName), c.GetFairLock(fairName)
	must("FairLock.Lock", fair.Lock(ctx))
	waited := async(func() error {
		ok, err := fairWaiter.TryLock(ctx, time.Minute, 0)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		return err
	})
	eventually(t, 10*time.Second, "the fair waiter queued", func() bool { return rdb.LLen(ctx, fairQueueKey(fairName)).Val() == 1 })

	// ReadWriteLock: a released read hold, a released write hold, a held read.
	rw := c.GetReadWriteLock(name("ReadWriteLock"))
	must("ReadLock.Lock", rw.ReadLock().Lock(ctx))
	must("ReadLock.Unlock", rw.ReadLock().Unlock(ctx))
	must("WriteLock.Lock", rw.WriteLock().Lock(ctx))
	must("WriteLock.Unlock", rw.WriteLock().Unlock(ctx))
	must("ReadLock.Lock again", rw.ReadLock().Lock(ctx))

	// Semaphore: set up with no permits, a waiter queued.
	sem := c.GetSemaphore(name("Semaphore"))
	ok, err := sem.TrySetPermits(ctx, 0)
	mustTrue("Semaphore.TrySetPermits", ok, err)
	acquired := async(func() error {
		ok, err := sem.TryAcquire(ctx, 1, time.Minute)
		if err == nil && !ok {
			err = errors.New("wait ran out")
		}
		return err
	})
	eventually(t, 10*time.Second, "the semaphore waiter queued", func() bool { return rdb.Exists(ctx, sem.keys[1], sem.keys[2]).Val() == 2 })

	// PermitExpirableSemaphore: a permit released, one held without lease.
	pes := c.GetPermitExpirableSemaphore(name("PermitExpirableSemaphore"))
	ok, err = pes.TrySetPermits(ctx, 2)
	mustTrue("PermitExpirableSemaphore.TrySetPermits", ok, err)
	id, err := pes.Acquire(ctx, time.Minute)
	must("PermitExpirableSemaphore.Acquire", err)
	must("PermitExpirableSemaphore.Release", pes.Release(ctx, id))
	_, err = pes.Acquire(ctx, 0)
	must("PermitExpirableSemaphore.Acquire", err)

	// CountDownLatch: still counting.
	latch := c.GetCountDownLatch(name("CountDownLatch"))
	ok, err = latch.TrySetCount(ctx, 2)
	mustTrue("CountDownLatch.TrySetCount", ok, err)
	must("CountDownLatch.CountDown", latch.CountDown(ctx))

	// RateLimiters: overall, per client, with a keep-alive.
	for _, l := range []struct {
		object string
		scope  RateType
		keep   time.Duration
	}{{"RateLimiter", Overall, 0}, {"RateLimiter per client", PerClient, 0}, {"RateLimiter with keep-alive", Overall, time.Hour}} {
		r := c.GetRateLimiter(name(l.object))
		if l.keep > 0 {
			ok, err = r.TrySetRateKeepAlive(ctx, l.scope, 10, time.Minute, l.keep)
		} else {
			ok, err = r.TrySetRate(ctx, l.scope, 10, time.Minute)
		}
		mustTrue(l.object+": TrySetRate", ok, err)
		ok, err = r.TryAcquire(ctx, 1)
		mustTrue(l.object+": TryAcquire", ok, err)
	}

	// Keyed limiters.
	_, err = c.GetFixedWindowLimiter(name("FixedWindowLimiter"), 10, time.Minute).Allow(ctx, "10.0.0.1", 1)
	must("FixedWindowLimiter.Allow", err)
	_, err = c.GetGCRALimiter(name("GCRALimiter"), 10, time.Minute, 5).Allow(ctx, "10.0.0.1", 1)
	must("GCRALimiter.Allow", err)

	// Values.
	must("Bucket.Set", GetBucket[string](c, name("Bucket")).Set(ctx, "v"))
	must("Bucket.SetWithTTL", GetBucket[string](c, name("Bucket with TTL")).SetWithTTL(ctx, "v", time.Hour))
	_, err = c.GetAtomicLong(name("AtomicLong")).IncrementAndGet(ctx)
	must("AtomicLong.IncrementAndGet", err)
	_, err = c.GetAtomicDouble(name("AtomicDouble")).AddAndGet(ctx, 1.5)
	must("AtomicDouble.AddAndGet", err)
	_, _, err = GetMap[string, int](c, name("Map")).Put(ctx, "k", 1)
	must("Map.Put", err)
	mc := GetMapCache[string, int](c, name("MapCache"))
	must("MapCache.SetMaxSize", mc.SetMaxSize(ctx, 100))
	_, _, err = mc.PutWithTTL(ctx, "k", 1, time.Hour, time.Hour)
	must("MapCache.PutWithTTL", err)
	_, err = GetList[string](c, name("List")).Add(ctx, "v")
	must("List.Add", err)
	_, err = GetSet[string](c, name("Set")).Add(ctx, "v")
	must("Set.Add", err)
	_, err = GetSortedSet[string](c, name("SortedSet")).Add(ctx, 1, "v")
	must("SortedSet.Add", err)
	_, err = GetSetCache[string](c, name("SetCache")).AddWithTTL(ctx, "v", time.Hour)
	must("SetCache.AddWithTTL", err)
	_, err = GetListMultimap[string, string](c, name("ListMultimap")).Put(ctx, "k", "v")
	must("ListMultimap.Put", err)
	_, err = GetSetMultimap[string, string](c, name("SetMultimap")).Put(ctx, "k", "v")
	must("SetMultimap.Put", err)
	// Read-through maps that remember a key their loader did not find.
	notFound := WithReadThrough(ReadThrough[string, int]{NotFoundTTL: time.Minute,
		Load: func(context.Context, string) (int, error) { return 0, ErrKeyNotFound }})
	lcm := GetLocalCachedMap[string, int](c, name("LocalCachedMap"), LocalCacheOptions{ReconnectionStrategy: ReconnectLoad}, notFound)
	defer lcm.Close()
	_, _, err = lcm.Put(ctx, "k", 1)
	must("LocalCachedMap.Put", err)
	_, _, err = lcm.Get(ctx, "absent")
	must("LocalCachedMap.Get (read-through)", err)
	_, _, err = GetMapCache[string, int](c, mc.Name(), notFound).Get(ctx, "absent")
	must("MapCache.Get (read-through)", err)
	bloom := GetBloomFilter[string](c, name("BloomFilter"))
	ok, err = bloom.TryInit(ctx, 1000, 0.01)
	mustTrue("BloomFilter.TryInit", ok, err)
	_, err = bloom.Add(ctx, "v")
	must("BloomFilter.Add", err)
	ids := c.GetIdGenerator(name("IdGenerator"))
	ok, err = ids.TryInit(ctx, 1, 50)
	mustTrue("IdGenerator.TryInit", ok, err)
	_, err = ids.NextID(ctx)
	must("IdGenerator.NextID", err)
	// DelayedQueue: one value moved into the destination, one pending.
	delayDest := name("DelayedQueue")
	dq := GetDelayedQueue[string](c, delayDest)
	must("DelayedQueue.Offer", dq.Offer(ctx, "now", 0))
	must("DelayedQueue.Offer", dq.Offer(ctx, "later", time.Hour))
	eventually(t, 10*time.Second, "the due value moved", func() bool { return rdb.LLen(ctx, delayDest).Val() == 1 })
	_, err = GetTopic[string](c, name("Topic")).Publish(ctx, "m") // no key
	must("Topic.Publish", err)
	t.Run("ShardedTopic", func(t *testing.T) {
		redistest.RequireServer(t, 7, "sharded pub/sub (SPUBLISH)")
		_, err := GetShardedTopic[string](c, name("ShardedTopic")).Publish(ctx, "m")
		if err != nil {
			t.Fatalf("ShardedTopic.Publish: %v", err)
		}
	})

	// Queues.
	must("Queue.Offer", GetQueue[string](c, name("Queue")).Offer(ctx, "v"))
	must("Deque.OfferFirst", GetDeque[string](c, name("Deque")).OfferFirst(ctx, "v"))

	bq := GetBlockingQueue[string](c, name("BlockingQueue"))
	must("BlockingQueue.Offer", bq.Offer(ctx, "v"))
	must("BlockingQueue.Offer", bq.Offer(ctx, "w"))
	_, err = bq.Take(ctx)
	must("BlockingQueue.Take", err)
	bbq := GetBoundedBlockingQueue[string](c, name("BoundedBlockingQueue"))
	ok, err = bbq.TrySetCapacity(ctx, 10)
	mustTrue("BoundedBlockingQueue.TrySetCapacity", ok, err)
	ok, err = bbq.Offer(ctx, "v")
	mustTrue("BoundedBlockingQueue.Offer", ok, err)

	// ReliableQueue: a job now, one delayed with a dedup id, and a foreign
	// entry a worker moves to the dead letters.
	rq := GetReliableQueue[string](c, name("ReliableQueue"))
	_, _, err = rq.Enqueue(ctx, "now")
	must("ReliableQueue.Enqueue", err)
	_, _, err = rq.Enqueue(ctx, "later", JobDelay(time.Hour), JobDedupID("d1", time.Hour))
	must("ReliableQueue.Enqueue", err)
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: rq.name, Values: []any{"foreign", "entry"}})
	rqCtx, rqStop := context.WithCancel(ctx)
	rqDone := make(chan error, 1)
	go func() {
		rqDone <- rq.Process(rqCtx, func(hctx context.Context, _ *Job[string]) error { <-hctx.Done(); return hctx.Err() },
			WorkerOptions{Concurrency: 2, ShutdownTimeout: time.Millisecond})
	}()
	eventually(t, 10*time.Second, "the foreign entry dead-lettered", func() bool { return rdb.XLen(ctx, rq.parts[0].dead).Val() == 1 })
	rqStop()
	<-rqDone

	scan("every object in use")

	// Finish the waits and holds, and look again.
	must("Semaphore.Release", sem.Release(ctx, 1))
	await(t, acquired, 10*time.Second, "semaphore waiter")
	must("FairLock.Unlock", fair.Unlock(ctx))
	await(t, waited, 10*time.Second, "fair waiter")
	must("FairLock.Unlock (waiter)", fairWaiter.Unlock(ctx))
	must("MultiLock.Unlock", multi.Unlock(ctx))
	must("Lock.Unlock", lock.Unlock(ctx))
	must("ReadLock.Unlock", rw.ReadLock().Unlock(ctx))
	scan("every hold released")

	for _, r := range documentedKeys {
		if !seen[r] && !r.rare {
			t.Errorf("%s key %s was never seen: the test does not cover it", r.object, r.pattern)
		}
	}

	// The janitor deletes what it was given once it runs.
	c.janitor.flush()
	for k, r := range scan("after the janitor ran") {
		if r.life == janitored {
			t.Errorf("%s key %q (%s) is still there after the janitor ran", r.object, k, r.pattern)
		}
	}
}
