package redisson

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// schedWorkerEnv makes the test binary a scheduler instance (see
// runSchedWorker) instead of running tests:
// "<redis addr>|<scheduler name>|<job>|<fire log key>|<clock skew>".
const schedWorkerEnv = "REDISSON_TEST_SCHEDWORKER"

func init() {
	if spec := os.Getenv(schedWorkerEnv); spec != "" {
		os.Exit(runSchedWorker(spec, os.Stdin, os.Stdout))
	}
}

// runSchedWorker runs a Scheduler whose clock (schedNow) is skewed by the
// given duration, handling the job: each run writes the line
// "run INSTANT_MS TOKEN" to out. It ends when in closes (the test ended).
func runSchedWorker(spec string, in io.Reader, out io.Writer) int {
	f := strings.Split(spec, "|")
	skew, _ := time.ParseDuration(f[4])
	schedNow = func() time.Time { return time.Now().Add(skew) }
	rdb := redis.NewClient(&redis.Options{Addr: f[0]})
	c, err := New(rdb, &Options{WatchdogTimeout: time.Second, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	s := c.GetScheduler(f[1])
	s.fireLog = f[3]
	w := bufio.NewWriter(out)
	var mu sync.Mutex
	s.Handle(f[2], func(ctx context.Context, r JobRun) error {
		mu.Lock()
		fmt.Fprintf(w, "run %d %d\n", r.Instant.UnixMilli(), r.Token)
		w.Flush()
		mu.Unlock()
		return nil
	})
	go func() {
		_, _ = io.Copy(io.Discard, in)
		os.Exit(0) // the test ended
	}()
	if err := s.Run(context.Background()); err != nil {
		fmt.Fprintln(out, "err", err)
	}
	return 1
}

// schedRuns gathers the run lines of every instance: instant -> tokens.
type schedRuns struct {
	mu   sync.Mutex
	runs map[int64][]int64
	errs []string
}

func (g *schedRuns) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		g.mu.Lock()
		if len(f) == 3 && f[0] == "run" {
			in, _ := strconv.ParseInt(f[1], 10, 64)
			tok, _ := strconv.ParseInt(f[2], 10, 64)
			g.runs[in] = append(g.runs[in], tok)
		} else if len(f) > 0 {
			g.errs = append(g.errs, sc.Text())
		}
		g.mu.Unlock()
	}
}

// Five instances in separate processes, their clocks skewed by up to ±5 s,
// run one interval job while a random instance is killed (kill -9) and
// restarted every few hundred ms. The server's record of every decision
// (the fire script's test log) has each instant exactly once, tokens rising
// with the instants and nothing missed; every run an instance reported is
// one the server recorded, once. It reports the fire jitter on the server's
// clock (the fire's TIME minus the instant).
func TestSchedulerProcessHistory(t *testing.T) {
	instants := 1500
	if testing.Short() {
		instants = 300
	}
	testSchedulerProcesses(t, instants, 20*time.Millisecond)
}

