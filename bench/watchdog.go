package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// runWatchdog: one client holds n locks taken without a lease (TryLock with
// wait 0 and lease 0: the watchdog keeps them), with a short WatchdogTimeout
// so that several renewal periods (a third of it each) fit in a round. Each
// round measures the next few periods of the same holds.
func runWatchdog(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	ns := []int{1000, 10000, 100000}
	if s.short {
		ns = []int{1000}
	}
	if s.wdLeases != "" {
		ns = nil
		for _, f := range strings.Split(s.wdLeases, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("bad -watchdog-leases %q", s.wdLeases)
			}
			ns = append(ns, n)
		}
	}
	// settings returns the WatchdogTimeout and periods per round for n
	// leases: 3s (1s periods, 3 per round) up to 10,000 leases; 9s (3s
	// periods, 1 per round) above, because a renewal pass must finish
	// within one period and 100,000 leases take over 1s here.
	settings := func(n int) (time.Duration, int) {
		switch {
		case s.wdTimeout > 0:
			return s.wdTimeout, max(1, int(3*time.Second/(s.wdTimeout/3)))
		case s.short:
			return 600 * time.Millisecond, 2
		case n <= 10000:
			return 3 * time.Second, 3
		default:
			return 9 * time.Second, 1
		}
	}
	t := &table{
		title: "Watchdog renewals, one client",
		note: "Holds taken with `TryLock(ctx, 0, 0)` (lease 0: the watchdog keeps them) by 32 goroutines; one renewal period is a third " +
			"of WatchdogTimeout (in the settings column); rounds are consecutive windows over the same holds. " +
			"Longest pass: the longest renewal pipeline seen by a go-redis hook. " +
			"Client heap+stacks: in use after a GC at the end of the round (the holds included). Client CPU is this process's getrusage delta (the suite's own goroutines are idle meanwhile); Redis CPU from INFO cpu. " +
			"The peers have no watchdog: keeping n leases alive with redislock's Refresh or redsync's Extend costs n round trips per period by construction.",
		cols: []col{
			{key: "rt", head: "round trips/period (min-max)", format: "%.1f", spread: true},
			{key: "srv", head: "Redis cmds/period", format: "%.0f"},
			{key: "cpu", head: "client CPU ms/period (min-max)", format: "%.1f", spread: true},
			{key: "core", head: "client % of one core", format: "%.2f"},
			{key: "scpu", head: "Redis CPU ms/period", format: "%.1f"},
			{key: "pass", head: "longest pass ms (min-max)", format: "%.0f", spread: true},
			{key: "take", head: "time to take the holds s", format: "%.2f"},
			{key: "heap", head: "client heap+stacks MB", format: "%.0f"},
			{key: "rmem", head: "Redis used_memory MB", format: "%.0f"},
			{key: "lost", head: "holds lost", format: "%.0f"},
		},
	}
	for _, n := range ns {
		timeout, periods := settings(n)
		r := t.row("redisson Lock", fmt.Sprintf("%d leases, WatchdogTimeout %v", n, timeout), kindOurs)
		for _, res := range s.watchdogRun(ctx, srvs, admins[0], n, timeout, periods) {
			r.add(res.m, res.err)
		}
	}
	s.emit(t)
	return nil
}

type result struct {
	m   map[string]float64
	err error
}

func (s *suite) watchdogRun(ctx context.Context, srvs []*server, admin *redis.Client, n int, timeout time.Duration, periods int) []result {
	rdbs, hooks := hooked(srvs, 1)
	defer rdbs[0].Close()
	return s.watchdogOn(ctx, rdbs[0], hooks[0], []*redis.Client{admin}, n, timeout, periods)
}

// watchdogOn is watchdogRun on rdb, whose round trips h counts, and the
// servers of admins.
func (s *suite) watchdogOn(ctx context.Context, rdb redis.UniversalClient, h *rtHook, admins []*redis.Client, n int, timeout time.Duration, periods int) []result {
	fail := func(err error) []result { return []result{{err: err}} }
	hooks := []*rtHook{h}
	defer func() { // after the client's Close: a flush under a live watchdog loses its holds
		for _, a := range admins {
			a.FlushAll(context.WithoutCancel(ctx))
		}
	}()
	c, err := redisson.New(rdb, &redisson.Options{WatchdogTimeout: timeout})
	if err != nil {
		return fail(err)
	}
	defer c.Close()

	start := time.Now()
	locks := make([]*redisson.Lock, n)
	const g = 32
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, g)
	for w := range g {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				l := c.GetLock("wd:" + strconv.Itoa(n) + ":" + strconv.Itoa(i))
				ok, err := l.TryLock(ctx, 0, 0)
				if err == nil && !ok {
					err = errors.New("a free lock was not acquired")
				}
				if err != nil {
					errs[w] = err
					return
				}
				locks[i] = l
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fail(err)
	}
	take := time.Since(start).Seconds()
	period := timeout / 3
	sleep(ctx, period) // let the first renewal pass after taking them run
	var out []result
	var ops atomic.Int64
	for range s.rounds {
		hooks[0].maxPipe.Store(0)
		before, err1 := read(ctx, &ops, hooks, admins)
		sleep(ctx, time.Duration(periods)*period)
		after, err2 := read(ctx, &ops, hooks, admins)
		if err := errors.Join(err1, err2, ctx.Err()); err != nil {
			return append(out, result{err: err})
		}
		p := after.at.Sub(before.at).Seconds() / period.Seconds()
		cpu := after.cpu - before.cpu
		lost := 0
		for _, l := range locks {
			if l.Err() != nil {
				lost++
			}
		}
		heap := liveBytes() // after the round's counters: the GC's CPU is not counted
		var redisMem float64
		for _, a := range admins {
			m, err := usedMemory(ctx, a)
			if err != nil {
				return append(out, result{err: err})
			}
			redisMem += m
		}
		var err error
		if lost > 0 {
			err = fmt.Errorf("%d of %d watchdog holds lost: %w", lost, n, locks[0].Err())
		}
		out = append(out, result{err: err, m: map[string]float64{
			"rt":   float64(after.rt-before.rt) / p,
			"srv":  float64(after.srv-before.srv) / p,
			"cpu":  float64(cpu) / float64(time.Millisecond) / p,
			"core": 100 * cpu.Seconds() / after.at.Sub(before.at).Seconds(),
			"scpu": float64(after.scpu-before.scpu) / float64(time.Millisecond) / p,
			"take": take,
			"pass": float64(hooks[0].maxPipe.Load()) / float64(time.Millisecond),
			"heap": heap / (1 << 20),
			"rmem": redisMem / (1 << 20),
			"lost": float64(lost),
		}})
	}
	return out
}
