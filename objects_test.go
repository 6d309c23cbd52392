package redisson

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// objectRow is one object the Client hands out: how a user gets it from
// (client, name), one representative call, and a value of a Redis type the
// object does not use, written where the call looks.
type objectRow struct {
	kind string
	// open gets the object called name from c (a Get... call, no I/O) and
	// returns its representative call.
	open func(c *Client, name string) func(ctx context.Context) error
	// foreign writes values of the wrong Redis type at the object's keys
	// and returns those keys; nil for an object without a key (a topic).
	foreign func(t testing.TB, ctx context.Context, rdb redis.UniversalClient, name string) []string
}

// row builds an objectRow from a typed constructor and call.
func row[T any](kind string, get func(c *Client, name string) T, call func(ctx context.Context, o T) error,
	foreign func(t testing.TB, ctx context.Context, rdb redis.UniversalClient, name string) []string) objectRow {
	return objectRow{
		kind: kind,
		open: func(c *Client, name string) func(context.Context) error {
			o := get(c, name)
			return func(ctx context.Context) (err error) {
				defer func() {
					if r := recover(); r != nil { // a panic fails the case, not the run
						err = fmt.Errorf("panic: %v", r)
					}
				}()
				return call(ctx, o)
			}
		},
		foreign: foreign,
	}
}

// stringAt, hashAt and listAt return a foreign writer that puts a string,
// a hash or a list at the keys key(name) names.
func stringAt(keys ...func(string) string) func(testing.TB, context.Context, redis.UniversalClient, string) []string {
	return foreignAt(func(ctx context.Context, rdb redis.UniversalClient, k string) error {
		return rdb.Set(ctx, k, "foreign", 0).Err()
	}, keys)
}

func hashAt(keys ...func(string) string) func(testing.TB, context.Context, redis.UniversalClient, string) []string {
	return foreignAt(func(ctx context.Context, rdb redis.UniversalClient, k string) error {
		return rdb.HSet(ctx, k, "foreign", "1").Err()
	}, keys)
}

func listAt(keys ...func(string) string) func(testing.TB, context.Context, redis.UniversalClient, string) []string {
	return foreignAt(func(ctx context.Context, rdb redis.UniversalClient, k string) error {
		return rdb.RPush(ctx, k, "foreign").Err()
	}, keys)
}

func foreignAt(write func(context.Context, redis.UniversalClient, string) error, keys []func(string) string) func(testing.TB, context.Context, redis.UniversalClient, string) []string {
	return func(t testing.TB, ctx context.Context, rdb redis.UniversalClient, name string) []string {
		var written []string
		for _, key := range keys {
			k := key(name)
			if err := write(ctx, rdb, k); err != nil {
				t.Fatalf("writing the foreign value at %s: %v", k, err)
			}
			written = append(written, k)
		}
		return written
	}
}

// itself, member, bloomConfigKey, delayTimeoutKey, delayListKey and
// identityOf name an object's keys.
func itself(name string) string { return name }

func member(suffix string) func(string) string {
	return func(name string) string {
		if name == "" {
			return ""
		}
		return name + ":" + suffix
	}
}

func bloomConfigKey(name string) string  { return suffixName(name, "config") }
func delayTimeoutKey(name string) string { return delayKeysOf(name).timeout }
func delayListKey(name string) string    { return delayKeysOf(name).list }
func identityOf(key string) func(string) string {
	return func(name string) string { return identityKey(name, key) }
}

// multiLocks returns n lock handles of c under name (all named "" for an
// empty name).
func multiLocks(c *Client, name string, n int) []*Lock {
	var locks []*Lock
	for i := range n {
		locks = append(locks, c.GetLock(member(fmt.Sprint(i))(name)))
	}
	return locks
}

