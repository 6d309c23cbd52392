package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// objLib is one library (or the floor) doing one kind of operation on a
// Cluster client. open prepares it for g goroutines and returns the
// operation: goroutine w's n-th, on keys of w's own where the operation
// writes, and a close.
type objLib struct {
	name, algo, settings string
	kind                 kind
	open                 func(ctx context.Context, cc *redis.ClusterClient, tag string, g int) (op func(ctx context.Context, w, n int) error, closeLib func(), err error)
}

// objFamily is one operation measured side by side: one table per
// goroutine count.
type objFamily struct {
	what, unit, note string
	libs             []objLib
}

// Sizes of the queue and map-cache operations: every goroutine works on
// objSpread objects of its own (names without hash tags, so they fall in
// different slots, on every master), with values of objValueSize bytes.
const (
	objSpread    = 16
	objKeys      = 100
	objValueSize = 64
	// objIdentities is 10× the rate scenario's identities, so that no run
	// reaches 100 decisions per second per identity below 1 M decisions/s,
	// and a denial is an error.
	objIdentities = 10 * rateIdentities
)

var objValue = strings.Repeat("v", objValueSize)

// runClusterObjects: keyed limiters, queue offer+poll and MapCache put+get
// on a 3-master cluster, each from 1 and 32 goroutines with keys spread
// over the slots, side by side with the peers and the floor on the same
// Cluster client.
func runClusterObjects(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := startCluster(ctx, 3)
	if err != nil {
		return err
	}
	defer stop()
	families := []objFamily{limiterFamily(), queueFamily(), mapCacheFamily()}
	gs := []int{1, 32}
	tables := make([][]*table, len(families))
	for f, fam := range families {
		for _, g := range gs {
			t := &table{
				title: fmt.Sprintf("Redis Cluster, 3 masters: %s, %d goroutine(s), one client", fam.what, g),
				note: fam.note + " One Cluster client per run (PoolSize 64); round trips are counted on its node clients, where each " +
					"command and pipeline lands once; Redis commands (INFO commandstats, commands inside scripts included) and CPU are summed over the three masters.",
				primary: "ops", higher: true, ratios: true,
				cols: []col{
					{key: "ops", head: fam.unit + " (min-max)", format: "%.0f", spread: true},
					{key: "rt", head: "round trips/op", format: "%.2f"},
					{key: "srv", head: "Redis cmds/op", format: "%.2f"},
					{key: "scpu", head: "Redis CPU µs/op", format: "%.0f"},
					{key: "allocs", head: "allocs/op", format: "%.0f"},
				},
			}
			for _, l := range fam.libs {
				label := l.settings
				if l.algo != "" {
					label = l.algo + "; " + l.settings
				}
				t.row(l.name, label, l.kind).group = l.algo
			}
			tables[f] = append(tables[f], t)
		}
	}
	for r := range s.rounds {
		for f, fam := range families {
			for t, g := range gs {
				for i := range fam.libs {
					k := (i + r) % len(fam.libs)
					if ctx.Err() != nil {
						return ctx.Err()
					}
					m, err := s.objLoop(ctx, srvs, admins, fam.libs[k], g, fmt.Sprintf("%d:%d:%d:%d", f, t, k, r))
					tables[f][t].rows[k].add(m, err)
					fmt.Fprintf(os.Stderr, ".")
				}
			}
		}
	}
	fmt.Fprintln(os.Stderr)
	for _, ts := range tables {
		for _, t := range ts {
			s.emit(t)
		}
	}
	return nil
}

