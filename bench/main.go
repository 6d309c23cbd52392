// Command bench runs redisson for Go side by side with the Go libraries
// people use for the same jobs (bsm/redislock, go-redsync/redsync,
// go-redis/redis_rate, ulule/limiter), on redis-server processes it starts
// itself, and prints one Markdown table per scenario.
//
//	go run .                 # full run (several minutes)
//	go run . -short          # every scenario once, briefly: a smoke test for CI
//	go run . -only hot -rounds 3
//
// Every scenario runs each library in turn, A B C A B C ..., once per round,
// so that drift of a shared machine hits all of them; tables give the median
// over rounds and the min-max. The exit status is 1 when any run failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// suite holds the settings of one run and collects its tables.
type suite struct {
	short     bool
	rounds    int
	duration  time.Duration // measured window of one throughput run
	warmup    time.Duration
	wdLeases  string        // -watchdog-leases
	wdTimeout time.Duration // -watchdog-timeout
	// jobsShapes are the jobs scenario's producer x worker-process
	// counts (-jobs-shapes), e.g. "1x4,32x1".
	jobsShapes string
	// goroutines are the goroutine counts of the uncontended scenario,
	// one table each (-goroutines).
	goroutines []int
	out        strings.Builder
	failures   []string
}

type scenario struct {
	name, what string
	run        func(ctx context.Context, s *suite) error
}

var scenarios = []scenario{
	{"uncontended", "1. uncontended lock+unlock (and 7. the floor)", runUncontended},
	{"redlock", "1b. uncontended Redlock over 5 servers", runRedlock},
	{"hot", "2-3. one hot lock: throughput, waits, hand-off", runHot},
	{"rate", "4. rate-limit decisions and memory per identity", runRate},
	{"watchdog", "5. watchdog cost", runWatchdog},
	{"pubsub", "6. pub/sub footprint of waiters", runPubSub},
	{"jobs", "8. job queues: enqueue and process no-op jobs", runJobs},
	{"costs", "9. how memory grows with the work", runCosts},
	{"cluster", "10. Redis Cluster, 3 masters: uncontended lock+unlock", runCluster},
	{"cache", "11. client-side caching: hit rate, hit latency, commands per 1,000 reads", runCache},
	{"jobs-cluster", "12. job queue partitions on a 3-master Redis Cluster: Redis CPU and commands per job on each master", runJobsCluster},
	{"cluster-objects", "13. Redis Cluster, 3 masters: keyed rate limiters, queue offer+poll, MapCache put+get", runClusterObjects},
	{"election", "14. leader election: hand-over after kill -9, SIGSTOP and Resign, against the lease floor", runElection},
	{"scheduler", "15. scheduler: fire lateness of one job on several instances, against a timer", runScheduler},
	{"jobs-latency", "16. job queue latency: pickup on an idle queue and redelivery after a worker's kill -9, beside asynq", runJobsLatency},
}

func main() { os.Exit(run()) }

