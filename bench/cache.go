package main

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// cacheLib is one way of reading keys that other writers change: get reads
// key i, set writes it, hits counts the reads served from memory so far.
type cacheLib struct {
	name, settings string
	kind           kind
	open           func(addr string) (cacheOps, error)
}

type cacheOps struct {
	get  func(ctx context.Context, i int) error
	set  func(ctx context.Context, i int, v string) error
	hits func() uint64
	stop func()
}

const cacheKeys = 100

func cacheKey(i int) string { return "cache:" + strconv.Itoa(i) }

// runCache: one goroutine reads 100 keys at random, with 1% writes of a
// random key through the same library; measured: the hit rate, the Redis
// commands per 1,000 reads (INFO commandstats, writes included), the mean
// read; then the latency of a hit (one key read over and over).
func runCache(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	reads, hitReads := 100_000, 200_000
	if s.short {
		reads, hitReads = 5_000, 10_000
	}
	libs := []cacheLib{oursCache(), rueidisCache(), plainGetCache()}
	t := &table{
		title: fmt.Sprintf("Client-side caching: %d reads of %d keys with 1%% writes, one goroutine", reads, cacheKeys),
		note: "Reads pick a key at random; every 100th operation writes a random key through the same library. " +
			"Hit rate: reads served from memory; cmds per 1,000 reads: INFO commandstats over the run (the writes' " +
			"commands and the cache's own, such as CLIENT TRACKING, included); hit ns: one cached key read " +
			fmt.Sprintf("%d times, per read. redisson: WithClientSideCaching (BCAST tracking, prefix \"cache:\"); ", hitReads) +
			"rueidis: DoCache with a 1-minute TTL (default tracking mode, RESP3); go-redis: plain GET.",
		primary: "mean",
		cols: []col{
			{key: "hitrate", head: "hit rate %", format: "%.1f"},
			{key: "cmds", head: "Redis cmds per 1,000 reads", format: "%.0f"},
			{key: "mean", head: "mean read µs", format: "%.2f", spread: true},
			{key: "hit", head: "hit ns", format: "%.0f", spread: true},
		},
	}
	for round := 0; round < s.rounds; round++ {
		for _, l := range libs {
			r := rowOf(t, l)
			r.add(cacheRun(ctx, srvs[0].addr, admins[0], l, reads, hitReads))
		}
	}
	s.emit(t)
	return nil
}

func rowOf(t *table, l cacheLib) *row {
	for _, r := range t.rows {
		if r.lib == l.name {
			return r
		}
	}
	return t.row(l.name, l.settings, l.kind)
}

func cacheRun(ctx context.Context, addr string, admin *redis.Client, l cacheLib, reads, hitReads int) (map[string]float64, error) {
	c, err := l.open(addr)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	get, set := c.get, c.set
	for i := range cacheKeys {
		if err := set(ctx, i, "v0"); err != nil {
			return nil, err
		}
	}
	time.Sleep(50 * time.Millisecond) // the writes' invalidations
	rng := rand.New(rand.NewPCG(1, 2))
	before, err := serverCommands(ctx, admin)
	if err != nil {
		return nil, err
	}
	n := 0
	hits0 := c.hits()
	start := time.Now()
	for op := 0; n < reads; op++ {
		i := rng.IntN(cacheKeys)
		if op%100 == 99 {
			if err := set(ctx, i, strconv.Itoa(op)); err != nil {
				return nil, err
			}
			continue
		}
		if err := get(ctx, i); err != nil {
			return nil, err
		}
		n++
	}
	elapsed := time.Since(start)
	hits := c.hits() - hits0
	after, err := serverCommands(ctx, admin)
	if err != nil {
		return nil, err
	}
	// Hit latency: key 0, read until it is a hit, then timed.
	for try := 0; try < 1000; try++ {
		h := c.hits()
		if err := get(ctx, 0); err != nil {
			return nil, err
		}
		if c.hits() > h {
			break
		}
	}
	lat := make([]float64, 0, 5)
	for range 5 {
		t0 := time.Now()
		for range hitReads / 5 {
			get(ctx, 0)
		}
		lat = append(lat, float64(time.Since(t0).Nanoseconds())/float64(hitReads/5))
	}
	slices.Sort(lat)
	return map[string]float64{
		"hitrate": 100 * float64(hits) / float64(n),
		"cmds":    1000 * float64(after-before) / float64(n),
		"mean":    float64(elapsed.Microseconds()) / float64(reads),
		"hit":     lat[len(lat)/2],
	}, nil
}

// oursCache: Bucket[string] with WithClientSideCaching; a hit is told by
// the client's cache counters.
func oursCache() cacheLib {
	return cacheLib{name: "redisson (this library)", settings: "WithClientSideCaching, Prefixes cache:", kind: kindOurs,
		open: func(addr string) (cacheOps, error) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			c, err := redisson.New(rdb, &redisson.Options{
				ClientSideCaching: redisson.ClientSideCaching{Prefixes: []string{"cache:"}},
				Logger:            slog.New(slog.DiscardHandler),
			})
			if err != nil {
				rdb.Close()
				return cacheOps{}, err
			}
			bs := make([]*redisson.Bucket[string], cacheKeys)
			for i := range bs {
				bs[i] = redisson.GetBucket[string](c, cacheKey(i), redisson.WithCodec(redisson.StringCodec{}), redisson.WithClientSideCaching())
			}
			get := func(ctx context.Context, i int) error {
				_, _, err := bs[i].Get(ctx)
				return err
			}
			set := func(ctx context.Context, i int, v string) error { return bs[i].Set(ctx, v) }
			// The tracking connection is dialled by the first read: wait for it.
			bs[0].Get(context.Background())
			time.Sleep(100 * time.Millisecond)
			return cacheOps{get: get, set: set, hits: func() uint64 { return c.Stats().Cache.Hits }, stop: func() { c.Close(); rdb.Close() }}, nil
		}}
}

// rueidisCache: rueidis DoCache, its client-side caching.
func rueidisCache() cacheLib {
	return cacheLib{name: "redis/rueidis DoCache", settings: "TTL 1m, default tracking", kind: kindPeer,
		open: func(addr string) (cacheOps, error) {
			c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
			if err != nil {
				return cacheOps{}, err
			}
			var hits uint64
			get := func(ctx context.Context, i int) error {
				r := c.DoCache(ctx, c.B().Get().Key(cacheKey(i)).Cache(), time.Minute)
				if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
					return err
				}
				if r.IsCacheHit() {
					hits++
				}
				return nil
			}
			set := func(ctx context.Context, i int, v string) error {
				return c.Do(ctx, c.B().Set().Key(cacheKey(i)).Value(v).Build()).Error()
			}
			return cacheOps{get: get, set: set, hits: func() uint64 { return hits }, stop: c.Close}, nil
		}}
}

// plainGetCache: go-redis GET, no cache (the floor of commands).
func plainGetCache() cacheLib {
	return cacheLib{name: "redis/go-redis GET", settings: "no cache", kind: kindPeer,
		open: func(addr string) (cacheOps, error) {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			get := func(ctx context.Context, i int) error {
				err := rdb.Get(ctx, cacheKey(i)).Err()
				if err == redis.Nil {
					err = nil
				}
				return err
			}
			set := func(ctx context.Context, i int, v string) error { return rdb.Set(ctx, cacheKey(i), v, 0).Err() }
			return cacheOps{get: get, set: set, hits: func() uint64 { return 0 }, stop: func() { rdb.Close() }}, nil
		}}
}
