package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/ulule/limiter/v3"
	ulredis "github.com/ulule/limiter/v3/drivers/store/redis"
)

// Every rate limiter is asked for rateLimit decisions per ratePeriod per
// identity; the load cycles over rateIdentities identities, so at these
// speeds nearly every decision allows (the "allowed" column checks that the
// limiters count: a limiter that denied everything would be suspect).
const (
	rateLimit      = 100
	ratePeriod     = time.Second
	rateIdentities = 1000
)

// rateLib is one rate limiter with one algorithm. open prepares it on a
// go-redis client and returns a decision function: one decision for one
// identity, reporting whether it was allowed.
type rateLib struct {
	name, algo, settings string
	kind                 kind
	open                 func(ctx context.Context, rdb *redis.Client) (decide func(ctx context.Context, key string) (bool, error), err error)
}

func (l rateLib) label() string {
	if l.algo == "" {
		return l.settings
	}
	return l.algo + "; " + l.settings
}

func peerRateLibs() []rateLib {
	return []rateLib{
		{name: "floor", settings: "1 × EVALSHA `return 1`", kind: kindFloor,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				return func(ctx context.Context, _ string) (bool, error) {
					return true, scriptOne.Run(ctx, rdb, nil).Err()
				}, nil
			}},
		{name: "go-redis/redis_rate", algo: "GCRA", settings: "defaults, PerSecond(100)", kind: kindPeer,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				l := redis_rate.NewLimiter(rdb)
				lim := redis_rate.PerSecond(rateLimit)
				return func(ctx context.Context, key string) (bool, error) {
					res, err := l.Allow(ctx, key, lim)
					if err != nil {
						return false, err
					}
					return res.Allowed > 0, nil
				}, nil
			}},
		{name: "ulule/limiter", algo: "fixed window", settings: "redis store (go-redis v9), README options", kind: kindPeer,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				store, err := ulredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: "limiter", MaxRetry: 3})
				if err != nil {
					return nil, err
				}
				l := limiter.New(store, limiter.Rate{Period: ratePeriod, Limit: rateLimit})
				return func(ctx context.Context, key string) (bool, error) {
					c, err := l.Get(ctx, key)
					if err != nil {
						return false, err
					}
					return !c.Reached, nil
				}, nil
			}},
	}
}