func testSchedulerProcesses(t *testing.T, instants int, every time.Duration) {
	addr := redistest.Shared(t).Addr()
	rdb := sharedRedis(t)
	ctx := testCtx(t, 10*time.Minute+time.Duration(instants)*every*2)
	const job = "tick"
	name := schedulerName(t, rdb, job)
	fireLog := prefixName("redisson_scheduler_testlog", name)
	t.Cleanup(func() { rdb.Del(context.Background(), fireLog) })
	admin := newClient(t, rdb, nil).GetScheduler(name)
	if err := admin.Add(ctx, JobSpec{Name: job, Every: every, CatchUp: CatchUpAll, MaxCatchUp: 10000, AllowOverlap: true}); err != nil {
		t.Fatal(err)
	}
	added, err := rdb.HGet(ctx, admin.state, job).Int64()
	if err != nil {
		t.Fatal(err)
	}
	g := &schedRuns{runs: make(map[int64][]int64)}
	type instance struct {
		cmd *exec.Cmd
		in  io.WriteCloser
	}
	started := 0
	spawn := func(skew time.Duration) *instance {
		started++
		cmd, in, out := redistest.Reexec(t, fmt.Sprintf("%s=%s|%s|%s|%s|%v", schedWorkerEnv, addr, name, job, fireLog, skew))
		go g.read(out)
		return &instance{cmd: cmd, in: in}
	}
	var live []*instance
	for i := range 5 {
		live = append(live, spawn(time.Duration(i-2)*2500*time.Millisecond))
	}
	// Kill and restart until enough instants have been decided.
	kills := 0
	for {
		time.Sleep(time.Duration(150+rand.IntN(350)) * time.Millisecond)
		if n, _ := rdb.LLen(ctx, fireLog).Result(); n >= int64(instants) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the test's time ran out")
		}
		k := rand.IntN(len(live))
		live[k].cmd.Process.Kill()
		kills++
		live[k] = spawn(time.Duration(rand.IntN(10001)-5000) * time.Millisecond)
	}
	// Stop the job, then the instances, and read the server's record.
	if _, err := admin.Remove(ctx, job); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // runs in flight report
	for _, in := range live {
		in.cmd.Process.Kill()
	}
	lines, err := rdb.LRange(ctx, fireLog, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	var fires []history.Fire
	var jitter []int64
	var last int64
	for _, l := range lines {
		f := strings.Fields(l)
		n := func(i int) int64 { v, _ := strconv.ParseInt(f[i], 10, 64); return v }
		switch {
		case len(f) == 5 && f[0] == "fire":
			fires = append(fires, history.Fire{Job: f[1], Instant: n(2), Token: n(3), At: n(4)})
			jitter = append(jitter, n(4)-n(2)*1000)
			last = max(last, n(2))
		case len(f) == 4 && f[0] == "catchup":
			// The next fire line is the one it belongs to.
			fires = append(fires, history.Fire{Job: f[1], Instant: n(2), Skipped: int(n(3)), Token: -1})
		default:
			t.Errorf("unexpected log line %q", l)
		}
	}
	fires = mergeCatchUp(fires)
	step := every.Milliseconds()
	var expected []int64
	for in := (added/step + 1) * step; in <= last; in += step {
		expected = append(expected, in)
	}
	r := history.CheckFires(fires, expected)
	for _, b := range r.Bad() {
		t.Error(b)
	}
	g.mu.Lock()
	fired := make(map[int64]int64)
	for _, f := range fires {
		fired[f.Instant] = f.Token
	}
	runs, dupRuns, strayRuns := 0, 0, 0
	for in, toks := range g.runs {
		runs += len(toks)
		if len(toks) > 1 {
			dupRuns++
			t.Errorf("instant %d ran %d times (tokens %v)", in, len(toks), toks)
		}
		if fired[in] != toks[0] {
			strayRuns++
			t.Errorf("instant %d ran with token %d, the server fired it with %d", in, toks[0], fired[in])
		}
	}
	errs := len(g.errs)
	g.mu.Unlock()
	if len(expected) < instants {
		t.Errorf("%d instants expected; want at least %d", len(expected), instants)
	}
	t.Logf("SUMMARY fault=kill -9 + restart, clocks skewed up to ±5s; topology=single, 5 instance processes (%d started, %d kills); "+
		"instants=%d every %v: fired %d, caught up %d, overlap skips %d; violations=%d duplicates, %d misses, %d unexpected, %d token disorder; "+
		"runs reported %d (%d duplicate, %d not as fired; the others' instances were killed); worker errors %d; "+
		"fire jitter (server TIME - instant) p50=%dµs p99=%dµs max=%dµs",
		started, kills, len(expected), every, r.Fired, r.CaughtUp, r.Overlaps, len(r.Duplicates), len(r.Misses), len(r.Unexpected), len(r.Disorder),
		runs, dupRuns, strayRuns, errs, history.Percentile(jitter, 50), history.Percentile(jitter, 99), history.Percentile(jitter, 100))
}

// mergeCatchUp folds each catch-up line (Token -1) into the fire of the
// same instant that follows it.
func mergeCatchUp(fs []history.Fire) []history.Fire {
	var out []history.Fire
	skipped := map[int64]int{}
	for _, f := range fs {
		if f.Token == -1 {
			skipped[f.Instant] += f.Skipped
			continue
		}
		f.Skipped += skipped[f.Instant]
		delete(skipped, f.Instant)
		out = append(out, f)
	}
	return out
}
