package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// The jobs-cluster scenario: what WithPartitions does to each master's
// cost per job. The same no-op jobs go through an unpartitioned
// ReliableQueue on one redis-server, then through a partitioned one on a
// 3-master cluster; each master's Redis CPU and commands are read from its
// own INFO. On this 2-core machine the client and every server share the
// cores, so throughput cannot scale with the masters; the cost per job each
// master pays is what scales on hardware with a core per server.

const (
	jcProducers = 16
	jcTarget    = 1.10 / 3 // of one server's CPU per job, per master
	jcPace      = 2000     // jobs/s of the paced table
)

// jcNode is what one server did during a run.
type jcNode struct {
	calls map[string]int64 // commands by name
	cpu   time.Duration    // INFO cpu, user+sys
	usec  int64            // INFO commandstats: EVALSHA's usec (the scripts' nested commands included)
	idle  time.Duration    // INFO cpu per second before the run, the worker polling
	reads int64            // INFO stats total_reads_processed: socket reads
	jobs  int64            // jobs of the partitions it holds
}

// jcRun is one measured run.
type jcRun struct {
	rate  float64
	nodes []jcNode
}

// runJobsCluster is the scenario.
func runJobsCluster(ctx context.Context, s *suite) error {
	jobs := 20000
	if s.short {
		jobs = 2000
	}
	single, err := startServer()
	if err != nil {
		return err
	}
	defer single.stop()
	sadmin := single.client()
	defer sadmin.Close()
	srvs, admins, stop, err := startCluster(ctx, 3)
	if err != nil {
		return err
	}
	defer stop()
	// parts[0] == 1: the unpartitioned queue on the cluster, all on one
	// master: the cluster's own reference, cluster mode and the cores
	// shared with idle masters included.
	parts := []int{1, 3, 6}
	names := make([]string, len(parts))
	owners := make([][]int, len(parts)) // partition -> master
	for i, n := range parts {
		if names[i], owners[i], err = jcBalancedQueue(ctx, srvs, admins, n); err != nil {
			return err
		}
	}

	e := &jcSetup{single: single, sadmin: sadmin, srvs: srvs, admins: admins, parts: parts, names: names, owners: owners, jobs: jobs, idle: time.Second}
	if s.short {
		e.idle = 200 * time.Millisecond
	}
	if err := e.table(ctx, s, 0); err != nil {
		return err
	}
	return e.table(ctx, s, jcPace)
}

// jcSetup is the scenario's servers and queues.
type jcSetup struct {
	single *server
	sadmin *redis.Client
	srvs   []*server
	admins []*redis.Client
	parts  []int    // partition counts; 1: the unpartitioned queue on the cluster, all on one master
	names  []string // the queue of each partition count
	owners [][]int  // per partition count: partition -> master
	jobs   int
	idle   time.Duration // the window of the idle CPU reading
}