// rateLoop makes decisions in g goroutines, cycling over the identities.
func (s *suite) rateLoop(ctx context.Context, srvs []*server, admins []*redis.Client, lib rateLib, g, identities int, tag string) (map[string]float64, error) {
	rdbs, hooks := hooked(srvs, 1)
	defer rdbs[0].Close()
	decide, err := lib.open(ctx, rdbs[0])
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ops, allowed atomic.Int64
	var firstErr error
	var errOnce sync.Once
	var wg sync.WaitGroup
	for i := range g {
		wg.Go(func() {
			for n := i; runCtx.Err() == nil; n += g {
				ok, err := decide(runCtx, "r:"+tag+":"+strconv.Itoa(n%identities))
				if err != nil {
					if runCtx.Err() == nil {
						errOnce.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				if ok {
					allowed.Add(1)
				}
				ops.Add(1)
			}
		})
	}
	sleep(runCtx, s.warmup)
	a0 := allowed.Load()
	before, err1 := read(ctx, &ops, hooks, admins)
	sleep(runCtx, s.duration)
	after, err2 := read(ctx, &ops, hooks, admins)
	a1 := allowed.Load()
	cancel()
	wg.Wait()
	if err := errors.Join(firstErr, err1, err2, ctx.Err()); err != nil {
		return nil, err
	}
	n := float64(after.ops - before.ops)
	if n == 0 {
		return nil, errors.New("no decision completed")
	}
	return map[string]float64{
		"ops":     n / after.at.Sub(before.at).Seconds(),
		"rt":      float64(after.rt-before.rt) / n,
		"srv":     float64(after.srv-before.srv) / n,
		"allocs":  float64(after.mallocs-before.mallocs) / n,
		"allowed": min(100, 100*float64(a1-a0)/n), // approximate: read apart from ops
	}, nil
}

// rateMemory measures what n identities cost Redis: one decision each on an
// emptied server, then the growth of used_memory and the number of keys.
func rateMemory(ctx context.Context, srv *server, admin *redis.Client, lib rateLib, n int) (map[string]float64, error) {
	rdb := srv.client()
	defer rdb.Close()
	decide, err := lib.open(ctx, rdb)
	if err != nil {
		return nil, err
	}
	const g = 32
	// Warm-up in g goroutines: loads the scripts and opens the connections,
	// whose buffers would otherwise count as the identities' memory.
	var wg sync.WaitGroup
	errs := make([]error, g)
	for w := range g {
		wg.Go(func() {
			for i := range 10 {
				if _, err := decide(ctx, "warm-up:"+strconv.Itoa(w*10+i)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := admin.FlushAll(ctx).Err(); err != nil {
		return nil, err
	}
	used := func() (float64, error) {
		m, err := info(ctx, admin, "memory")
		if err != nil {
			return 0, err
		}
		return strconv.ParseFloat(m["used_memory"], 64)
	}
	m0, err := used()
	if err != nil {
		return nil, err
	}
	for w := range g {
		wg.Go(func() {
			for i := w; i < n; i += g {
				if _, err := decide(ctx, "m:"+strconv.Itoa(i)); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m1, err := used()
	if err != nil {
		return nil, err
	}
	keys, err := admin.DBSize(ctx).Result()
	if err != nil {
		return nil, err
	}
	// MEMORY USAGE of a sample of the keys, averaged and scaled to keys per identity.
	var sampled, sum float64
	iter := admin.Scan(ctx, 0, "*", 100).Iterator()
	for sampled < 100 && iter.Next(ctx) {
		u, err := admin.MemoryUsage(ctx, iter.Val()).Result()
		if errors.Is(err, redis.Nil) {
			continue // expired since the scan saw it (a GCRA key lives until its burst is back)
		}
		if err != nil {
			return nil, err
		}
		sum += float64(u)
		sampled++
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	perKey := 0.0
	if sampled > 0 {
		perKey = sum / sampled
	}
	return map[string]float64{
		"bytes": (m1 - m0) / float64(n),
		"keys":  float64(keys) / float64(n),
		"usage": perKey * float64(keys) / float64(n),
	}, nil
}

func runRate(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	libs := append(peerRateLibs(), ourRateLibs()...)
	gs := []int{1, 32}
	var tables []*table
	for _, g := range gs {
		t := &table{
			title: fmt.Sprintf("Rate-limit decisions, %d goroutine(s)", g),
			note: fmt.Sprintf("%d per %v per identity, cycling over %d identities on one go-redis client. "+
				"\"vs best peer\" compares with the peer of the same algorithm where there is one.",
				rateLimit, ratePeriod, rateIdentities),
			primary: "ops", higher: true, ratios: true,
			cols: []col{
				{key: "ops", head: "decisions/s (min-max)", format: "%.0f", spread: true},
				{key: "rt", head: "round trips/decision", format: "%.2f"},
				{key: "srv", head: "Redis cmds/decision", format: "%.2f"},
				{key: "allocs", head: "allocs/decision", format: "%.0f"},
				{key: "allowed", head: "allowed %", format: "%.0f"},
			},
		}
		if g == 1 && len(ourRateLibs()) == 0 {
			t.note += " Our rate limiters are not in this build yet (see ourRateLibs in bench/ourrate.go)."
		}
		for _, l := range libs {
			r := t.row(l.name, l.label(), l.kind)
			r.group = l.algo
		}
		tables = append(tables, t)
	}
	for r := range s.rounds {
		for t := range tables {
			for i := range libs {
				k := (i + r) % len(libs)
				if ctx.Err() != nil {
					break
				}
				m, err := s.rateLoop(ctx, srvs, admins, libs[k], gs[t], rateIdentities, fmt.Sprintf("%d:%d:%d", t, k, r))
				tables[t].rows[k].add(m, err)
			}
		}
	}
	for _, t := range tables {
		s.emit(t)
	}
	if err := s.runHotRate(ctx, srvs, admins); err != nil {
		return err
	}

	n := 10000
	if s.short {
		n = 1000
	}
	mem := &table{
		title: fmt.Sprintf("Redis memory per tracked identity (%d identities, one decision each)", n),
		note:  "used_memory growth on an emptied server (connections opened and scripts loaded beforehand) divided by the identities; keys per identity from DBSIZE; MEMORY USAGE averaged over up to 100 keys, times keys per identity. Measured once (it does not vary).",
		cols: []col{
			{key: "bytes", head: "bytes/identity", format: "%.0f"},
			{key: "keys", head: "keys/identity", format: "%.2f"},
			{key: "usage", head: "MEMORY USAGE bytes/identity", format: "%.0f"},
		},
	}
	for _, l := range libs {
		if l.kind == kindFloor {
			continue
		}
		r := mem.row(l.name, l.label(), l.kind)
		r.add(rateMemory(ctx, srvs[0], admins[0], l, n))
	}
	s.emit(mem)
	return nil
}

// runHotRate measures one hot identity whose limit is never reached: where
// local quota serves decisions in process.
func (s *suite) runHotRate(ctx context.Context, srvs []*server, admins []*redis.Client) error {
	libs := append(hotPeerRateLibs(), hotOurRateLibs()...)
	gs := []int{1, 32}
	var tables []*table
	for _, g := range gs {
		t := &table{
			title: fmt.Sprintf("Rate-limit decisions on one hot identity, %d goroutine(s)", g),
			note: "One identity, a limit no run reaches (fixed window 10^12 per 1s; GCRA 10^6 per 1s, burst 2^30), " +
				"one go-redis client. Local quota takes chunks of up to 1000 permits (one round trip each) and decides in process.",
			primary: "ops", higher: true, ratios: true,
			cols: []col{
				{key: "ops", head: "decisions/s (min-max)", format: "%.0f", spread: true},
				{key: "rt", head: "round trips/decision", format: "%.4f"},
				{key: "srv", head: "Redis cmds/decision", format: "%.4f"},
				{key: "allocs", head: "allocs/decision", format: "%.2f"},
				{key: "allowed", head: "allowed %", format: "%.0f"},
			},
		}
		for _, l := range libs {
			r := t.row(l.name, l.label(), l.kind)
			r.group = l.algo
		}
		tables = append(tables, t)
	}
	for r := range s.rounds {
		for t := range tables {
			for i := range libs {
				k := (i + r) % len(libs)
				if ctx.Err() != nil {
					break
				}
				m, err := s.rateLoop(ctx, srvs, admins, libs[k], gs[t], 1, fmt.Sprintf("hot:%d:%d:%d", t, k, r))
				tables[t].rows[k].add(m, err)
			}
		}
	}
	for _, t := range tables {
		s.emit(t)
	}
	return nil
}

// Limits of the hot-identity table, never reached in a run.
const (
	hotFixedLimit = 1_000_000_000_000
	hotGCRARate   = 1_000_000
	hotGCRABurst  = 1 << 30
)

func hotPeerRateLibs() []rateLib {
	return []rateLib{
		{name: "go-redis/redis_rate", algo: "GCRA", settings: "Limit{Rate 10^6, Burst 2^30, Period 1s}", kind: kindPeer,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				l := redis_rate.NewLimiter(rdb)
				lim := redis_rate.Limit{Rate: hotGCRARate, Burst: hotGCRABurst, Period: time.Second}
				return func(ctx context.Context, key string) (bool, error) {
					res, err := l.Allow(ctx, key, lim)
					if err != nil {
						return false, err
					}
					return res.Allowed > 0, nil
				}, nil
			}},
		{name: "ulule/limiter", algo: "fixed window", settings: "redis store (go-redis v9), 10^12 per 1s", kind: kindPeer,
			open: func(_ context.Context, rdb *redis.Client) (func(context.Context, string) (bool, error), error) {
				store, err := ulredis.NewStoreWithOptions(rdb, limiter.StoreOptions{Prefix: "limiter", MaxRetry: 3})
				if err != nil {
					return nil, err
				}
				l := limiter.New(store, limiter.Rate{Period: time.Second, Limit: hotFixedLimit})
				return func(ctx context.Context, key string) (bool, error) {
					c, err := l.Get(ctx, key)
					if err != nil {
						return false, err
					}
					return !c.Reached, nil
				}, nil
			}},
	}
}