// objLoop runs lib's operation in g goroutines on a new Cluster client for
// a warm-up and a measured window, then empties the cluster.
func (s *suite) objLoop(ctx context.Context, srvs []*server, admins []*redis.Client, lib objLib, g int, tag string) (map[string]float64, error) {
	h := &rtHook{}
	cc, err := clusterClient(ctx, srvs, h)
	if err != nil {
		return nil, err
	}
	defer cc.Close()
	defer func() {
		for _, a := range admins {
			_ = a.FlushAll(context.WithoutCancel(ctx)).Err()
		}
	}()
	op, closeLib, err := lib.open(ctx, cc, tag, g)
	if err != nil {
		return nil, err
	}
	defer closeLib()

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ops atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for w := range g {
		wg.Go(func() {
			for n := 0; runCtx.Err() == nil; n++ {
				if err := op(runCtx, w, n); err != nil {
					if runCtx.Err() == nil {
						errOnce.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				ops.Add(1)
			}
		})
	}
	hooks := []*rtHook{h}
	sleep(runCtx, s.warmup)
	before, err1 := read(ctx, &ops, hooks, admins)
	sleep(runCtx, s.duration)
	after, err2 := read(ctx, &ops, hooks, admins)
	cancel()
	wg.Wait()
	if err := errors.Join(firstErr, err1, err2, ctx.Err()); err != nil {
		return nil, err
	}
	n := float64(after.ops - before.ops)
	if n == 0 {
		return nil, errors.New("no operation completed")
	}
	return map[string]float64{
		"ops":    n / after.at.Sub(before.at).Seconds(),
		"rt":     float64(after.rt-before.rt) / n,
		"srv":    float64(after.srv-before.srv) / n,
		"allocs": float64(after.mallocs-before.mallocs) / n,
		"scpu":   float64(after.scpu-before.scpu) / float64(time.Microsecond) / n,
	}, nil
}

// ours opens a redisson.Client on cc (with opts) for one run.
func ours(name, settings string, opts *redisson.Options, prepare func(c *redisson.Client, tag string, g int) func(ctx context.Context, w, n int) error) objLib {
	return objLib{name: "redisson", algo: name, settings: settings, kind: kindOurs,
		open: func(_ context.Context, cc *redis.ClusterClient, tag string, g int) (func(context.Context, int, int) error, func(), error) {
			c, err := redisson.New(cc, opts)
			if err != nil {
				return nil, nil, err
			}
			return prepare(c, tag, g), func() { c.Close() }, nil
		}}
}

// plain is a library that needs nothing but cc.
func plain(name, algo, settings string, k kind, prepare func(cc *redis.ClusterClient, tag string) (func(ctx context.Context, w, n int) error, error)) objLib {
	return objLib{name: name, algo: algo, settings: settings, kind: k,
		open: func(_ context.Context, cc *redis.ClusterClient, tag string, _ int) (func(context.Context, int, int) error, func(), error) {
			op, err := prepare(cc, tag)
			return op, func() {}, err
		}}
}

// identity is the key of goroutine w's n-th decision: every goroutine
// cycles over the objIdentities identities, from its own offset.
func identity(tag string, w, n int) string {
	return "r:" + tag + ":" + strconv.Itoa((w*311+n)%objIdentities)
}

func limiterFamily() objFamily {
	allowed := func(ok bool, err error) error {
		if err == nil && !ok {
			return errors.New("denied: a limit was reached that the load never reaches")
		}
		return err
	}
	return objFamily{
		what: "keyed rate-limit decisions", unit: "decisions/s",
		note: fmt.Sprintf("%d per %v per identity, cycling over %d identities whose keys fall in slots on every master "+
			"(ours: `name:{identity}`), so that no run reaches the limit: a run that gets a denial fails. \"vs best peer\" compares with the peer of the same algorithm. "+
			"The floor is one `EVALSHA` of `return 1` on the identity's key.", rateLimit, ratePeriod, objIdentities),
		libs: []objLib{
			plain("floor", "", "1 × EVALSHA `return 1`", kindFloor, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				return func(ctx context.Context, w, n int) error {
					return scriptOne.Run(ctx, cc, []string{identity(tag, w, n)}).Err()
				}, nil
			}),
			plain("go-redis/redis_rate", "GCRA", "defaults, PerSecond(100)", kindPeer, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				l, lim := redis_rate.NewLimiter(cc), redis_rate.PerSecond(rateLimit)
				return func(ctx context.Context, w, n int) error {
					res, err := l.Allow(ctx, identity(tag, w, n), lim)
					return allowed(err == nil && res.Allowed > 0, err)
				}, nil
			}),
			ours("GCRA", "GetGCRALimiter(rate 100/s, burst 100)", nil, func(c *redisson.Client, tag string, _ int) func(context.Context, int, int) error {
				l := c.GetGCRALimiter("gcra", rateLimit, ratePeriod, rateLimit)
				return func(ctx context.Context, w, n int) error {
					d, err := l.Allow(ctx, identity(tag, w, n), 1)
					return allowed(d.Allowed, err)
				}
			}),
			ours("GCRA", "same, DisableAutoPipeline", &redisson.Options{DisableAutoPipeline: true}, func(c *redisson.Client, tag string, _ int) func(context.Context, int, int) error {
				l := c.GetGCRALimiter("gcra", rateLimit, ratePeriod, rateLimit)
				return func(ctx context.Context, w, n int) error {
					d, err := l.Allow(ctx, identity(tag, w, n), 1)
					return allowed(d.Allowed, err)
				}
			}),
			plain("ulule/limiter", "fixed window", "redis store (go-redis v9), README options", kindPeer, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				store, err := ulredis.NewStoreWithOptions(cc, limiter.StoreOptions{Prefix: "limiter", MaxRetry: 3})
				if err != nil {
					return nil, err
				}
				l := limiter.New(store, limiter.Rate{Period: ratePeriod, Limit: rateLimit})
				return func(ctx context.Context, w, n int) error {
					c, err := l.Get(ctx, identity(tag, w, n))
					return allowed(err == nil && !c.Reached, err)
				}, nil
			}),
			ours("fixed window", "GetFixedWindowLimiter(100 per 1s)", nil, func(c *redisson.Client, tag string, _ int) func(context.Context, int, int) error {
				l := c.GetFixedWindowLimiter("fw", rateLimit, ratePeriod)
				return func(ctx context.Context, w, n int) error {
					d, err := l.Allow(ctx, identity(tag, w, n), 1)
					return allowed(d.Allowed, err)
				}
			}),
		},
	}
}

// objName is the name of goroutine w's object for its n-th operation.
func objName(prefix, tag string, w, n int) string {
	return prefix + ":" + tag + ":" + strconv.Itoa(w) + ":" + strconv.Itoa(n%objSpread)
}