// table runs the scenario's rounds and prints its tables; pace is the
// jobs per second the producers enqueue (0: as fast as they can).
func (e *jcSetup) table(ctx context.Context, s *suite, pace float64) error {
	single, sadmin, srvs, admins, parts, names, owners, jobs := e.single, e.sadmin, e.srvs, e.admins, e.parts, e.names, e.owners, e.jobs
	title := fmt.Sprintf("%d no-op jobs, %d producer goroutines, one in-process worker (Process, Concurrency %d): "+
		"one server against each master of a 3-master cluster", jobs, jcProducers, jobConcurrency)
	if pace > 0 {
		title = fmt.Sprintf("The same, enqueued at %.0f jobs/s (the cores not saturated)", pace)
	}
	t := &table{
		title: title,
		note: fmt.Sprintf("Each server's own INFO, from the first enqueue until the last job is finished: Redis CPU (INFO cpu, "+
			"user+sys) and commands (INFO commandstats, inside scripts included, the worker's idle polling too) per job of "+
			"the run, and commands per job of the partitions the master holds; EVALSHA µs is INFO commandstats' time in "+
			"scripts (wall time, nested commands included); idle CPU is INFO cpu over a second (200ms with -short) before the run, the worker "+
			"waiting. \"vs one server\" is the master's CPU per job over one server's in the same round, the issue's "+
			"target: at most 1/3 of it plus 10%%, <= %.3f; \"vs cluster unpartitioned\" the same over the master that "+
			"held the whole unpartitioned queue on the cluster. The queue names are chosen so that the partitions spread "+
			"evenly over the masters.", jcTarget),
		cols: []col{
			{key: "rate", head: "jobs/s (min-max)", format: "%.0f", spread: true},
			{key: "cmds", head: "Redis cmds/job", format: "%.2f"},
			{key: "own", head: "cmds per own job", format: "%.2f"},
			{key: "cpu", head: "Redis CPU µs/job (min-max)", format: "%.1f", spread: true},
			{key: "ratio", head: "vs one server (min-max)", format: "%.3f", spread: true},
			{key: "ratioC", head: "vs cluster unpartitioned", format: "%.3f"},
			{key: "reads", head: "socket reads per own job", format: "%.2f"},
			{key: "usec", head: "EVALSHA µs/job", format: "%.1f"},
			{key: "idle", head: "idle CPU ms/s", format: "%.1f"},
		},
	}
	singleRow := t.row("one server", "unpartitioned queue", kindOurs)
	rows := make([][]*row, len(parts)) // per partition count: the masters, then their sum
	for i, n := range parts {
		for m := range srvs {
			var held []string
			for p, o := range owners[i] {
				if o == m {
					held = append(held, strconv.Itoa(p))
				}
			}
			switch {
			case n == 1 && len(held) == 0:
				rows[i] = append(rows[i], nil) // an idle master: not shown
			case n == 1:
				rows[i] = append(rows[i], t.row(fmt.Sprintf("cluster, master %d", m+1), "unpartitioned queue", kindOurs))
			default:
				rows[i] = append(rows[i], t.row(fmt.Sprintf("WithPartitions(%d), master %d", n, m+1),
					"partitions "+strings.Join(held, ", "), kindOurs))
			}
		}
		if n > 1 {
			rows[i] = append(rows[i], t.row(fmt.Sprintf("WithPartitions(%d), 3 masters summed", n), "", kindOurs))
		}
	}

	// by command: per round, the calls per own job of one server and of
	// each master (the column keys of the breakdown table)
	var byCmd []map[string]map[string]float64
	for range s.rounds {
		round := map[string]map[string]float64{}
		one, err := jcSingle(ctx, single, sadmin, jobs, pace, e.idle)
		runs := make([]jcRun, len(parts))
		errs := make([]error, len(parts))
		for i, n := range parts {
			runs[i], errs[i] = jcCluster(ctx, srvs, admins, names[i], n, owners[i], jobs, pace, e.idle)
		}
		refs := [2]time.Duration{} // CPU of one server, of the cluster's unpartitioned master; 0: failed
		if err == nil {
			refs[0] = one.nodes[0].cpu
		}
		if errs[0] == nil {
			refs[1] = runs[0].nodes[owners[0][0]].cpu
		}
		if err != nil {
			singleRow.add(nil, err)
		} else {
			singleRow.add(jcMetrics(one, 0, jobs, refs), nil)
			jcBreakdown(round, "one", one.nodes[0])
		}
		for i, n := range parts {
			if errs[i] != nil {
				for _, row := range rows[i] {
					if row != nil {
						row.add(nil, errs[i])
					}
				}
				continue
			}
			r := runs[i]
			sum := jcRun{rate: r.rate, nodes: []jcNode{{calls: map[string]int64{}, jobs: int64(jobs)}}}
			for m, nd := range r.nodes {
				if rows[i][m] != nil {
					rows[i][m].add(jcMetrics(r, m, jobs, refs), nil)
				}
				if nd.jobs > 0 {
					jcBreakdown(round, fmt.Sprintf("p%dm%d", n, m+1), nd)
				}
				sum.nodes[0].cpu += nd.cpu
				sum.nodes[0].usec += nd.usec
				sum.nodes[0].idle += nd.idle
				sum.nodes[0].reads += nd.reads
				for k, v := range nd.calls {
					sum.nodes[0].calls[k] += v
				}
			}
			if n > 1 {
				rows[i][len(srvs)].add(jcMetrics(sum, 0, jobs, refs), nil)
			}
		}
		byCmd = append(byCmd, round)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	s.emit(t)
	for i, n := range parts {
		if n == 1 {
			continue
		}
		worst, worstC := 0.0, 0.0
		for m := range srvs {
			worst = max(worst, rows[i][m].metric("ratio").med)
			worstC = max(worstC, rows[i][m].metric("ratioC").med)
		}
		verdict := "met"
		if worst > jcTarget {
			verdict = fmt.Sprintf("missed by %.0f%%", (worst/jcTarget-1)*100)
		}
		s.printf("WithPartitions(%d): the dearest master's CPU per job is %.3f of one server's (median over rounds); "+
			"target <= %.3f: %s. Against the cluster's unpartitioned master: %.3f.\n\n", n, worst, jcTarget, verdict, worstC)
	}
	if pace == 0 {
		s.emit(jcBreakdownTable(byCmd, parts, owners))
	} else {
		s.emit(jcFloorTable(ctx, s.rounds, sadmin, admins, jobs, pace))
	}
	return nil
}

// jcPaced calls job(i) for i from 0 to jobs-1 from jcProducers
// goroutines, job i no sooner than i/pace seconds after the first (pace 0:
// at once), and returns the first error (the goroutine that met it stops).
func jcPaced(jobs int, pace float64, job func(i int) error) error {
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, jcProducers)
	for p := range jcProducers {
		wg.Go(func() {
			for i := p; i < jobs; i += jcProducers {
				if pace > 0 {
					time.Sleep(time.Until(start.Add(time.Duration(float64(i) / pace * float64(time.Second)))))
				}
				if err := job(i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// jcMetrics returns the row metrics of node m of run r; refs are the CPU
// of one server and of the cluster's unpartitioned master in the same
// round (0: none, no ratio).
func jcMetrics(r jcRun, m, jobs int, refs [2]time.Duration) map[string]float64 {
	nd := r.nodes[m]
	var cmds int64
	for _, v := range nd.calls {
		cmds += v
	}
	out := map[string]float64{
		"rate": r.rate,
		"cmds": float64(cmds) / float64(jobs),
		"cpu":  float64(nd.cpu.Microseconds()) / float64(jobs),
		"usec": float64(nd.usec) / float64(jobs),
		"idle": float64(nd.idle.Microseconds()) / 1000,
	}
	if nd.jobs > 0 {
		out["own"] = float64(cmds) / float64(nd.jobs)
		out["reads"] = float64(nd.reads) / float64(nd.jobs)
	}
	if refs[0] > 0 {
		out["ratio"] = float64(nd.cpu) / float64(refs[0])
	}
	if refs[1] > 0 {
		out["ratioC"] = float64(nd.cpu) / float64(refs[1])
	}
	return out
}

// jcBreakdown adds node nd's calls per own job by command to round under
// the column key.
func jcBreakdown(round map[string]map[string]float64, key string, nd jcNode) {
	if nd.jobs == 0 {
		return
	}
	for name, v := range nd.calls {
		if round[name] == nil {
			round[name] = map[string]float64{}
		}
		round[name][key] = float64(v) / float64(nd.jobs)
	}
}

// jcBreakdownTable is the commands per job by command, medians over rounds.
func jcBreakdownTable(byCmd []map[string]map[string]float64, parts []int, owners [][]int) *table {
	t := &table{
		title: "The same runs: Redis commands per own job by command",
		note: "Per job of the partitions the server holds (one server: every job), medians over rounds; a command a " +
			"script runs counts under its own name as well as the script's EVALSHA. Commands below 0.005 per job left out.",
		cols: []col{{key: "one", head: "one server", format: "%.3f"}},
	}
	for i, n := range parts {
		for m := range 3 {
			if !slices.Contains(owners[i], m) {
				continue
			}
			head := fmt.Sprintf("%d partitions, master %d", n, m+1)
			if n == 1 {
				head = fmt.Sprintf("cluster unpartitioned, master %d", m+1)
			}
			t.cols = append(t.cols, col{key: fmt.Sprintf("p%dm%d", n, m+1), head: head, format: "%.3f"})
		}
	}
	total := map[string]float64{}
	for _, round := range byCmd {
		for name, cols := range round {
			for _, v := range cols {
				total[name] += v
			}
		}
	}
	names := slices.SortedFunc(maps.Keys(total), func(a, b string) int {
		if total[a] != total[b] {
			if total[a] > total[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	for _, name := range names {
		if total[name]/float64(len(byCmd)*len(t.cols)) < 0.005 {
			continue
		}
		r := t.row(name, "", kindOurs)
		for _, round := range byCmd {
			m := map[string]float64{}
			for _, c := range t.cols {
				m[c.key] = round[name][c.key] // absent: 0
			}
			r.add(m, nil)
		}
	}
	return t
}

// jcBalancedQueue returns a queue name whose n partitions spread evenly
// over the masters, and the master of each partition.
func jcBalancedQueue(ctx context.Context, srvs []*server, admins []*redis.Client, n int) (string, []int, error) {
	slots, err := admins[0].ClusterSlots(ctx).Result()
	if err != nil {
		return "", nil, err
	}
	master := func(slot int64) int {
		for _, r := range slots {
			if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
				for i, s := range srvs {
					if s.addr == r.Nodes[0].Addr {
						return i
					}
				}
			}
		}
		return -1
	}
	c, err := redisson.New(admins[0], nil) // only to name the partitions
	if err != nil {
		return "", nil, err
	}
	defer c.Close()
	for k := range 1000 {
		name := fmt.Sprintf("bench-jobs-%d", k)
		q := redisson.GetReliableQueue[[]byte](c, name, redisson.WithPartitions(n))
		owners := make([]int, n)
		count := make([]int, len(srvs))
		for i, key := range q.PartitionNames() {
			slot, err := admins[0].ClusterKeySlot(ctx, key).Result()
			if err != nil {
				return "", nil, err
			}
			owners[i] = master(slot)
			if owners[i] < 0 {
				return "", nil, fmt.Errorf("no master of slot %d in CLUSTER SLOTS", slot)
			}
			count[owners[i]]++
		}
		if slices.Max(count)-slices.Min(count) <= 1 {
			return name, owners, nil
		}
	}
	return "", nil, fmt.Errorf("no queue name of %d partitions spreads evenly over the masters", n)
}

// jcSingle is one run on one server with an unpartitioned queue.
func jcSingle(ctx context.Context, srv *server, admin *redis.Client, jobs int, pace float64, idleFor time.Duration) (jcRun, error) {
	prod, work := srv.client(), srv.client()
	defer prod.Close()
	defer work.Close()
	defer func() { _ = admin.FlushAll(context.WithoutCancel(ctx)).Err() }()
	return jcRunOn(ctx, prod, work, []*redis.Client{admin}, "bench-jobs", 1, []int{0}, jobs, pace, idleFor)
}

// jcCluster is one run on the cluster with a queue of n partitions.
func jcCluster(ctx context.Context, srvs []*server, admins []*redis.Client, name string, n int, owners []int, jobs int, pace float64, idleFor time.Duration) (jcRun, error) {
	var addrs []string
	for _, s := range srvs {
		addrs = append(addrs, s.addr)
	}
	prod := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	work := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer prod.Close()
	defer work.Close()
	defer func() {
		for _, a := range admins {
			_ = a.FlushAll(context.WithoutCancel(ctx)).Err()
		}
	}()
	return jcRunOn(ctx, prod, work, admins, name, n, owners, jobs, pace, idleFor)
}

// jcRunOn enqueues jobs no-op jobs from jcProducers goroutines on prod
// while one Process on work runs them, and reads each admin's server
// before and after; owners maps each partition to its admin. With pace
// above 0 job i is enqueued no sooner than i/pace seconds after the first.
func jcRunOn(ctx context.Context, prod, work redis.UniversalClient, admins []*redis.Client, name string, n int, owners []int, jobs int, pace float64, idleFor time.Duration) (jcRun, error) {
	var opts []redisson.ObjectOption
	if n > 1 {
		opts = append(opts, redisson.WithPartitions(n))
	}
	pc, err := redisson.New(prod, nil)
	if err != nil {
		return jcRun{}, err
	}
	defer pc.Close()
	wc, err := redisson.New(work, nil)
	if err != nil {
		return jcRun{}, err
	}
	defer wc.Close()
	perPart := make([]atomic.Int64, n)
	var finished atomic.Int64
	wq := redisson.GetReliableQueue[[]byte](wc, name, opts...)
	wctx, stopWorker := context.WithCancel(ctx)
	werr := make(chan error, 1)
	go func() {
		werr <- wq.Process(wctx, func(_ context.Context, j *redisson.Job[[]byte]) error {
			p := 0
			if rest, ok := strings.CutPrefix(j.ID, "p"); ok {
				num, _, _ := strings.Cut(rest, "/")
				p, _ = strconv.Atoi(num)
			}
			if p >= 0 && p < n {
				perPart[p].Add(1)
			}
			finished.Add(1)
			return nil
		}, redisson.WorkerOptions{Concurrency: jobConcurrency})
	}()
	defer func() {
		stopWorker()
		<-werr
	}()
	time.Sleep(300 * time.Millisecond) // the worker creates its groups and starts polling

	before := make([]jcNode, len(admins))
	read := func(into []jcNode) error {
		for i, a := range admins {
			calls, err := commandCalls(ctx, a)
			if err != nil {
				return err
			}
			cpu, err := serverCPU(ctx, a)
			if err != nil {
				return err
			}
			st, err := info(ctx, a, "commandstats")
			if err != nil {
				return err
			}
			_, usec, _ := strings.Cut(st["cmdstat_evalsha"], "usec=")
			usec, _, _ = strings.Cut(usec, ",")
			u, _ := strconv.ParseInt(usec, 10, 64)
			stats, err := info(ctx, a, "stats")
			if err != nil {
				return err
			}
			reads, _ := strconv.ParseInt(stats["total_reads_processed"], 10, 64)
			into[i] = jcNode{calls: calls, cpu: cpu, usec: u, reads: reads}
		}
		return nil
	}
	// The worker waiting for jobs for idleFor: what each server spends
	// without them (cron, cluster bus, the worker's blocking reads).
	idle := make([]jcNode, len(admins))
	if err := read(idle); err != nil {
		return jcRun{}, err
	}
	idleStart := time.Now()
	time.Sleep(idleFor)
	if err := read(before); err != nil {
		return jcRun{}, err
	}
	idleFor = time.Since(idleStart)
	pq := redisson.GetReliableQueue[[]byte](pc, name, opts...)
	payload := make([]byte, jobPayload)
	start := time.Now()
	if err := jcPaced(jobs, pace, func(int) error { _, _, err := pq.Enqueue(ctx, payload); return err }); err != nil {
		return jcRun{}, err
	}
	deadline := time.Now().Add(2 * time.Minute)
	for finished.Load() < int64(jobs) {
		select {
		case err := <-werr:
			werr <- err // for the deferred wait
			return jcRun{}, fmt.Errorf("worker stopped: %v", err)
		case <-ctx.Done():
			return jcRun{}, ctx.Err()
		case <-time.After(time.Millisecond):
		}
		if time.Now().After(deadline) {
			return jcRun{}, fmt.Errorf("%d of %d jobs finished after 2 minutes", finished.Load(), jobs)
		}
	}
	elapsed := time.Since(start)
	after := make([]jcNode, len(admins))
	if err := read(after); err != nil {
		return jcRun{}, err
	}
	r := jcRun{rate: float64(jobs) / elapsed.Seconds(), nodes: make([]jcNode, len(admins))}
	for i := range admins {
		calls := map[string]int64{}
		for k, v := range after[i].calls {
			if d := v - before[i].calls[k]; d != 0 {
				calls[k] = d
			}
		}
		r.nodes[i] = jcNode{calls: calls, cpu: after[i].cpu - before[i].cpu, usec: after[i].usec - before[i].usec,
			reads: after[i].reads - before[i].reads,
			idle:  time.Duration(float64(before[i].cpu-idle[i].cpu) / idleFor.Seconds())}
	}
	for p, m := range owners {
		r.nodes[m].jobs += perPart[p].Load()
	}
	return r, nil
}
