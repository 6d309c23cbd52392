package main

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"

	"github.com/goredisson/redisson"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
)

// The jobs-latency scenario: how soon a job queue runs a job, ours
// (ReliableQueue) beside hibiken/asynq. Pickup: one job at a time is
// enqueued on an idle queue (5-25 ms apart) and timed from before the
// enqueue to its handler's start, with the worker in the producer's
// process so that one clock times both ends. Redelivery: a worker process
// takes a job and hangs in its handler, is killed with SIGKILL, and the
// time from the kill until a worker in this process starts the job again
// is measured: the queue's lease, and how soon after it a live worker
// looks for expired leases.

// latLib is one job queue of the scenario, with one lease setting.
type latLib struct {
	name, settings string
	kind           kind
	lease          time.Duration // ours: WorkerOptions.Lease (and WatchdogTimeout); 0: the library's default
	cooldown       time.Duration // ours: WorkerOptions.FetchCooldown; 0: the default (10ms)
	// redeliveryRounds: 0 runs the redelivery in every round, n > 0 in the
	// first n rounds only (asynq's takes minutes), -1 never.
	redeliveryRounds int
}

var latLibs = []latLib{
	{name: "redisson ReliableQueue", settings: "defaults (lease = WatchdogTimeout, 30s)", kind: kindOurs, redeliveryRounds: 1},
	{name: "redisson ReliableQueue", settings: "FetchCooldown -1 (none)", kind: kindOurs, cooldown: -1, redeliveryRounds: -1},
	{name: "redisson ReliableQueue", settings: "Lease 2s (WatchdogTimeout 2s)", kind: kindOurs, lease: 2 * time.Second},
	{name: "hibiken/asynq", settings: "defaults (30s lease, recoverer every 1m, retry delay)", kind: kindPeer, redeliveryRounds: 1},
}