// run runs the suite and returns the exit status.
func run() int {
	s := &suite{}
	flag.BoolVar(&s.short, "short", false, "smoke run: 1 round, short windows, small sizes; fails only on errors")
	flag.IntVar(&s.rounds, "rounds", 5, "rounds of every scenario (default 1 with -short)")
	flag.DurationVar(&s.duration, "duration", time.Second, "measured window of one run (default 300ms with -short)")
	only := flag.String("only", "", "comma-separated scenarios to run: "+names())
	flag.StringVar(&s.wdLeases, "watchdog-leases", "", "comma-separated lease counts of the watchdog scenario (default 1000,10000,100000; 1000 with -short)")
	flag.DurationVar(&s.wdTimeout, "watchdog-timeout", 0, "WatchdogTimeout of the watchdog scenario for every lease count (default 3s up to 10,000 leases, 9s above)")
	flag.StringVar(&s.jobsShapes, "jobs-shapes", "", "comma-separated producers x worker processes of the jobs scenario, e.g. 1x4,32x1 (default 1x1,1x4,32x1,32x4)")
	goroutines := flag.String("goroutines", "1,32", "comma-separated goroutine counts of the uncontended scenario, one table each")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	outPath := flag.String("out", "", "also write the report, with a header describing the machine, to this file")
	jobsWorker := flag.String("jobs-worker", "", "run as a worker process of the jobs scenario, of this library (internal)")
	jobsAddr := flag.String("jobs-addr", "", "the jobs worker's server address (internal)")
	jobsQueue := flag.String("jobs-queue", "", "the jobs worker's queue (internal)")
	candidate := flag.String("election-candidate", "", "run as a candidate process of the election scenario: addr|name|lease|id (internal)")
	jobsHang := flag.String("jobs-hang", "", "run as the hanging worker process of the jobs-latency scenario, of this library (internal)")
	jobsLease := flag.Duration("jobs-lease", 0, "the hanging worker's lease (internal)")
	echo := flag.String("election-echo", "", "run as the pub/sub echo process of the election scenario's floor, of this server (internal)")
	flag.Parse()
	if *candidate != "" {
		return electionCandidateMain(*candidate)
	}
	if *echo != "" {
		return electionEchoMain(*echo)
	}
	if *jobsHang != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return jobHangMain(ctx, *jobsHang, *jobsAddr, *jobsQueue, *jobsLease)
	}
	if *jobsWorker != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		return jobWorkerMain(ctx, *jobsWorker, *jobsAddr, *jobsQueue)
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if s.short {
		if !set["rounds"] {
			s.rounds = 1
		}
		if !set["duration"] {
			s.duration = 300 * time.Millisecond
		}
	}
	if s.rounds < 1 || s.duration <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -rounds must be >= 1 and -duration > 0")
		return 2
	}
	s.warmup = max(s.duration/5, 100*time.Millisecond)
	for _, f := range strings.Split(*goroutines, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			fmt.Fprintf(os.Stderr, "bench: -goroutines: %q is not a count >= 1\n", f)
			return 2
		}
		s.goroutines = append(s.goroutines, g)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	want := map[string]bool{}
	for _, n := range strings.Split(*only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			if !slices.ContainsFunc(scenarios, func(sc scenario) bool { return sc.name == n }) {
				fmt.Fprintf(os.Stderr, "bench: unknown scenario %q (have %s)\n", n, names())
				return 2
			}
			want[n] = true
		}
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	header, err := machine(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	s.printf("%s", header)
	for _, sc := range scenarios {
		if len(want) > 0 && !want[sc.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "== %s\n", sc.what)
		s.printf("### %s\n\n", sc.what)
		t0 := time.Now()
		if err := sc.run(ctx, s); err != nil {
			s.failures = append(s.failures, fmt.Sprintf("%s: %v", sc.name, err))
		}
		fmt.Fprintf(os.Stderr, "   (%s)\n", time.Since(t0).Round(time.Second))
		if ctx.Err() != nil {
			break
		}
	}
	s.printf("Total wall time: %s.\n", time.Since(start).Round(time.Second))
	if *outPath != "" {
		if err := os.WriteFile(*outPath, []byte(s.out.String()), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 1
		}
	}
	if len(s.failures) > 0 {
		fmt.Fprintln(os.Stderr, "FAILED:")
		for _, f := range s.failures {
			fmt.Fprintln(os.Stderr, "  ", f)
		}
		return 1
	}
	fmt.Fprintln(os.Stderr, "OK: every scenario ran without errors")
	return 0
}

func names() string {
	var n []string
	for _, sc := range scenarios {
		n = append(n, sc.name)
	}
	return strings.Join(n, ", ")
}

// printf writes to stdout and to the report.
func (s *suite) printf(format string, args ...any) {
	txt := fmt.Sprintf(format, args...)
	fmt.Print(txt)
	s.out.WriteString(txt)
}

// emit prints a finished table and records its failures.
func (s *suite) emit(t *table) {
	s.printf("%s", t.markdown())
	s.failures = append(s.failures, t.errors()...)
}

// machine describes where and how the suite runs.
func machine(ctx context.Context) (string, error) {
	srv, err := startServer()
	if err != nil {
		return "", err
	}
	defer srv.stop()
	rdb := srv.client()
	defer rdb.Close()
	m, err := info(ctx, rdb, "server")
	if err != nil {
		return "", err
	}
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- date: %s\n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- command: `cd bench && go run . %s`\n", strings.Join(os.Args[1:], " "))
	fmt.Fprintf(&b, "- machine: %d CPUs (`nproc`), %s; %s %s/%s\n", runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "- Redis %s on 127.0.0.1 (`--save \"\" --appendonly no`), one fresh server per scenario\n", m["redis_version"])
	fmt.Fprintf(&b, "- the libraries run in turn (A B C ... A B C ...), once per round; cells are medians over rounds with (min-max)\n")
	fmt.Fprintf(&b, "- the machine may be shared and noisy: compare rows of one table (measured interleaved), not numbers across runs\n\n")
	return b.String(), nil
}
