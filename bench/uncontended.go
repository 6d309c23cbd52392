package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// servers starts n redis-servers (with extra arguments on their command
// lines) and returns them with one admin client each (no hook: its INFO
// calls are not counted as anyone's round trips).
func servers(n int, extra ...string) ([]*server, []*redis.Client, func(), error) {
	var srvs []*server
	var admins []*redis.Client
	stop := func() {
		for _, a := range admins {
			a.Close()
		}
		for _, s := range srvs {
			s.stop()
		}
	}
	for range n {
		srv, err := startServer(extra...)
		if err != nil {
			stop()
			return nil, nil, nil, err
		}
		srvs = append(srvs, srv)
		admins = append(admins, srv.client())
	}
	return srvs, admins, stop, nil
}

// counters is one reading of everything a run measures.
type counters struct {
	at      time.Time
	ops     int64
	rt      int64 // go-redis round trips of the library's clients
	srv     int64 // INFO commandstats calls on every server
	mallocs uint64
	cpu     time.Duration // this process
	scpu    time.Duration // every server
}

func read(ctx context.Context, ops *atomic.Int64, hooks []*rtHook, admins []*redis.Client) (counters, error) {
	c := counters{mallocs: mallocs(), cpu: processCPU()}
	for _, h := range hooks {
		c.rt += h.n.Load()
	}
	for _, a := range admins {
		n, err := serverCommands(ctx, a)
		if err != nil {
			return c, err
		}
		c.srv += n
		t, err := serverCPU(ctx, a)
		if err != nil {
			return c, err
		}
		c.scpu += t
	}
	c.ops = ops.Load()
	c.at = time.Now()
	return c, nil
}

// hooked returns one new go-redis client per server with a round-trip hook.
func hooked(srvs []*server, perServer int) ([]*redis.Client, []*rtHook) {
	var rdbs []*redis.Client
	var hooks []*rtHook
	for _, srv := range srvs {
		for range perServer {
			rdb := srv.client()
			h := &rtHook{}
			rdb.AddHook(h)
			rdbs = append(rdbs, rdb)
			hooks = append(hooks, h)
		}
	}
	return rdbs, hooks
}

// lockLoop runs lock+unlock on distinct names in g goroutines (one owner
// each, all on client 0) for a warm-up and a measured window.
func (s *suite) lockLoop(ctx context.Context, srvs []*server, admins []*redis.Client, lib lockLib, g int, tag string) (map[string]float64, error) {
	rdbs, hooks := hooked(srvs, 1)
	defer func() {
		for _, r := range rdbs {
			r.Close()
		}
	}()
	return s.lockLoopOn(ctx, universal(rdbs), hooks, admins, lib, g, tag)
}

// lockLoopOn is lockLoop on the given clients, whose round trips hooks
// count, and on the servers of admins.
func (s *suite) lockLoopOn(ctx context.Context, rdbs []redis.UniversalClient, hooks []*rtHook, admins []*redis.Client, lib lockLib, g int, tag string) (map[string]float64, error) {
	newMutex, closeLib, err := lib.open(rdbs)
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
	for i := range g {
		m := newMutex(0, fmt.Sprintf("u:%s:%d", tag, i))
		wg.Go(func() {
			for runCtx.Err() == nil {
				err := m.lock(runCtx)
				if err == nil {
					err = m.unlock(context.WithoutCancel(runCtx))
				}
				if err != nil {
					if runCtx.Err() == nil {
						errOnce.Do(func() { firstErr = err; cancel() })
					}
					return
				}
				ops.Add(1)
			}
		})
	}
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
		"ccpu":   float64(after.cpu-before.cpu) / float64(time.Microsecond) / n,
	}, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func throughputTable(title, note string) *table {
	return &table{title: title, note: note, primary: "ops", higher: true, ratios: true, cols: []col{
		{key: "ops", head: "lock+unlock/s (min-max)", format: "%.0f", spread: true},
		{key: "rt", head: "round trips/op", format: "%.2f"},
		{key: "srv", head: "Redis cmds/op", format: "%.2f"},
		{key: "scpu", head: "Redis CPU µs/op", format: "%.0f"},
		{key: "ccpu", head: "client CPU µs/op", format: "%.0f"},
		{key: "allocs", head: "allocs/op", format: "%.0f"},
	}}
}