// objectRows lists every object the Client hands out.
func objectRows() []objectRow {
	second := func(_ any, err error) error { return err }
	return []objectRow{
		row("Lock", (*Client).GetLock,
			func(ctx context.Context, l *Lock) error { return second(l.TryLock(ctx, 0, time.Second)) },
			stringAt(itself)),
		row("FairLock", (*Client).GetFairLock,
			func(ctx context.Context, l *Lock) error { return second(l.TryLock(ctx, 0, time.Second)) },
			stringAt(itself)),
		row("ReadWriteLock.ReadLock", func(c *Client, name string) *Lock { return c.GetReadWriteLock(name).ReadLock() },
			func(ctx context.Context, l *Lock) error { return second(l.TryLock(ctx, 0, time.Second)) },
			stringAt(itself)),
		row("ReadWriteLock.WriteLock", func(c *Client, name string) *Lock { return c.GetReadWriteLock(name).WriteLock() },
			func(ctx context.Context, l *Lock) error { return second(l.TryLock(ctx, 0, time.Second)) },
			stringAt(itself)),
		row("Semaphore", (*Client).GetSemaphore,
			func(ctx context.Context, s *Semaphore) error { return second(s.TryAcquire(ctx, 1, 0)) },
			hashAt(itself)),
		row("PermitExpirableSemaphore", (*Client).GetPermitExpirableSemaphore,
			func(ctx context.Context, s *PermitExpirableSemaphore) error {
				_, _, err := s.TryAcquire(ctx, 0, time.Second)
				return err
			},
			hashAt(itself)),
		row("CountDownLatch", (*Client).GetCountDownLatch,
			func(ctx context.Context, l *CountDownLatch) error { return second(l.TrySetCount(ctx, 1)) },
			hashAt(itself)),
		row("RateLimiter", (*Client).GetRateLimiter,
			func(ctx context.Context, r *RateLimiter) error {
				return second(r.TrySetRate(ctx, Overall, 10, time.Second))
			},
			stringAt(itself)),
		row("FixedWindowLimiter", func(c *Client, name string) *FixedWindowLimiter {
			return c.GetFixedWindowLimiter(name, 10, time.Second)
		},
			func(ctx context.Context, l *FixedWindowLimiter) error { return second(l.Allow(ctx, "id", 1)) },
			listAt(identityOf("id"))),
		row("GCRALimiter", func(c *Client, name string) *GCRALimiter { return c.GetGCRALimiter(name, 10, time.Second, 5) },
			func(ctx context.Context, l *GCRALimiter) error { return second(l.Allow(ctx, "id", 1)) },
			listAt(identityOf("id"))),
		row("FixedWindowLimiter.WithLocalQuota", func(c *Client, name string) *LocalQuotaLimiter {
			return c.GetFixedWindowLimiter(name, 10, time.Second).WithLocalQuota(LocalQuota{})
		},
			func(ctx context.Context, l *LocalQuotaLimiter) error { return second(l.Allow(ctx, "id", 1)) },
			listAt(identityOf("id"))),
		row("GCRALimiter.WithLocalQuota", func(c *Client, name string) *LocalQuotaLimiter {
			return c.GetGCRALimiter(name, 10, time.Second, 5).WithLocalQuota(LocalQuota{})
		},
			func(ctx context.Context, l *LocalQuotaLimiter) error { return second(l.Allow(ctx, "id", 1)) },
			listAt(identityOf("id"))),
		row("Bucket", func(c *Client, name string) *Bucket[string] { return GetBucket[string](c, name) },
			func(ctx context.Context, b *Bucket[string]) error { _, _, err := b.Get(ctx); return err },
			listAt(itself)),
		row("AtomicLong", func(c *Client, name string) *AtomicLong { return c.GetAtomicLong(name) },
			func(ctx context.Context, a *AtomicLong) error { return second(a.IncrementAndGet(ctx)) },
			hashAt(itself)),
		row("AtomicDouble", func(c *Client, name string) *AtomicDouble { return c.GetAtomicDouble(name) },
			func(ctx context.Context, a *AtomicDouble) error { return second(a.AddAndGet(ctx, 0.5)) },
			hashAt(itself)),
		row("Map", func(c *Client, name string) *Map[string, int64] { return GetMap[string, int64](c, name) },
			func(ctx context.Context, m *Map[string, int64]) error { return second(m.FastPut(ctx, "k", 1)) },
			stringAt(itself)),
		row("MapCache", func(c *Client, name string) *MapCache[string, int64] { return GetMapCache[string, int64](c, name) },
			func(ctx context.Context, m *MapCache[string, int64]) error {
				return second(m.FastPutWithTTL(ctx, "k", 1, time.Minute, time.Minute))
			},
			stringAt(itself)),
		row("List", func(c *Client, name string) *List[string] { return GetList[string](c, name) },
			func(ctx context.Context, l *List[string]) error { return second(l.Add(ctx, "v")) },
			stringAt(itself)),
		row("Set", func(c *Client, name string) *Set[string] { return GetSet[string](c, name) },
			func(ctx context.Context, s *Set[string]) error { return second(s.Add(ctx, "v")) },
			stringAt(itself)),
		row("SortedSet", func(c *Client, name string) *SortedSet[string] { return GetSortedSet[string](c, name) },
			func(ctx context.Context, z *SortedSet[string]) error { return second(z.Add(ctx, 1, "v")) },
			hashAt(itself)),
		row("SetCache", func(c *Client, name string) *SetCache[string] { return GetSetCache[string](c, name) },
			func(ctx context.Context, s *SetCache[string]) error {
				return second(s.AddWithTTL(ctx, "v", time.Minute))
			},
			hashAt(itself)),
		row("ListMultimap", func(c *Client, name string) *ListMultimap[string, string] {
			return GetListMultimap[string, string](c, name)
		},
			func(ctx context.Context, m *ListMultimap[string, string]) error { return second(m.Put(ctx, "k", "v")) },
			stringAt(itself)),
		row("SetMultimap", func(c *Client, name string) *SetMultimap[string, string] {
			return GetSetMultimap[string, string](c, name)
		},
			func(ctx context.Context, m *SetMultimap[string, string]) error { return second(m.Put(ctx, "k", "v")) },
			stringAt(itself)),
		row("LocalCachedMap", func(c *Client, name string) *LocalCachedMap[string, int64] {
			return GetLocalCachedMap[string, int64](c, name, LocalCacheOptions{})
		},
			func(ctx context.Context, m *LocalCachedMap[string, int64]) error {
				return second(m.FastPut(ctx, "k", 1))
			},
			stringAt(itself)),
		row("BloomFilter", func(c *Client, name string) *BloomFilter[string] { return GetBloomFilter[string](c, name) },
			func(ctx context.Context, f *BloomFilter[string]) error { return second(f.TryInit(ctx, 100, 0.01)) },
			stringAt(bloomConfigKey)),
		row("IdGenerator", (*Client).GetIdGenerator,
			func(ctx context.Context, g *IdGenerator) error { return second(g.NextID(ctx)) },
			hashAt(itself)),
		row("DelayedQueue", func(c *Client, name string) *DelayedQueue[string] { return GetDelayedQueue[string](c, name) },
			func(ctx context.Context, q *DelayedQueue[string]) error { return q.Offer(ctx, "v", time.Second) },
			stringAt(delayTimeoutKey, delayListKey)),
		row("Topic", func(c *Client, name string) *Topic[string] { return GetTopic[string](c, name) },
			func(ctx context.Context, tp *Topic[string]) error { return second(tp.Publish(ctx, "m")) },
			nil),
		row("ShardedTopic", func(c *Client, name string) *Topic[string] { return GetShardedTopic[string](c, name) },
			func(ctx context.Context, tp *Topic[string]) error { return second(tp.Publish(ctx, "m")) },
			nil),
		row("Queue", func(c *Client, name string) *Queue[string] { return GetQueue[string](c, name) },
			func(ctx context.Context, q *Queue[string]) error { return q.Offer(ctx, "v") },
			hashAt(itself)),
		row("Deque", func(c *Client, name string) *Deque[string] { return GetDeque[string](c, name) },
			func(ctx context.Context, d *Deque[string]) error { return d.OfferFirst(ctx, "v") },
			hashAt(itself)),
		row("BlockingQueue", func(c *Client, name string) *BlockingQueue[string] { return GetBlockingQueue[string](c, name) },
			func(ctx context.Context, q *BlockingQueue[string]) error {
				_, _, err := q.Poll(ctx, time.Second)
				return err
			},
			hashAt(itself)),
		row("BoundedBlockingQueue", func(c *Client, name string) *BoundedBlockingQueue[string] {
			return GetBoundedBlockingQueue[string](c, name)
		},
			func(ctx context.Context, q *BoundedBlockingQueue[string]) error { return second(q.Offer(ctx, "v")) },
			hashAt(itself, boundedCapKey)),
		row("ReliableQueue", func(c *Client, name string) *ReliableQueue[string] { return GetReliableQueue[string](c, name) },
			func(ctx context.Context, q *ReliableQueue[string]) error {
				_, _, err := q.Enqueue(ctx, "v")
				return err
			},
			stringAt(itself)),
		row("MultiLock", func(c *Client, name string) *MultiLock { return NewMultiLock(multiLocks(c, name, 2)...) },
			func(ctx context.Context, m *MultiLock) error { return second(m.TryLock(ctx, 0, time.Second)) },
			stringAt(member("0"), member("1"))),
		row("RedLock", func(c *Client, name string) *RedLock { return NewRedLock(multiLocks(c, name, 3)...) },
			func(ctx context.Context, m *RedLock) error { return second(m.TryLock(ctx, 0, time.Second)) },
			stringAt(member("0"), member("1"), member("2"))),
	}
}

