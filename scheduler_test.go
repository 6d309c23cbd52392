package redisson

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// schedulerName returns a unique scheduler name whose keys are deleted
// when the test ends (a job's runs key: with schedulerJobKeys).
func schedulerName(t *testing.T, rdb redis.UniversalClient, jobs ...string) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() {
		keys := []string{prefixName("redisson_scheduler", name), prefixName("redisson_scheduler_state", name),
			prefixName("redisson_scheduler_token", name)}
		for _, j := range jobs {
			keys = append(keys, prefixName("redisson_scheduler_run", name)+":"+j)
		}
		rdb.Del(context.Background(), keys...)
	})
	return name
}

// runLog collects the runs handlers saw.
type runLog struct {
	mu   sync.Mutex
	runs []JobRun
	by   []string
}

func (l *runLog) handler(id string, hold time.Duration) JobHandler {
	return func(ctx context.Context, r JobRun) error {
		l.mu.Lock()
		l.runs = append(l.runs, r)
		l.by = append(l.by, id)
		l.mu.Unlock()
		if hold > 0 {
			select {
			case <-time.After(hold):
			case <-ctx.Done():
			}
		}
		return nil
	}
}

func (l *runLog) snapshot() []JobRun {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.runs)
}

// runScheduler runs s until the test ends (or stop is called); stop waits
// for Run to return and reports its error.
func runScheduler(t *testing.T, ctx context.Context, s *Scheduler) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// schedWaitFor polls cond every 10 ms for up to d.
func schedWaitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Three instances (clients) running one interval job fire each instant
// once, tokens rising with the instants. (Catch-up and overlap are
// allowed, so that a busy machine skips nothing.)
func TestSchedulerFiresEachInstantOnce(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "tick")
	log := &runLog{}
	var stops []func() error
	for i := range 3 {
		s := newClient(t, rdb, nil).GetScheduler(name)
		if err := s.Handle("tick", log.handler(strconv.Itoa(i), 0)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := s.Add(ctx, JobSpec{Name: "tick", Every: 40 * time.Millisecond, CatchUp: CatchUpAll, AllowOverlap: true}); err != nil {
				t.Fatal(err)
			}
		}
		stops = append(stops, runScheduler(t, ctx, s))
	}
	schedWaitFor(t, 20*time.Second, "25 runs", func() bool { return len(log.snapshot()) >= 25 })
	for _, stop := range stops { // Run returns once its runs have returned
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
	runs := log.snapshot()
	// Handlers run in goroutines of their own: they may log out of order.
	slices.SortFunc(runs, func(a, b JobRun) int { return a.Instant.Compare(b.Instant) })
	for i, r := range runs {
		if r.Instant.UnixMilli()%40 != 0 {
			t.Errorf("run %d: instant %v is not a multiple of 40ms", i, r.Instant)
		}
		if r.Fired.Before(r.Instant) {
			t.Errorf("run %d fired at %v, before its instant %v", i, r.Fired, r.Instant)
		}
		if i == 0 {
			continue
		}
		if got, want := r.Instant.Sub(runs[i-1].Instant), 40*time.Millisecond; got != want {
			t.Errorf("run %d: instant %v after the previous %v, want one interval (%v)", i, r.Instant, runs[i-1].Instant, want)
		}
		if r.Token <= runs[i-1].Token {
			t.Errorf("run %d: token %d after %d, want higher", i, r.Token, runs[i-1].Token)
		}
	}
}

// A job that does not allow overlap skips the instants that come while a
// run holds its lease; one that does, runs them.
func TestSchedulerOverlap(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprint("allow=", allow), func(t *testing.T) {
			name := schedulerName(t, rdb, "slow")
			s := newClient(t, rdb, nil).GetScheduler(name)
			log := &runLog{}
			var mu sync.Mutex
			running, most := 0, 0
			s.Handle("slow", func(ctx context.Context, r JobRun) error {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				err := log.handler("a", 250*time.Millisecond)(ctx, r)
				mu.Lock()
				running--
				mu.Unlock()
				return err
			})
			if err := s.Add(ctx, JobSpec{Name: "slow", Every: 50 * time.Millisecond, AllowOverlap: allow}); err != nil {
				t.Fatal(err)
			}
			stop := runScheduler(t, ctx, s)
			schedWaitFor(t, 20*time.Second, "4 runs", func() bool { return len(log.snapshot()) >= 4 })
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			skipped, _ := rdb.HGet(ctx, s.state, "slow\nskipped").Int()
			if allow {
				if most < 2 {
					t.Errorf("at most %d runs at once, want overlapping runs", most)
				}
				return
			}
			if most != 1 {
				t.Errorf("%d runs at once, want 1", most)
			}
			if skipped < 3 {
				t.Errorf("%d instants skipped, want the ones during each run (at least 3)", skipped)
			}
		})
	}
}