// runRounds runs every lib of every table once per round, interleaved,
// rotating the starting lib each round.
func (s *suite) runRounds(ctx context.Context, tables []*table, libs []lockLib, run func(t int, lib lockLib, tag string) (map[string]float64, error)) {
	for r := range s.rounds {
		for t := range tables {
			for i := range libs {
				k := (i + r) % len(libs)
				if ctx.Err() != nil {
					return
				}
				m, err := run(t, libs[k], fmt.Sprintf("%d:%d:%d", t, k, r))
				tables[t].rows[k].add(m, err)
				fmt.Fprintf(os.Stderr, ".")
			}
		}
	}
	fmt.Fprintln(os.Stderr)
}

const uncontendedNote = "Each goroutine is one owner locking and unlocking its own name on one go-redis client (default pool). " +
	"Round trips are counted by a go-redis hook; Redis commands by INFO commandstats (commands inside scripts included); " +
	"Redis CPU from INFO cpu (includes serving the INFO reads, negligible); client CPU: this process's getrusage delta (the suite's own goroutines idle meanwhile); allocs from runtime.MemStats over the whole process. The floor makes the same two round trips with a trivial script " +
	"(`return 1`) or PING. No retry settings apply: the lock is always free."

func runUncontended(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	libs := []lockLib{
		floorLib("2 × EVALSHA `return 1`", false, false, false),
		floorLib("2 × PING", true, false, false),
		oursLock(false),
		oursLockWith(false, "DisableAutoPipeline", &redisson.Options{DisableAutoPipeline: true}),
		oursLock(true),
		redislockLib("defaults", 0),
		redsyncLib("defaults", 0, false),
		rueidislockLib(),
	}
	gs := s.goroutines
	var tables []*table
	for _, g := range gs {
		t := throughputTable(fmt.Sprintf("Uncontended lock+unlock, %d goroutine(s)", g), "")
		if g == 1 {
			t.note = uncontendedNote
		}
		for _, l := range libs {
			t.row(l.name, l.settings, l.kind)
		}
		tables = append(tables, t)
	}
	s.runRounds(ctx, tables, libs, func(t int, lib lockLib, tag string) (map[string]float64, error) {
		return s.lockLoop(ctx, srvs, admins, lib, gs[t], tag)
	})
	for _, t := range tables {
		s.emit(t)
	}
	return nil
}

func runRedlock(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(5)
	if err != nil {
		return err
	}
	defer stop()
	libs := []lockLib{
		floorLib("2 × parallel EVALSHA on all 5", false, true, true),
		floorLib("2 × sequential EVALSHA on all 5", false, true, false),
		oursRedLockLib(),
		redsyncLib("defaults, 5 pools", 0, true),
	}
	t := throughputTable("Redlock over 5 independent servers, 1 goroutine",
		"Lock+unlock of one Redlock over 5 redis-servers. The first floor fans out to the 5 servers in parallel "+
			"(what redsync does), the second visits them one after the other (what our RedLock does).")
	for _, l := range libs {
		t.row(l.name, l.settings, l.kind)
	}
	s.runRounds(ctx, []*table{t}, libs, func(_ int, lib lockLib, tag string) (map[string]float64, error) {
		return s.lockLoop(ctx, srvs, admins, lib, 1, tag)
	})
	s.emit(t)
	return nil
}

// universal returns rdbs as the clients a lockLib opens on.
func universal(rdbs []*redis.Client) []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(rdbs))
	for i, r := range rdbs {
		out[i] = r
	}
	return out
}

// addrsOf returns the addresses rdb was made with: a node's, or a
// cluster's seeds.
func addrsOf(rdb redis.UniversalClient) []string {
	switch r := rdb.(type) {
	case *redis.Client:
		return []string{r.Options().Addr}
	case *redis.ClusterClient:
		return r.Options().Addrs
	}
	return nil
}