// nameState snapshots every key whose name contains name (every key for
// an empty name): its type, its serialized value and whether it expires.
// The test's own server holds no other test's keys.
func nameState(t *testing.T, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
	glob := strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "?", `\?`).Replace(name)
	var keys []string
	var cursor uint64
	for {
		ks, next, err := rdb.Scan(ctx, cursor, "*"+glob+"*", 1000).Result()
		if err != nil {
			t.Fatalf("SCAN: %v", err)
		}
		keys = append(keys, ks...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%q %s ttl=%v dump=%x; ", k, rdb.Type(ctx, k).Val(), rdb.PTTL(ctx, k).Val() > 0, rdb.Dump(ctx, k).Val())
	}
	return b.String()
}

// TestObjectsDocumentedErrors checks, for every object the Client hands
// out, that its representative call answers as the getters and errors.go
// document: an empty name is ErrEmptyName, a key of another Redis type is
// ErrWrongType, a call after Client.Close is ErrClientClosed, and an ended
// context is ctx.Err(); and that none of them changes Redis (no key
// created, the foreign value left exactly as the test wrote it).
func TestObjectsDocumentedErrors(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	for _, o := range objectRows() {
		t.Run(o.kind, func(t *testing.T) {
			if o.kind == "ShardedTopic" {
				redistest.RequireServer(t, 7, "sharded pub/sub (SPUBLISH)")
			}
			t.Run("empty name", func(t *testing.T) {
				call := o.open(newClient(t, rdb, nil), "")
				before := nameState(t, rdb, "")
				if err := call(ctx); !errors.Is(err, ErrEmptyName) {
					t.Errorf("%s named \"\": got %v, want ErrEmptyName", o.kind, err)
				}
				if after := nameState(t, rdb, ""); after != before {
					t.Errorf("%s named \"\": Redis changed:\n got %s\nwant %s", o.kind, after, before)
				}
			})

			t.Run("wrong type", func(t *testing.T) {
				name := uniqueName(t, rdb)
				call := o.open(newClient(t, rdb, nil), name)
				if o.foreign == nil {
					// A topic is a channel, not a key: a string at its
					// name is no concern of Publish, which leaves it.
					rdb.Set(ctx, name, "foreign", 0)
					before := nameState(t, rdb, name)
					if err := call(ctx); err != nil {
						t.Errorf("%s on a name that is also a string key: got %v, want nil", o.kind, err)
					}
					if after := nameState(t, rdb, name); after != before {
						t.Errorf("%s: Redis changed:\n got %s\nwant %s", o.kind, after, before)
					}
					return
				}
				keys := o.foreign(t, ctx, rdb, name)
				before := nameState(t, rdb, name)
				if err := call(ctx); !errors.Is(err, ErrWrongType) {
					t.Errorf("%s with a foreign value at %q: got %v, want ErrWrongType", o.kind, keys, err)
				}
				after := nameState(t, rdb, name)
				if after != before {
					t.Errorf("%s with a foreign value at %q: Redis changed:\n got %s\nwant %s", o.kind, keys, after, before)
				}
				for _, k := range keys {
					if !strings.Contains(after, fmt.Sprintf("%q ", k)) {
						t.Errorf("%s: foreign key %q gone: %s", o.kind, k, after)
					}
				}
			})

			t.Run("closed client", func(t *testing.T) {
				name := uniqueName(t, rdb)
				c := newClient(t, rdb, nil)
				call := o.open(c, name)
				if err := c.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				if err := call(ctx); !errors.Is(err, ErrClientClosed) {
					t.Errorf("%s after Client.Close: got %v, want ErrClientClosed", o.kind, err)
				}
				if after := nameState(t, rdb, name); after != "" {
					t.Errorf("%s after Client.Close: keys created: %s", o.kind, after)
				}
			})

			t.Run("cancelled context", func(t *testing.T) {
				name := uniqueName(t, rdb)
				call := o.open(newClient(t, rdb, nil), name)
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				if err := call(cctx); !errors.Is(err, context.Canceled) {
					t.Errorf("%s with a cancelled context: got %v, want context.Canceled", o.kind, err)
				}
				if after := nameState(t, rdb, name); after != "" {
					t.Errorf("%s with a cancelled context: keys created: %s", o.kind, after)
				}
			})
		})
	}
}
