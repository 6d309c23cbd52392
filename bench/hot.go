package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	hotHold    = 20 * time.Millisecond
	hotClients = 4
)

// acquisition is one successful lock by one goroutine.
type acquisition struct {
	start, acq time.Duration // since the run's base: first try, lock returned
	handoff    time.Duration // from the previous holder's unlock call; -1 if this owner did not wait for it
	again      bool          // the previous holder acquired again
}

// hotRun: g goroutines over hotClients clients contend for one name, each
// holding it for hotHold. The previous holder records the time just before
// calling unlock; the next holder, the time its lock call returned.
func (s *suite) hotRun(ctx context.Context, srvs []*server, admins []*redis.Client, lib lockLib, g int, tag string) (map[string]float64, error) {
	rdbs, hooks := hooked(srvs, hotClients)
	defer func() {
		for _, r := range rdbs {
			r.Close()
		}
	}()
	newMutex, closeLib, err := lib.open(universal(rdbs))
	if err != nil {
		return nil, err
	}
	defer closeLib()

	warm := s.warmup
	if !s.short {
		warm = max(warm, time.Duration(g)*hotHold) // let the queue form before measuring
	}
	window := 2 * s.duration
	if g > 8 {
		window = 4 * s.duration
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := time.Now()
	var lastUnlock, lastHolder atomic.Int64
	lastHolder.Store(-1)
	var giveUps atomic.Int64
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) { errOnce.Do(func() { firstErr = err; cancel() }) }
	recs := make([][]acquisition, g)
	var wg sync.WaitGroup
	name := "hot:" + tag
	for i := range g {
		m := newMutex(i%hotClients, name)
		wg.Go(func() {
			for runCtx.Err() == nil {
				start := time.Since(base)
				var err error
				for {
					if err = m.lock(runCtx); !errors.Is(err, errGaveUp) {
						break
					}
					giveUps.Add(1)
				}
				if err != nil {
					if runCtx.Err() == nil {
						fail(err)
					}
					return
				}
				a := acquisition{start: start, acq: time.Since(base), handoff: -1}
				if u := time.Duration(lastUnlock.Load()); u > start {
					a.handoff = a.acq - u
				}
				a.again = lastHolder.Swap(int64(i)) == int64(i)
				recs[i] = append(recs[i], a)
				time.Sleep(hotHold)
				lastUnlock.Store(int64(time.Since(base)))
				if err := m.unlock(context.WithoutCancel(runCtx)); err != nil {
					fail(fmt.Errorf("unlock: %w", err))
					return
				}
			}
		})
	}
	var ops atomic.Int64
	sleep(runCtx, warm)
	before, err1 := read(ctx, &ops, hooks, admins)
	sleep(runCtx, window)
	after, err2 := read(ctx, &ops, hooks, admins)
	cancel()
	wg.Wait()
	if err := errors.Join(firstErr, err1, err2, ctx.Err()); err != nil {
		return nil, err
	}
	from, to := before.at.Sub(base), after.at.Sub(base)
	var waits, handoffs []time.Duration
	var again int
	counts := make([]int, g)
	for i, rs := range recs {
		for _, a := range rs {
			if a.acq < from || a.acq >= to {
				continue
			}
			counts[i]++
			waits = append(waits, a.acq-a.start)
			if a.handoff >= 0 {
				handoffs = append(handoffs, a.handoff)
			}
			if a.again {
				again++
			}
		}
	}
	n := float64(len(waits))
	if n == 0 {
		// A measurement, not a failure: the library handed the lock to
		// nobody during the window (seen with 1ms polling on a loaded
		// machine). Only throughput is defined.
		return map[string]float64{"acq": 0, "giveups": float64(giveUps.Load())}, nil
	}
	slices.Sort(waits)
	slices.Sort(handoffs)
	lo, hi := slices.Min(counts), slices.Max(counts)
	fair := float64(hi) / float64(max(lo, 1))
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return map[string]float64{
		"acq":     n / (to - from).Seconds(),
		"wait50":  ms(percentile(waits, 0.50)),
		"wait99":  ms(percentile(waits, 0.99)),
		"hand50":  ms(percentile(handoffs, 0.50)),
		"hand99":  ms(percentile(handoffs, 0.99)),
		"rt":      float64(after.rt-before.rt) / n,
		"srv":     float64(after.srv-before.srv) / n,
		"fair":    fair,
		"starved": float64(countZero(counts)),
		"again":   100 * float64(again) / n,
		"giveups": float64(giveUps.Load()),
		"ideal":   float64(g-1) * ms(hotHold),
	}, nil
}