// latWorker runs a worker of l on queue until ctx ends, calling onJob at
// the start of each job's handler; the handler returns when onJob does.
func latWorker(ctx context.Context, l latLib, rdb *redis.Client, addr, queue string, onJob func()) error {
	if l.kind == kindPeer {
		srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr}, asynq.Config{
			Concurrency: jobConcurrency, Queues: map[string]int{queue: 1}, LogLevel: asynq.FatalLevel,
		})
		mux := asynq.NewServeMux()
		mux.HandleFunc("noop", func(context.Context, *asynq.Task) error { onJob(); return nil })
		if err := srv.Start(mux); err != nil {
			return err
		}
		<-ctx.Done()
		srv.Shutdown()
		return nil
	}
	var opts *redisson.Options
	if l.lease > 0 {
		opts = &redisson.Options{WatchdogTimeout: l.lease}
	}
	c, err := redisson.New(rdb, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	q := redisson.GetReliableQueue[[]byte](c, queue)
	err = q.Process(ctx, func(context.Context, *redisson.Job[[]byte]) error { onJob(); return nil },
		redisson.WorkerOptions{Concurrency: jobConcurrency, Lease: l.lease, FetchCooldown: l.cooldown})
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// latEnqueue returns an enqueue function of l on queue.
func latEnqueue(l latLib, rdb *redis.Client, queue string) (func(ctx context.Context) error, func(), error) {
	payload := make([]byte, jobPayload)
	if l.kind == kindPeer {
		c := asynq.NewClientFromRedisClient(rdb)
		return func(ctx context.Context) error {
			_, err := c.EnqueueContext(ctx, asynq.NewTask("noop", payload), asynq.Queue(queue))
			return err
		}, func() {}, nil
	}
	c, err := redisson.New(rdb, nil)
	if err != nil {
		return nil, nil, err
	}
	q := redisson.GetReliableQueue[[]byte](c, queue)
	return func(ctx context.Context) error { _, _, err := q.Enqueue(ctx, payload); return err }, func() { c.Close() }, nil
}

// runJobsLatency is the scenario: a pickup table and a redelivery table.
func runJobsLatency(ctx context.Context, s *suite) error {
	pick := &table{
		title: "job pickup latency on an idle queue (enqueue to handler start)",
		note: "One job at a time, 5-25 ms apart, timed in one process from before the enqueue to the handler's start; " +
			"200 jobs per round for ours, 40 for asynq (which looks at an empty queue every TaskCheckInterval, 1s by default). " +
			"After a read that took a job, ours waits its FetchCooldown (10ms by default) before it reads again, so a job " +
			"enqueued 5-10 ms after the one before waits up to 5 ms; the FetchCooldown -1 row reads again at once.",
		primary: "p50",
		cols: []col{
			{key: "p50", head: "p50 ms (min-max)", format: "%.2f", spread: true},
			{key: "p99", head: "p99 ms", format: "%.2f"},
			{key: "max", head: "max ms", format: "%.2f"},
		},
	}
	red := &table{
		title: "redelivery after a worker process is killed (SIGKILL to the job's start in another worker)",
		note: "A worker process takes the job and hangs in its handler; it is killed, and a worker of this process " +
			"(started before the kill) runs the job again. Ours with its default lease and with a 2s lease; asynq with " +
			"its defaults (its lease and recoverer are not configurable). The rows at defaults run in the first round only. " +
			"A lease runs from its last renewal, before the kill, so a redelivery can come sooner than a whole lease after it.",
		primary: "after",
		cols: []col{
			{key: "after", head: "kill to redelivery, s (min-max)", format: "%.2f", spread: true},
			{key: "lease", head: "lease, s", format: "%.0f"},
			{key: "over", head: "beyond the lease, s", format: "%.2f"},
		},
	}
	prows, rrows := make([]*row, len(latLibs)), make([]*row, len(latLibs))
	for i, l := range latLibs {
		prows[i] = pick.row(l.name, l.settings, l.kind)
		rrows[i] = red.row(l.name, l.settings, l.kind)
	}
	for round := range s.rounds {
		for i, l := range latLibs {
			if l.lease == 0 { // pickup does not depend on the lease: the rows at defaults
				prows[i].add(pickupRun(ctx, l, s.short))
			}
			if l.redeliveryRounds < 0 || (l.redeliveryRounds > 0 && round >= l.redeliveryRounds) {
				continue
			}
			if s.short && l.redeliveryRounds > 0 { // the rows at defaults take 30s to minutes
				continue
			}
			rrows[i].add(redeliveryRun(ctx, l))
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
	}
	pick.rows = slices.DeleteFunc(pick.rows, func(r *row) bool { return len(r.runs) == 0 && r.errs == 0 })
	red.rows = slices.DeleteFunc(red.rows, func(r *row) bool { return len(r.runs) == 0 && r.errs == 0 })
	s.emit(pick)
	s.emit(red)
	return nil
}

// pickupRun is one pickup run of l on a fresh server.
func pickupRun(ctx context.Context, l latLib, short bool) (map[string]float64, error) {
	srv, err := startServer()
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rdb := srv.client()
	defer rdb.Close()
	const queue = "bench-pickup"
	started := make(chan time.Time, 1)
	wctx, stop := context.WithCancel(ctx)
	werr := make(chan error, 1)
	go func() {
		werr <- latWorker(wctx, l, rdb, srv.addr, queue, func() { started <- time.Now() })
	}()
	defer func() { stop(); <-werr }()
	enqueue, closeFn, err := latEnqueue(l, rdb, queue)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	time.Sleep(300 * time.Millisecond) // the worker connects and starts waiting
	n := 200
	if l.kind == kindPeer {
		n = 40
	}
	if short {
		n /= 10
	}
	lat := make([]time.Duration, 0, n)
	for range n {
		time.Sleep(5*time.Millisecond + rand.N(20*time.Millisecond))
		t0 := time.Now()
		if err := enqueue(ctx); err != nil {
			return nil, err
		}
		select {
		case t1 := <-started:
			lat = append(lat, t1.Sub(t0))
		case err := <-werr:
			return nil, fmt.Errorf("worker stopped: %v", err)
		case <-time.After(10 * time.Second):
			return nil, fmt.Errorf("a job was not picked up within 10s")
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return map[string]float64{"p50": ms(percentile(lat, 0.5)), "p99": ms(percentile(lat, 0.99)), "max": ms(lat[len(lat)-1])}, nil
}

// redeliveryRun is one redelivery run of l on a fresh server.
func redeliveryRun(ctx context.Context, l latLib) (map[string]float64, error) {
	srv, err := startServer()
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	rdb := srv.client()
	defer rdb.Close()
	const queue = "bench-redelivery"
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	child := exec.CommandContext(ctx, self, "-jobs-hang", l.name, "-jobs-lease", l.lease.String(), "-jobs-addr", srv.addr, "-jobs-queue", queue)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := child.Start(); err != nil {
		return nil, err
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	lines := bufio.NewScanner(out)
	if !lines.Scan() || lines.Text() != "ready" {
		return nil, fmt.Errorf("hanging worker %s did not start", l.name)
	}
	enqueue, closeFn, err := latEnqueue(l, rdb, queue)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	if err := enqueue(ctx); err != nil {
		return nil, err
	}
	if !lines.Scan() || lines.Text() != "took" {
		return nil, fmt.Errorf("hanging worker %s did not take the job", l.name)
	}
	started := make(chan time.Time, 1)
	wctx, stop := context.WithCancel(ctx)
	werr := make(chan error, 1)
	go func() {
		werr <- latWorker(wctx, l, rdb, srv.addr, queue, func() {
			select {
			case started <- time.Now():
			default:
			}
		})
	}()
	defer func() { stop(); <-werr }()
	time.Sleep(300 * time.Millisecond) // the live worker connects and starts waiting
	killed := time.Now()
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		return nil, err
	}
	select {
	case t := <-started:
		lease := l.lease
		if lease == 0 {
			lease = 30 * time.Second // both libraries' default
		}
		after := t.Sub(killed).Seconds()
		return map[string]float64{"after": after, "lease": lease.Seconds(), "over": after - lease.Seconds()}, nil
	case err := <-werr:
		return nil, fmt.Errorf("worker stopped: %v", err)
	case <-time.After(5 * time.Minute):
		return nil, fmt.Errorf("the job was not redelivered within 5 minutes of the kill")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// jobHangMain is the hanging worker process (-jobs-hang): it prints
// "ready", then "took" when its handler starts, and hangs there until it
// is killed.
func jobHangMain(ctx context.Context, lib, addr, queue string, lease time.Duration) int {
	i := slices.IndexFunc(latLibs, func(l latLib) bool { return l.name == lib && l.lease == lease })
	if i < 0 {
		fmt.Fprintf(os.Stderr, "bench: -jobs-hang: unknown library %q with lease %v\n", lib, lease)
		return 2
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	fmt.Println("ready")
	err := latWorker(ctx, latLibs[i], rdb, addr, queue, func() {
		fmt.Println("took")
		<-ctx.Done() // hang until killed
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench: hanging worker:", err)
		return 1
	}
	return 0
}
