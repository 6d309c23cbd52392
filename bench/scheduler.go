package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/goredisson/redisson"
)

// The scheduler scenario: several Scheduler instances (one client each)
// run one job that fires every few tens of milliseconds; every run records
// its instant, the server's clock when it fired (JobRun.Fired) and this
// process's clock when the handler started. Beside it, in the same process
// and the same window, the floor: a goroutine that sleeps with a
// time.Timer to each instant of the same schedule and reads the server's
// clock with one TIME call.

const schedInstances = 3

// schedFire is one run as its handler saw it.
type schedFire struct {
	instance        int
	instant, fired  time.Time
	started         time.Time
	skippedInstants int
}

func runScheduler(ctx context.Context, s *suite) error {
	every, window := 100*time.Millisecond, 10*time.Second
	if s.short {
		every, window = 50*time.Millisecond, 1500*time.Millisecond
	}
	t := &table{
		title: fmt.Sprintf("Scheduler fire lateness, one job every %v, %d instances", every, schedInstances),
		note: fmt.Sprintf("Each round: a fresh server, %d Scheduler instances (a client each, one process) run the job for %v; "+
			"instants of the first 500 ms are left out. Server lateness: JobRun.Fired − JobRun.Instant (the server's clock in the "+
			"fire script); handler lateness: the handler's start on this machine's clock − Instant. The scheduler aims 1 ms "+
			"after each instant on its estimate of the server clock. Floor: a goroutine of the same process sleeping with a "+
			"time.Timer to each instant (handler column: its wake-up) and then calling TIME (server column). Duplicates: runs of "+
			"an instant already run; misses: instants of the window never run. The job catches up every missed instant and may "+
			"overlap, so that a stall of the machine longer than the interval delays instants instead of skipping them (with the "+
			"defaults, CatchUpSkip and no overlap, such a stall skips instants by design; they would count as misses here). "+
			"Median (min-max) over rounds.",
			schedInstances, window),
		cols: []col{
			{key: "sp50", head: "server p50 ms (min-max)", format: "%.2f", spread: true},
			{key: "sp99", head: "server p99 ms (min-max)", format: "%.2f", spread: true},
			{key: "smax", head: "server max ms", format: "%.2f"},
			{key: "hp50", head: "handler p50 ms", format: "%.2f"},
			{key: "hp99", head: "handler p99 ms", format: "%.2f"},
			{key: "hmax", head: "handler max ms", format: "%.2f"},
			{key: "fires", head: "instants", format: "%.0f"},
			{key: "dups", head: "duplicates", format: "%.0f"},
			{key: "miss", head: "misses", format: "%.0f"},
			{key: "skip", head: "skipped by catch-up", format: "%.0f"},
		},
	}
	ours := t.row("redisson Scheduler", fmt.Sprintf("Every %v, CatchUpAll, AllowOverlap, %d instances", every, schedInstances), kindOurs)
	floor := t.row("floor", "time.Timer to each instant, then 1 × TIME", kindFloor)
	for range s.rounds {
		m, f, err := schedulerRound(ctx, every, window)
		if m != nil { // measured, with duplicates or misses: a failure, shown
			ours.add(m, nil)
			floor.add(f, nil)
		}
		if err != nil || m == nil {
			ours.add(nil, err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.emit(t)
	return nil
}

// schedulerRound runs one round on a fresh server: the scheduler's
// metrics and the floor's.
func schedulerRound(ctx context.Context, every, window time.Duration) (ours, floor map[string]float64, err error) {
	srv, err := startServer()
	if err != nil {
		return nil, nil, err
	}
	defer srv.stop()
	admin := srv.client()
	defer admin.Close()

	const job = "tick"
	var mu sync.Mutex
	var fires []schedFire
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var runs sync.WaitGroup
	errs := make([]error, schedInstances)
	for i := range schedInstances {
		rdb := srv.client()
		defer rdb.Close()
		c, err := redisson.New(rdb, nil)
		if err != nil {
			return nil, nil, err
		}
		defer c.Close()
		sch := c.GetScheduler("bench-sched")
		if i == 0 {
			if err := sch.Add(ctx, redisson.JobSpec{Name: job, Every: every, CatchUp: redisson.CatchUpAll, AllowOverlap: true}); err != nil {
				return nil, nil, err
			}
		}
		err = sch.Handle(job, func(_ context.Context, r redisson.JobRun) error {
			started := time.Now()
			mu.Lock()
			fires = append(fires, schedFire{instance: i, instant: r.Instant, fired: r.Fired, started: started, skippedInstants: r.Skipped})
			mu.Unlock()
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		runs.Go(func() { errs[i] = sch.Run(rctx) })
	}

	// The floor, over the same window.
	start := time.Now()
	from := start.Add(500 * time.Millisecond).Truncate(every).Add(every)
	to := start.Add(window).Truncate(every) // instants in [from, to)
	var wake, server []time.Duration
	var floorErr error
	for at := from; at.Before(to); at = at.Add(every) {
		sleep(ctx, time.Until(at))
		woke := time.Now()
		now, err := admin.Time(ctx).Result()
		if err != nil {
			floorErr = err
			break
		}
		wake = append(wake, woke.Sub(at))
		server = append(server, now.Sub(at))
	}
	sleep(ctx, 3*every) // the last instants' runs
	stop()
	runs.Wait()
	if err := errors.Join(append(errs, floorErr, ctx.Err())...); err != nil {
		return nil, nil, err
	}

	// The scheduler's runs of the window's instants.
	seen := map[int64]int{}
	skipped := 0
	var sl, hl []time.Duration
	for _, f := range fires {
		if f.instant.Before(from) || !f.instant.Before(to) {
			continue
		}
		seen[f.instant.UnixMilli()]++
		skipped += f.skippedInstants
		sl = append(sl, f.fired.Sub(f.instant))
		hl = append(hl, f.started.Sub(f.instant))
	}
	want := int(to.Sub(from) / every)
	dups := len(sl) - len(seen)
	ours = lateness(sl, hl)
	ours["fires"] = float64(len(seen))
	ours["dups"] = float64(dups)
	ours["miss"] = float64(want - len(seen))
	ours["skip"] = float64(skipped)
	floor = lateness(server, wake)
	floor["fires"] = float64(len(wake))
	floor["dups"], floor["miss"], floor["skip"] = 0, float64(want-len(wake)), 0
	if dups > 0 || want != len(seen) {
		err = fmt.Errorf("scheduler: %d instants in the window, %d run, %d duplicate runs", want, len(seen), dups)
	}
	return ours, floor, err
}

// lateness summarises the server and handler lateness of a round.
func lateness(server, handler []time.Duration) map[string]float64 {
	slices.Sort(server)
	slices.Sort(handler)
	m := map[string]float64{}
	for _, x := range []struct {
		p  string
		xs []time.Duration
	}{{"s", server}, {"h", handler}} {
		if len(x.xs) == 0 {
			continue
		}
		m[x.p+"p50"] = ms(percentile(x.xs, 0.5))
		m[x.p+"p99"] = ms(percentile(x.xs, 0.99))
		m[x.p+"max"] = ms(x.xs[len(x.xs)-1])
	}
	return m
}