// encoded returns what the default codec makes of v, for floors that send
// the bytes our objects send.
func encoded(cc *redis.ClusterClient, v string) (string, error) {
	c, err := redisson.New(cc, nil)
	if err != nil {
		return "", err
	}
	defer c.Close()
	b, err := redisson.GetQueue[string](c, "codec").Codec().Marshal(v)
	return string(b), err
}

func queueFamily() objFamily {
	queueOp := func(c *redisson.Client, tag string, g int) func(context.Context, int, int) error {
		qs := make([][]*redisson.Queue[string], g)
		for w := range g {
			for i := range objSpread {
				qs[w] = append(qs[w], redisson.GetQueue[string](c, objName("q", tag, w, i)))
			}
		}
		return func(ctx context.Context, w, n int) error {
			q := qs[w][n%objSpread]
			if err := q.Offer(ctx, objValue); err != nil {
				return err
			}
			v, ok, err := q.Poll(ctx)
			if err == nil && (!ok || v != objValue) {
				err = fmt.Errorf("poll of %s: got %q, %v", q.Name(), v, ok)
			}
			return err
		}
	}
	return objFamily{
		what: fmt.Sprintf("queue Offer+Poll of %d-byte values", objValueSize), unit: "offer+poll/s",
		note: fmt.Sprintf("Every goroutine offers one value and polls it back, cycling over %d queues of its own whose names fall in slots on every master. "+
			"The floor is `RPUSH` + `LPOP` of the bytes our codec sends, on the same keys.", objSpread),
		libs: []objLib{
			plain("floor", "", "RPUSH + LPOP", kindFloor, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				b, err := encoded(cc, objValue)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, w, n int) error {
					key := objName("q", tag, w, n)
					if err := cc.RPush(ctx, key, b).Err(); err != nil {
						return err
					}
					return cc.LPop(ctx, key).Err()
				}, nil
			}),
			ours("", "GetQueue[string]", nil, queueOp),
			ours("", "same, DisableAutoPipeline", &redisson.Options{DisableAutoPipeline: true}, queueOp),
		},
	}
}

func mapCacheFamily() objFamily {
	mapOp := func(fast bool) func(c *redisson.Client, tag string, g int) func(context.Context, int, int) error {
		return func(c *redisson.Client, tag string, g int) func(context.Context, int, int) error {
			ms := make([][]*redisson.MapCache[string, string], g)
			for w := range g {
				for i := range objSpread {
					ms[w] = append(ms[w], redisson.GetMapCache[string, string](c, objName("mc", tag, w, i)))
				}
			}
			return func(ctx context.Context, w, n int) error {
				m, key := ms[w][n%objSpread], "k"+strconv.Itoa(n%objKeys)
				var err error
				if fast {
					_, err = m.FastPut(ctx, key, objValue)
				} else {
					_, _, err = m.Put(ctx, key, objValue)
				}
				if err != nil {
					return err
				}
				v, ok, err := m.Get(ctx, key)
				if err == nil && (!ok || v != objValue) {
					err = fmt.Errorf("get of %s in %s: got %q, %v", key, m.Name(), v, ok)
				}
				return err
			}
		}
	}
	return objFamily{
		what: fmt.Sprintf("MapCache Put+Get of %d-byte values", objValueSize), unit: "put+get/s",
		note: fmt.Sprintf("Every goroutine puts one entry (no TTL) and gets it back, cycling over %d keys in each of %d maps of its own whose names fall "+
			"in slots on every master. The floors make the same two round trips on the same keys: two `EVALSHA` of `return 1` (MapCache's calls are scripts), "+
			"and `HSET` + `HGET` of the bytes our codec sends plus the 16-byte entry header.", objKeys, objSpread),
		libs: []objLib{
			plain("floor", "", "2 × EVALSHA `return 1`", kindFloor, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				return func(ctx context.Context, w, n int) error {
					keys := []string{objName("mc", tag, w, n)}
					if err := scriptOne.Run(ctx, cc, keys).Err(); err != nil {
						return err
					}
					return scriptOne.Run(ctx, cc, keys).Err()
				}, nil
			}),
			plain("floor", "", "HSET + HGET", kindFloor, func(cc *redis.ClusterClient, tag string) (func(context.Context, int, int) error, error) {
				v, err := encoded(cc, objValue)
				if err != nil {
					return nil, err
				}
				v = strings.Repeat("\x00", 16) + v
				return func(ctx context.Context, w, n int) error {
					key, field := objName("mc", tag, w, n), "k"+strconv.Itoa(n%objKeys)
					if err := cc.HSet(ctx, key, field, v).Err(); err != nil {
						return err
					}
					return cc.HGet(ctx, key, field).Err()
				}, nil
			}),
			ours("", "GetMapCache[string, string], Put + Get", nil, mapOp(false)),
			ours("", "same, FastPut + Get", nil, mapOp(true)),
			ours("", "Put + Get, DisableAutoPipeline", &redisson.Options{DisableAutoPipeline: true}, mapOp(false)),
		},
	}
}
