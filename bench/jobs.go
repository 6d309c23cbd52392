package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// The jobs scenario: enqueue and process no-op jobs with a job queue that
// keeps a job until a worker acknowledges it, ours (ReliableQueue) beside
// hibiken/asynq, the Redis job queue Go services pick. Workers run in
// processes of their own (this binary, re-run with -jobs-worker), so the
// producers' process measures only the producing; each worker process
// prints its running count of finished jobs, and a run ends when the sum
// reaches the jobs enqueued.

const (
	jobConcurrency = 16
	jobPayload     = 64 // bytes of each job's payload
)

// jobLib is one job queue of the scenario.
type jobLib struct {
	name, settings string
	kind           kind
	// producer returns an enqueue function for one producer goroutine and
	// a function closing what it opened.
	producer func(rdb *redis.Client, queue string) (func(ctx context.Context, payload []byte) error, func(), error)
	// work runs a worker until ctx ends, calling done after each job.
	work func(ctx context.Context, addr, queue string, done func()) error
}

var jobLibs = []jobLib{
	{
		name: "redisson ReliableQueue", settings: fmt.Sprintf("Process(Concurrency %d), defaults", jobConcurrency), kind: kindOurs,
		producer: func(rdb *redis.Client, queue string) (func(context.Context, []byte) error, func(), error) {
			c, err := redisson.New(rdb, nil)
			if err != nil {
				return nil, nil, err
			}
			q := redisson.GetReliableQueue[[]byte](c, queue)
			return func(ctx context.Context, p []byte) error {
				_, _, err := q.Enqueue(ctx, p)
				return err
			}, func() { c.Close() }, nil
		},
		work: func(ctx context.Context, addr, queue string, done func()) error {
			rdb := redis.NewClient(&redis.Options{Addr: addr})
			defer rdb.Close()
			c, err := redisson.New(rdb, nil)
			if err != nil {
				return err
			}
			defer c.Close()
			q := redisson.GetReliableQueue[[]byte](c, queue)
			err = q.Process(ctx, func(context.Context, *redisson.Job[[]byte]) error {
				done()
				return nil
			}, redisson.WorkerOptions{Concurrency: jobConcurrency})
			if ctx.Err() != nil {
				return nil
			}
			return err
		},
	},
	{
		name: "hibiken/asynq", settings: fmt.Sprintf("Server(Concurrency %d), defaults", jobConcurrency), kind: kindPeer,
		producer: func(rdb *redis.Client, queue string) (func(context.Context, []byte) error, func(), error) {
			c := asynq.NewClientFromRedisClient(rdb)
			return func(ctx context.Context, p []byte) error {
				_, err := c.EnqueueContext(ctx, asynq.NewTask("noop", p), asynq.Queue(queue))
				return err
			}, func() {}, nil // closing it would close rdb, which the run owns
		},
		work: func(ctx context.Context, addr, queue string, done func()) error {
			srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr}, asynq.Config{
				Concurrency: jobConcurrency, Queues: map[string]int{queue: 1}, LogLevel: asynq.ErrorLevel,
			})
			mux := asynq.NewServeMux()
			mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
				done()
				return nil
			})
			if err := srv.Start(mux); err != nil {
				return err
			}
			<-ctx.Done()
			srv.Shutdown()
			return nil
		},
	},
}

// runJobs is the scenario: one table per producer count and worker
// process count.
func runJobs(ctx context.Context, s *suite) error {
	jobs, shapes := 20000, [][2]int{{1, 1}, {1, 4}, {32, 1}, {32, 4}}
	if s.short {
		jobs, shapes = 1000, [][2]int{{1, 1}}
	}
	if s.jobsShapes != "" {
		shapes = nil
		for _, f := range strings.Split(s.jobsShapes, ",") {
			var np, nw int
			if _, err := fmt.Sscanf(strings.TrimSpace(f), "%dx%d", &np, &nw); err != nil || np < 1 || nw < 1 {
				return fmt.Errorf("bad -jobs-shapes %q (want e.g. 1x4,32x1)", s.jobsShapes)
			}
			shapes = append(shapes, [2]int{np, nw})
		}
	}
	for _, sh := range shapes {
		np, nw := sh[0], sh[1]
		{
			t := &table{
				title: fmt.Sprintf("%d no-op jobs, %d producer goroutine(s), %d worker process(es) of concurrency %d", jobs, np, nw, jobConcurrency),
				note: "From the first enqueue until the workers (separate processes) have finished every job. Redis " +
					"commands per job by INFO commandstats (commands inside scripts included, the workers' idle polling " +
					"too); Redis CPU from INFO cpu. Producer CPU: the producers' process's getrusage delta; worker CPU: the sum of the " +
					"worker processes' own getrusage deltas over the run (each reports it with its count), both per job.",
				primary: "rate", higher: true, ratios: true,
				cols: []col{
					{key: "rate", head: "jobs/s (min-max)", format: "%.0f", spread: true},
					{key: "cmds", head: "Redis cmds/job", format: "%.1f"},
					{key: "cpu", head: "Redis CPU µs/job", format: "%.1f"},
					{key: "pcpu", head: "producer CPU µs/job", format: "%.1f"},
					{key: "wcpu", head: "worker CPU µs/job", format: "%.1f"},
				},
			}
			rows := make([]*row, len(jobLibs))
			for i, l := range jobLibs {
				rows[i] = t.row(l.name, l.settings, l.kind)
			}
			for range s.rounds {
				for i, l := range jobLibs {
					m, err := jobRun(ctx, l, jobs, np, nw)
					rows[i].add(m, err)
					if ctx.Err() != nil {
						return ctx.Err()
					}
				}
			}
			s.emit(t)
		}
	}
	return nil
}

