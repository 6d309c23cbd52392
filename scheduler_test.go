package redisson

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

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
// once, in order, with rising tokens.
func TestSchedulerFiresEachInstantOnce(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := schedulerName(t, rdb, "tick")
	log := &runLog{}
	for i := range 3 {
		s := newClient(t, rdb, nil).GetScheduler(name)
		if err := s.Handle("tick", log.handler(strconv.Itoa(i), 0)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := s.Add(ctx, JobSpec{Name: "tick", Every: 40 * time.Millisecond}); err != nil {
				t.Fatal(err)
			}
		}
		runScheduler(t, ctx, s)
	}
	schedWaitFor(t, 20*time.Second, "25 runs", func() bool { return len(log.snapshot()) >= 25 })
	runs := log.snapshot()
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