func countZero(xs []int) int {
	n := 0
	for _, x := range xs {
		if x == 0 {
			n++
		}
	}
	return n
}

func runHot(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	libs := []lockLib{
		handoffFloorLib(),
		oursLock(false),
		oursLock(true),
		redislockLib("README retry: linear 100ms", 100*time.Millisecond),
		redislockLib("best: linear 1ms", time.Millisecond),
		redsyncLib("defaults (32 tries, 50-250ms)", 0, false),
		redsyncLib("best: delay 1ms, unlimited tries", time.Millisecond, false),
		rueidislockLib(),
	}
	gs := []int{8, 64}
	var hots, hands []*table
	for _, g := range gs {
		t := &table{
			title: fmt.Sprintf("One hot lock, %d goroutines on %d clients, %v holds", g, hotClients, hotHold),
			note: fmt.Sprintf("Ideal FIFO wait: %d × %v = %v; at most %.0f acquisitions/s. "+
				"Wait: from the first try to holding (across the library's own give-ups, which are retried at once). "+
				"Fairness: max/min acquisitions per goroutine in the window (starved: goroutines with none). "+
				"Round trips by go-redis hooks (pub/sub connections not included); Redis cmds by INFO commandstats, "+
				"subscribe and commands inside scripts included.",
				g-1, hotHold, time.Duration(g-1)*hotHold, float64(time.Second/hotHold)),
			primary: "wait99",
			cols: []col{
				{key: "acq", head: "acq/s (min-max)", format: "%.1f", spread: true},
				{key: "wait50", head: "wait p50 ms", format: "%.0f"},
				{key: "wait99", head: "wait p99 ms (min-max)", format: "%.0f", spread: true},
				{key: "rt", head: "round trips/acq", format: "%.1f"},
				{key: "srv", head: "Redis cmds/acq", format: "%.1f"},
				{key: "fair", head: "max/min per goroutine", format: "%.1f"},
				{key: "starved", head: "starved", format: "%.0f"},
				{key: "again", head: "releaser re-acquired %", format: "%.0f"},
				{key: "giveups", head: "give-ups", format: "%.0f"},
			},
		}
		for _, l := range libs {
			t.row(l.name, l.settings, l.kind)
		}
		hots = append(hots, t)
	}
	s.runRounds(ctx, hots, libs, func(t int, lib lockLib, tag string) (map[string]float64, error) {
		return s.hotRun(ctx, srvs, admins, lib, gs[t], tag)
	})
	for i, t := range hots {
		s.emit(t)
		hands = append(hands, &table{
			title: fmt.Sprintf("Hand-off latency, %d goroutines on %d clients (same runs)", gs[i], hotClients),
			note: "From the holder's call to unlock to the lock call of the next holder returning, same process, " +
				"for holders that were waiting when the unlock began. The floor is the least a pub/sub lock can do: " +
				"the unlock's script (DEL, pop the next queued waiter, PUBLISH its id), the message, and one SET NX PX by that waiter alone " +
				"(no token, re-entry, resend safety or lease-loss report; see handofffloor.go).",
			primary: "hand50", higher: false, ratios: true,
			cols: []col{
				{key: "hand50", head: "hand-off p50 ms (min-max)", format: "%.2f", spread: true},
				{key: "hand99", head: "hand-off p99 ms (min-max)", format: "%.1f", spread: true},
				{key: "rt", head: "round trips/acq", format: "%.1f"},
			},
			rows: t.rows,
		})
	}
	for _, t := range hands {
		s.printf("%s", t.markdown())
	}
	return nil
}