// jobRun is one measured run on a fresh server.
func jobRun(ctx context.Context, l jobLib, jobs, producers, workers int) (map[string]float64, error) {
	srv, err := startServer()
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rdb := srv.client()
	defer rdb.Close()
	const queue = "bench-jobs"
	var finished, workerCPU atomic.Int64
	wctx, stopWorkers := context.WithCancel(ctx)
	var procs sync.WaitGroup
	defer func() {
		stopWorkers()
		procs.Wait()
	}()
	perr := make(chan error, workers)
	for range workers {
		if err := startJobWorker(wctx, l.name, srv.addr, queue, &finished, &workerCPU, &procs, perr); err != nil {
			return nil, err
		}
	}
	time.Sleep(300 * time.Millisecond) // the workers connect and start polling
	cmds0, err := serverCommands(ctx, rdb)
	if err != nil {
		return nil, err
	}
	cpu0, err := serverCPU(ctx, rdb)
	if err != nil {
		return nil, err
	}
	payload := make([]byte, jobPayload)
	wcpu0, pcpu0 := workerCPU.Load(), processCPU()
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, producers)
	for p := range producers {
		enqueue, closeFn, err := l.producer(rdb, queue)
		if err != nil {
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer closeFn()
			for i := p; i < jobs; i += producers {
				if err := enqueue(ctx, payload); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return nil, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for finished.Load() < int64(jobs) {
		select {
		case err := <-perr:
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d of %d jobs finished after 2 minutes", finished.Load(), jobs)
		}
	}
	elapsed := time.Since(start)
	pcpu := processCPU() - pcpu0
	time.Sleep(20 * time.Millisecond) // the workers' last reports (they print at most every millisecond)
	wcpu := time.Duration(workerCPU.Load() - wcpu0)
	cmds1, err := serverCommands(ctx, rdb)
	if err != nil {
		return nil, err
	}
	cpu1, err := serverCPU(ctx, rdb)
	if err != nil {
		return nil, err
	}
	n := float64(jobs)
	return map[string]float64{
		"rate": n / elapsed.Seconds(),
		"cmds": float64(cmds1-cmds0) / n,
		"cpu":  float64((cpu1 - cpu0).Microseconds()) / n,
		"pcpu": float64(pcpu.Microseconds()) / n,
		"wcpu": float64(wcpu.Microseconds()) / n,
	}, nil
}

// startJobWorker starts one worker process and returns once it is ready;
// its running count of finished jobs adds to finished, its CPU time (ns)
// to cpu.
func startJobWorker(ctx context.Context, lib, addr, queue string, finished, cpu *atomic.Int64, procs *sync.WaitGroup, perr chan<- error) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, self, "-jobs-worker", lib, "-jobs-addr", addr, "-jobs-queue", queue)
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("job worker %s did not start", lib)
	}
	procs.Add(1)
	go func() {
		defer procs.Done()
		var last, lastCPU int64
		for lines.Scan() {
			f := strings.Fields(lines.Text())
			if len(f) != 2 {
				continue
			}
			n, err1 := strconv.ParseInt(f[0], 10, 64)
			c, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				cpu.Add(c - lastCPU)
				lastCPU = c
				finished.Add(n - last)
				last = n
			}
		}
		if err := cmd.Wait(); err != nil && ctx.Err() == nil {
			perr <- fmt.Errorf("job worker %s: %w", lib, err)
		}
	}()
	return nil
}

// jobWorkerMain is the worker process (-jobs-worker): it prints "ready",
// then its count of finished jobs and its CPU time in nanoseconds whenever
// the count changed (every millisecond at most) or 50 ms passed, until
// SIGINT. With BENCH_JOBS_CPUPROFILE set to a directory it writes a CPU
// profile there, worker-<lib>-<pid>.pprof.
func jobWorkerMain(ctx context.Context, lib, addr, queue string) int {
	var l *jobLib
	for i := range jobLibs {
		if jobLibs[i].name == lib {
			l = &jobLibs[i]
		}
	}
	if l == nil {
		fmt.Fprintf(os.Stderr, "bench: -jobs-worker: unknown library %q\n", lib)
		return 2
	}
	if dir := os.Getenv("BENCH_JOBS_CPUPROFILE"); dir != "" {
		name := strings.NewReplacer("/", "-", " ", "-").Replace(lib)
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("worker-%s-%d.pprof", name, os.Getpid())))
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: job worker: cpu profile:", err)
			return 1
		}
		defer f.Close()
		defer pprof.StopCPUProfile()
	}
	var done atomic.Int64
	out := bufio.NewWriter(os.Stdout)
	fmt.Fprintln(out, "ready")
	out.Flush()
	stop := make(chan struct{})
	var printer sync.WaitGroup
	printer.Add(1)
	go func() {
		defer printer.Done()
		var last int64 = -1
		lastAt := time.Now()
		for {
			if n := done.Load(); n != last || time.Since(lastAt) >= 50*time.Millisecond {
				fmt.Fprintln(out, n, processCPU().Nanoseconds())
				if out.Flush() != nil {
					return
				}
				last, lastAt = n, time.Now()
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	err := l.work(ctx, addr, queue, func() { done.Add(1) })
	close(stop)
	printer.Wait()
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "bench: job worker:", strings.TrimSpace(err.Error()))
		return 1
	}
	return 0
}