// Bad specs and job names are refused with ErrInvalidSchedule before
// anything is sent; a bad scheduler name, a cancelled context and a
// closed client get their own errors; Redis is left as it was.
func TestSchedulerBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "j")
	c := newClient(t, rdb, nil)
	s := c.GetScheduler(name)
	for _, spec := range []JobSpec{
		{Every: time.Second},
		{Name: "a\nb", Every: time.Second},
		{Name: "j"},
		{Name: "j", Every: time.Second, Cron: "* * * * *"},
		{Name: "j", Every: time.Microsecond},
		{Name: "j", Every: 1500 * time.Microsecond},
		{Name: "j", Every: -time.Second},
		{Name: "j", Cron: "61 * * * *"},
		{Name: "j", Cron: "not cron"},
		{Name: "j", Cron: "* * * * *\n"},
		{Name: "j", Every: time.Second, CatchUp: 7},
		{Name: "j", Every: time.Second, MaxCatchUp: -1},
	} {
		if err := s.Add(ctx, spec); !errors.Is(err, ErrInvalidSchedule) {
			t.Errorf("Add(%+v) = %v; want ErrInvalidSchedule", spec, err)
		}
	}
	if err := s.Handle("", func(context.Context, JobRun) error { return nil }); !errors.Is(err, ErrInvalidSchedule) {
		t.Errorf("Handle(\"\") = %v; want ErrInvalidSchedule", err)
	}
	if _, err := s.Remove(ctx, ""); !errors.Is(err, ErrInvalidSchedule) {
		t.Errorf("Remove(\"\") = %v; want ErrInvalidSchedule", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Add(cancelled, JobSpec{Name: "j", Every: time.Second}); !errors.Is(err, context.Canceled) {
		t.Errorf("Add with a cancelled context = %v; want context.Canceled", err)
	}
	if n, _ := rdb.Exists(ctx, s.defs, s.state, s.tokens).Result(); n != 0 {
		t.Errorf("%d keys of the scheduler exist after refused calls; want none", n)
	}
	empty := c.GetScheduler("")
	if err := empty.Add(ctx, JobSpec{Name: "j", Every: time.Second}); !errors.Is(err, ErrEmptyName) {
		t.Errorf("Add on an empty name = %v; want ErrEmptyName", err)
	}
	if err := empty.Run(ctx); !errors.Is(err, ErrEmptyName) {
		t.Errorf("Run on an empty name = %v; want ErrEmptyName", err)
	}
	rdb.Set(ctx, s.defs, "x", 0)
	if err := s.Add(ctx, JobSpec{Name: "j", Every: time.Second}); !errors.Is(err, ErrWrongType) {
		t.Errorf("Add over a string key = %v; want ErrWrongType", err)
	}
	rdb.Del(ctx, s.defs)
	c.Close()
	if err := s.Run(ctx); !errors.Is(err, ErrClientClosed) {
		t.Errorf("Run after Close = %v; want ErrClientClosed", err)
	}
}

// The instants a schedule gives, and what the catch-up policies fire after
// an outage.
func TestScheduleInstants(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cr, err := JobSpec{Name: "c", Cron: "*/15 * * * *"}.compile()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cr.next(at("2026-01-01T10:07:00Z")), at("2026-01-01T10:15:00Z"); !got.Equal(want) {
		t.Errorf("cron next = %v; want %v", got, want)
	}
	tz, err := JobSpec{Name: "c", Cron: "CRON_TZ=Europe/Paris 0 9 * * *"}.compile()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tz.next(at("2026-01-01T00:00:00Z")), at("2026-01-01T08:00:00Z"); !got.Equal(want) {
		t.Errorf("Paris 09:00 = %v; want %v", got, want)
	}
	ev, _ := JobSpec{Name: "e", Every: time.Second}.compile()
	if got, want := ev.next(at("2026-01-01T10:00:00.5Z")), at("2026-01-01T10:00:01Z"); !got.Equal(want) {
		t.Errorf("every next = %v; want %v", got, want)
	}
	// 10 s of outage after 10:00:00: instants 10:00:01 .. 10:00:10 are due.
	last, now := at("2026-01-01T10:00:00Z"), at("2026-01-01T10:00:10.2Z")
	for _, c := range []struct {
		spec    JobSpec
		instant string
		skipped int
	}{
		{JobSpec{Name: "e", Every: time.Second}, "2026-01-01T10:00:10Z", 9},
		{JobSpec{Name: "e", Every: time.Second, CatchUp: CatchUpAll}, "2026-01-01T10:00:01Z", 0},
		{JobSpec{Name: "e", Every: time.Second, CatchUp: CatchUpAll, MaxCatchUp: 3}, "2026-01-01T10:00:08Z", 7},
		{JobSpec{Name: "c", Cron: "@every 1s"}, "2026-01-01T10:00:10Z", 9},
		{JobSpec{Name: "c", Cron: "@every 1s", CatchUp: CatchUpAll, MaxCatchUp: 3}, "2026-01-01T10:00:08Z", 7},
	} {
		sc, err := c.spec.compile()
		if err != nil {
			t.Fatal(err)
		}
		in, skipped, ok := sc.due(last, now)
		if !ok || !in.Equal(at(c.instant)) || skipped != c.skipped {
			t.Errorf("%+v: due = %v, %d skipped, %v; want %s, %d", c.spec, in, skipped, ok, c.instant, c.skipped)
		}
	}
}

// After a full outage (no instance ran for a while) CatchUpSkip fires only
// the latest missed instant, counting the others as skipped; CatchUpAll
// fires each, in order.
func TestSchedulerCatchUp(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	for _, policy := range []CatchUpPolicy{CatchUpSkip, CatchUpAll} {
		t.Run(fmt.Sprint("policy=", policy), func(t *testing.T) {
			name := schedulerName(t, rdb, "j")
			s := newClient(t, rdb, nil).GetScheduler(name)
			log := &runLog{}
			s.Handle("j", log.handler("a", 0))
			const every = 100 * time.Millisecond
			if err := s.Add(ctx, JobSpec{Name: "j", Every: every, CatchUp: policy}); err != nil {
				t.Fatal(err)
			}
			// The job last fired 2 s ago, on the server's clock.
			tm, _ := rdb.Time(ctx).Result()
			lastMs := (tm.UnixMilli()/100 - 20) * 100
			rdb.HSet(ctx, s.state, "j", lastMs)
			stop := runScheduler(t, ctx, s)
			schedWaitFor(t, 20*time.Second, "runs", func() bool { return len(log.snapshot()) >= 22 })
			stop()
			runs := log.snapshot()
			switch policy {
			case CatchUpSkip:
				if runs[0].Skipped < 18 || runs[0].Instant.UnixMilli() <= lastMs+1800 {
					t.Errorf("first run: instant %v, %d skipped; want the latest due, about 19 skipped", runs[0].Instant, runs[0].Skipped)
				}
			case CatchUpAll:
				for i, r := range runs {
					if want := lastMs + int64(i+1)*100; r.Instant.UnixMilli() != want || r.Skipped != 0 {
						t.Fatalf("run %d: instant %d, %d skipped; want %d, none", i, r.Instant.UnixMilli(), r.Skipped, want)
					}
				}
			}
		})
	}
}

// Jobs are added and removed while instances run, and the schedule
// survives a restart: a new instance continues after the last fired
// instant, firing none twice.
func TestSchedulerRuntimeChangesAndRestart(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "a", "b")
	log := &runLog{}
	s := newClient(t, rdb, nil).GetScheduler(name)
	s.Handle("a", log.handler("a", 0))
	s.Handle("b", log.handler("b", 0))
	stop := runScheduler(t, ctx, s)
	// Added after Run started: picked up by the channel's message.
	admin := newClient(t, rdb, nil).GetScheduler(name)
	if err := admin.Add(ctx, JobSpec{Name: "a", Every: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := admin.Add(ctx, JobSpec{Name: "b", Every: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	count := func(job string) int {
		n := 0
		for _, r := range log.snapshot() {
			if r.Job == job {
				n++
			}
		}
		return n
	}
	schedWaitFor(t, 10*time.Second, "runs of both", func() bool { return count("a") >= 3 && count("b") >= 3 })
	if ok, err := admin.Remove(ctx, "b"); err != nil || !ok {
		t.Fatalf("Remove(b) = %v, %v; want true", ok, err)
	}
	time.Sleep(100 * time.Millisecond) // a run fired before the removal may still report
	nb := count("b")
	time.Sleep(300 * time.Millisecond)
	if got := count("b"); got != nb {
		t.Errorf("b ran %d times after its removal; want none", got-nb)
	}
	// Restart: a new client takes over from the state in Redis.
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	s2 := newClient(t, rdb, nil).GetScheduler(name)
	s2.Handle("a", log.handler("a2", 0))
	na := count("a")
	runScheduler(t, ctx, s2)
	schedWaitFor(t, 10*time.Second, "runs after the restart", func() bool { return count("a") >= na+3 })
	seen := map[int64]bool{}
	for _, r := range log.snapshot() {
		if r.Job != "a" {
			continue
		}
		if seen[r.Instant.UnixMilli()] {
			t.Errorf("instant %v of a ran twice", r.Instant)
		}
		seen[r.Instant.UnixMilli()] = true
	}
	if ok, _ := admin.Remove(ctx, "b"); ok {
		t.Error("second Remove(b) = true; want false")
	}
}

// A run whose lease is lost (its entry deleted behind its back) has its
// context cancelled with ErrRunLeaseLost, which matches ErrLeaseLost.
func TestSchedulerRunLeaseLost(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "j")
	s := newClient(t, rdb, &Options{WatchdogTimeout: 300 * time.Millisecond}).GetScheduler(name)
	causes := make(chan error, 1)
	s.Handle("j", func(ctx context.Context, r JobRun) error {
		rdb.Del(context.Background(), s.runs("j"))
		select {
		case <-ctx.Done():
			select {
			case causes <- context.Cause(ctx):
			default:
			}
		case <-time.After(10 * time.Second):
		}
		return nil
	})
	if err := s.Add(ctx, JobSpec{Name: "j", Every: time.Hour, AllowOverlap: true}); err != nil {
		t.Fatal(err)
	}
	// Fire at once: the job last fired an hour ago.
	tm, _ := rdb.Time(ctx).Result()
	rdb.HSet(ctx, s.state, "j", (tm.UnixMilli()/3600000-1)*3600000)
	runScheduler(t, ctx, s)
	select {
	case cause := <-causes:
		if !errors.Is(cause, ErrRunLeaseLost) || !errors.Is(cause, ErrLeaseLost) {
			t.Errorf("cause %v; want ErrRunLeaseLost, matching ErrLeaseLost", cause)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the run's context was not cancelled")
	}
}

// InspectScheduler shows each job's schedule, last fired and next instant,
// and the run in progress with its holder; a scheduler without jobs is
// ErrNotFound.
func TestInspectScheduler(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "busy", "idle")
	c := newClient(t, rdb, nil)
	if _, err := c.InspectScheduler(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectScheduler of no jobs = %v; want ErrNotFound", err)
	}
	s := c.GetScheduler(name)
	started := make(chan JobRun, 1)
	release := make(chan struct{})
	s.Handle("busy", func(ctx context.Context, r JobRun) error {
		select {
		case started <- r:
		default:
		}
		<-release
		return nil
	})
	if err := s.Add(ctx, JobSpec{Name: "busy", Every: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, JobSpec{Name: "idle", Cron: "0 3 * * *", CatchUp: CatchUpAll}); err != nil {
		t.Fatal(err)
	}
	runScheduler(t, ctx, s)
	var run JobRun
	select {
	case run = <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("busy did not run")
	}
	defer close(release)
	info, err := c.InspectScheduler(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Jobs) != 2 || info.Jobs[0].Name != "busy" || info.Jobs[1].Name != "idle" {
		t.Fatalf("jobs %+v; want busy, idle", info.Jobs)
	}
	busy, idle := info.Jobs[0], info.Jobs[1]
	if busy.Schedule != "every 50ms" || busy.LastFired.Before(run.Instant) || !busy.Next.After(busy.LastFired) {
		t.Errorf("busy: %+v; want every 50ms, last fired at or after %v, next after it", busy, run.Instant)
	}
	if len(busy.Running) != 1 || busy.Running[0].Token != run.Token || busy.Running[0].Holder == "" || !busy.Running[0].LeaseEnd.After(info.Now) {
		t.Errorf("busy running %+v; want the run with token %d, a holder and a lease ending after %v", busy.Running, run.Token, info.Now)
	}
	if idle.Schedule != "0 3 * * *" && idle.Schedule != "cron 0 3 * * *" || idle.CatchUp != CatchUpAll || len(idle.Running) != 0 || idle.Next.Hour() != 3 {
		t.Errorf("idle: %+v; want cron 0 3 * * *, CatchUpAll, nothing running, next at 03:00", idle)
	}
}

// On Redis Cluster every key and the channel of a scheduler share its hash
// tag: jobs are added, fired with their lease, inspected and removed.
func TestSchedulerCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "j")
	c := newClient(t, rdb, nil)
	s := c.GetScheduler(name)
	log := &runLog{}
	s.Handle("j", log.handler("a", 0))
	stop := runScheduler(t, ctx, s)
	if err := s.Add(ctx, JobSpec{Name: "j", Every: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	schedWaitFor(t, 20*time.Second, "3 runs", func() bool { return len(log.snapshot()) >= 3 })
	if info, err := c.InspectScheduler(ctx, name); err != nil || len(info.Jobs) != 1 {
		t.Fatalf("InspectScheduler = %+v, %v; want one job", info, err)
	}
	if ok, err := s.Remove(ctx, "j"); err != nil || !ok {
		t.Fatalf("Remove = %v, %v; want true", ok, err)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}
