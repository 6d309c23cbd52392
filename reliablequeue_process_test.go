package redisson

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/childproc"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rqProcEnv makes the test binary a ReliableQueue producer or worker
// process of TestReliableQueueCrashHistory (see runRQProcess) instead of
// running tests: "<role>|<redis addr>|<history file>|<arg>|<partitions>";
// the address of a Cluster is its nodes' addresses, comma-separated.
const rqProcEnv = "REDISSON_TEST_RQPROC"

// rqProcClient connects a child of the crash test to addr, a server or
// (comma-separated addresses) a Cluster.
func rqProcClient(addr, name string) redis.UniversalClient {
	if strings.Contains(addr, ",") {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addr, ","), ClientName: name})
	}
	return redis.NewClient(&redis.Options{Addr: addr, ClientName: name})
}

func init() {
	if spec := os.Getenv(rqProcEnv); spec != "" {
		os.Exit(runRQProcess(spec))
	}
}

// rqCrashQueue is the queue the crash test's processes share.
const rqCrashQueue = "crash-jobs"

// rqPoison reports whether the crash test's job value v always fails.
func rqPoison(v string) bool { return strings.HasSuffix(v, "-poison") }

// runRQProcess is a child of the crash test. A producer ("producer",
// arg "<prefix>:<n>") enqueues n jobs "<prefix>-<i>" (every 250th a
// poison job that always fails), each with its value as deduplication id,
// retrying an Enqueue that failed until it succeeds, and records
//
//	enq <value> <job id> <added>
//
// A worker ("worker", arg the lease) processes the queue until killed,
// recording with its pid and the time in ns
//
//	start <job id> <value> <attempt> <pid> <ns>   (handler started)
//	sending <job id> <how> <attempt> false <pid> <ns>   (a settle is sent)
//	settle <job id> <how> <attempt> <done> <pid> <ns>   (its result)
//
// Its handlers sleep up to 3 ms; 3% fail once in a while, poison jobs
// always.
func runRQProcess(spec string) int {
	f := strings.SplitN(spec, "|", 5)
	role, addr, path, arg := f[0], f[1], f[2], f[3]
	parts, _ := strconv.Atoi(f[4])
	out, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var mu sync.Mutex
	record := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(out, format+"\n", args...) // one write(2) per line, O_APPEND
	}
	ctx := context.Background()
	if role == "producer" {
		prefix, n, _ := strings.Cut(arg, ":")
		count, _ := strconv.Atoi(n)
		c, err := New(rqProcClient(addr, "rqproducer"), nil)
		if err != nil {
			return 1
		}
		q := GetReliableQueue[string](c, rqCrashQueue, WithPartitions(parts))
		for i := range count {
			v := fmt.Sprintf("%s-%d", prefix, i)
			if i%250 == 7 {
				v += "-poison"
			}
			for {
				id, added, err := q.Enqueue(ctx, v, JobDedupID(v, time.Hour))
				if err == nil {
					record("enq %s %s %v", v, id, added)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		return 0
	}
	lease, _ := time.ParseDuration(arg)
	pid := os.Getpid()
	rqSettled = func(id, how string, attempt int, sent, done bool) {
		verb := "settle"
		if !sent {
			verb = "sending"
		}
		record("%s %s %s %d %v %d %d", verb, id, how, attempt, done, pid, time.Now().UnixNano())
	}
	c, err := New(rqProcClient(addr, "rqworker"), &Options{WatchdogTimeout: lease})
	if err != nil {
		return 1
	}
	q := GetReliableQueue[string](c, rqCrashQueue, WithPartitions(parts))
	err = q.Process(ctx, func(ctx context.Context, j *Job[string]) error {
		record("start %s %s %d %d %d", j.ID, j.Value, j.Attempt, pid, time.Now().UnixNano())
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		switch {
		case rqPoison(j.Value):
			return errors.New("poison")
		case rand.IntN(100) < 3:
			return errors.New("flaky")
		}
		return nil
	}, WorkerOptions{Concurrency: 8, Prefetch: 8, MaxDeliveries: 4, Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
	fmt.Fprintln(os.Stderr, "worker exited:", err)
	return 1
}

// rqChild is a child process of the crash test.
type rqChild struct {
	cmd  *exec.Cmd
	wait func() error
	done chan error
}

func startRQChild(t *testing.T, role, addr, path, arg string, parts int) *rqChild {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), rqProcEnv+"="+role+"|"+addr+"|"+path+"|"+arg+"|"+strconv.Itoa(parts))
	cmd.Stderr = os.Stderr
	wait, err := childproc.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	ch := &rqChild{cmd: cmd, wait: wait, done: make(chan error, 1)}
	go func() { ch.done <- wait() }()
	t.Cleanup(func() { ch.kill() })
	return ch
}

// kill kills the child with SIGKILL and waits for it.
func (ch *rqChild) kill() {
	_ = ch.cmd.Process.Signal(syscall.SIGKILL)
	err := <-ch.done
	ch.done <- err // later kills return at once
}

// rqJobsPerProducer is the crash test's number of jobs per producer (the
// soak build raises it).
var rqJobsPerProducer = 1500

// rqCrashSetup is where TestReliableQueueCrashHistory and its Cluster
// variant run.
type rqCrashSetup struct {
	topology  string
	faults    string
	addr      string                // the children's: a server, or a Cluster's nodes comma-separated
	rdb       redis.UniversalClient // the test's
	parts     int                   // WithPartitions
	crash     func()                // crashes and restarts Redis once (nil: no crash)
	killConns func(context.Context) int
}

// Three producer processes enqueue jobs while three worker processes
// handle them; workers are killed with SIGKILL at random and restarted,
// their connections are killed with CLIENT KILL, and Redis (appendonly,
// appendfsync always) crashes and restarts once. The history the processes
// recorded shows every job enqueued once, and then acked exactly once or
// dead-lettered with its reason; no worker acked a job after another
// worker received it; redeliveries are counted.
func TestReliableQueueCrashHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: separate processes, a minute")
	}
	srv := redistest.Start(t, "--appendonly", "yes", "--appendfsync", "always")
	rdb := srv.Client(t)
	runRQCrash(t, rqCrashSetup{
		topology: "single", addr: srv.Addr(), rdb: rdb, parts: 1,
		faults:    "SIGKILL of worker processes + CLIENT KILL + Redis crash restart (appendonly, appendfsync always)",
		crash:     func() { srv.CrashRestart(t) },
		killConns: func(ctx context.Context) int { return killWorkerConns(ctx, rdb) },
	})
}

// TestReliableQueueClusterCrashHistory is the crash test on a queue of 6
// partitions over a 3-master Cluster (appendonly, appendfsync always), the
// partitions on every master: workers killed with SIGKILL, their
// connections killed on every master, and one master, picked at random,
// crashed and restarted on its port with its files (its AOF and
// nodes.conf: it rejoins with its node id and slots) while producers and
// workers run; the cluster must be back to cluster_state:ok, the
// partitions on that master must have come back from its AOF, and the
// same history checks hold.
func TestReliableQueueClusterCrashHistory(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test: separate processes, a minute")
	}
	cl := redistest.StartClusterWith(t, 3, 0, []string{"--appendonly", "yes", "--appendfsync", "always"})
	rdb := cl.Client(t)
	ctx := testCtx(t, time.Minute)
	const parts = 6
	masters := map[string][]string{} // master address -> its partitions
	for _, name := range GetReliableQueue[string](newClient(t, rdb, nil), rqCrashQueue, WithPartitions(parts)).PartitionNames() {
		node, err := rdb.MasterForKey(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = append(masters[node.Options().Addr], name)
	}
	if len(masters) != 3 {
		t.Fatalf("the %d partitions are on %d masters, want 3", parts, len(masters))
	}
	var candidates []*redistest.Server
	for _, s := range cl.Servers() {
		if masters[s.Addr()] != nil {
			candidates = append(candidates, s)
		}
	}
	victim := candidates[rand.IntN(len(candidates))]
	crash := func() {
		vctx := testCtx(t, time.Minute)
		node := redis.NewClient(&redis.Options{Addr: victim.Addr()})
		defer node.Close()
		streams := masters[victim.Addr()]
		exist := func() (n int64, err error) { // one by one: they are in different slots
			for _, k := range streams {
				e, err := node.Exists(vctx, k).Result()
				if err != nil {
					return n, err
				}
				n += e
			}
			return n, nil
		}
		before, err := exist()
		if err != nil || before == 0 {
			t.Fatalf("before the crash, master %s holds %d of its partitions %v: %v", victim.Addr(), before, streams, err)
		}
		pid := victim.Pid()
		victim.CrashRestart(t)
		if victim.Pid() == pid {
			t.Fatalf("master %s not restarted (pid %d)", victim.Addr(), pid)
		}
		cl.WaitHealthy(t, 2*time.Minute) // cluster_state:ok on every node, all slots
		after, err := exist()
		if err != nil || after < before {
			t.Fatalf("after its restart, master %s holds %d of its partitions %v (%d before): %v", victim.Addr(), after, streams, before, err)
		}
		t.Logf("master %s (partitions %v) crashed and restarted; cluster_state:ok again", victim.Addr(), streams)
	}
	runRQCrash(t, rqCrashSetup{
		topology: "cluster of 3 masters, 6 partitions", addr: strings.Join(cl.Addrs(), ","), rdb: rdb, parts: parts,
		faults: "SIGKILL of worker processes + CLIENT KILL on every master + crash restart of one master (appendonly, appendfsync always)",
		crash:  crash,
		killConns: func(ctx context.Context) int {
			n := 0
			var mu sync.Mutex
			_ = rdb.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
				k := killWorkerConns(ctx, m)
				mu.Lock()
				n += k
				mu.Unlock()
				return nil
			})
			return n
		},
	})
}

// runRQCrash runs the crash test in setup s.
func runRQCrash(t *testing.T, s rqCrashSetup) {
	dir := t.TempDir()
	const lease = 1500 * time.Millisecond
	hist := func(name string) string { return filepath.Join(dir, name+".log") }
	var producers []*rqChild
	for p := range 3 {
		producers = append(producers, startRQChild(t, "producer", s.addr, hist(fmt.Sprint("p", p)), fmt.Sprintf("p%d:%d", p, rqJobsPerProducer), s.parts))
	}
	workers := make([]*rqChild, 3)
	for i := range workers {
		workers[i] = startRQChild(t, "worker", s.addr, hist("workers"), lease.String(), s.parts)
	}
	killed := map[int]bool{} // pids killed mid-run
	kills, clientKills, restarts := 0, 0, 0
	producersDone := make(chan struct{})
	go func() {
		for _, p := range producers {
			err := <-p.done
			p.done <- err // for its kill at clean-up
		}
		close(producersDone)
	}()
	// 10 minutes, and a millisecond more per job for the soak's runs.
	ctx := testCtx(t, 10*time.Minute+time.Duration(3*rqJobsPerProducer)*time.Millisecond)
	start := time.Now()
	// Faults go on until the producers are done, and for at least 9
	// rounds (a Redis crash in the 4th).
	finished := false
	for round := 0; !finished || round < 9; round++ {
		select {
		case <-producersDone:
			finished, producersDone = true, nil
		case <-ctx.Done():
			t.Fatal("producers did not finish")
		case <-time.After(time.Duration(300+rand.IntN(600)) * time.Millisecond):
		}
		i := rand.IntN(len(workers))
		killed[workers[i].cmd.Process.Pid] = true
		workers[i].kill()
		kills++
		workers[i] = startRQChild(t, "worker", s.addr, hist("workers"), lease.String(), s.parts)
		if round%3 == 1 {
			clientKills += s.killConns(ctx)
		}
		if round == 3 && s.crash != nil {
			s.crash()
			restarts++
		}
	}
	produced := time.Since(start)
	q := GetReliableQueue[string](newClient(t, s.rdb, nil), rqCrashQueue, WithPartitions(s.parts))
	enq := readRQEnqueues(t, hist, len(producers))
	redistest.Eventually(t, 5*time.Minute+time.Duration(3*rqJobsPerProducer)*time.Millisecond, "every job acked or dead", func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.Ready == 0 && st.InFlight == 0 && st.Delayed == 0
	})
	for _, w := range workers {
		w.kill()
	}
	dead, err := q.DeadLetters(ctx, "", 1_000_000)
	if err != nil {
		t.Fatal(err)
	}
	r := checkRQHistory(t, enq, hist("workers"), dead, killed)
	verdict := "violations=0"
	if t.Failed() {
		verdict = "VIOLATIONS: see the errors above"
	}
	t.Logf("SUMMARY fault=%s; topology=%s, 3 producer + 3 worker processes (Concurrency 8, lease %v); jobs=%d in %v; acked=%d (%d of them with the ack record lost to a SIGKILL), dead=%d (%d poison); handler runs=%d, redeliveries=%d (%d after a lost lease, %d retries after errors); settles refused for a lost lease=%d; faults: %d kills, %d CLIENT KILLs, %d Redis restarts; %s",
		s.faults, s.topology, lease, len(enq), produced.Round(time.Second), r.acked, r.unlogged, len(dead), r.poison, r.runs, r.runs-len(enq), r.leaseRedeliveries, r.retries, r.refused, kills, clientKills, restarts, verdict)
}

// killWorkerConns kills the connections of every worker process and
// returns how many it killed.
func killWorkerConns(ctx context.Context, rdb *redis.Client) int {
	list, err := rdb.ClientList(ctx).Result()
	if err != nil {
		return 0
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		if !strings.Contains(line, " name=rqworker ") {
			continue
		}
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				if rdb.Do(ctx, "client", "kill", "id", id).Err() == nil {
					n++
				}
			}
		}
	}
	return n
}

// readRQEnqueues reads the producers' records: job id by value. A value
// enqueued twice must name one job, added once.
func readRQEnqueues(t *testing.T, hist func(string) string, producers int) map[string]string {
	t.Helper()
	jobs := map[string]string{} // value -> job id
	for p := range producers {
		for _, f := range readRecords(t, hist(fmt.Sprint("p", p))) {
			v, id, added := f[1], f[2], f[3] == "true"
			if prev, ok := jobs[v]; ok && prev != id {
				t.Errorf("value %s enqueued as two jobs %s and %s", v, prev, id)
			}
			if _, ok := jobs[v]; ok && added {
				t.Errorf("value %s added twice", v)
			}
			jobs[v] = id
		}
	}
	want := producers * rqJobsPerProducer
	if len(jobs) != want {
		t.Fatalf("%d values enqueued, want %d", len(jobs), want)
	}
	return jobs
}

func readRecords(t *testing.T, path string) [][]string {
	t.Helper()
	var out [][]string
	forRecords(t, path, func(f []string) { out = append(out, f) })
	return out
}

// forRecords calls each with the fields of each record of the file at
// path, one at a time (the soak's history is too large to hold as text).
func forRecords(t *testing.T, path string, each func([]string)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fs := strings.Fields(sc.Text()); len(fs) > 0 {
			each(fs)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

type rqReport struct {
	acked, unlogged, poison, runs, leaseRedeliveries, retries, refused int
}

// rqEvent is one worker record of a job.
type rqEvent struct {
	kind, how string
	attempt   int
	done      bool
	pid       int
	ns        int64
}

// checkRQHistory checks the workers' records against the enqueued jobs
// and the dead letters.
func checkRQHistory(t *testing.T, enq map[string]string, path string, dead []DeadLetter[string], killed map[int]bool) rqReport {
	t.Helper()
	value := map[string]string{}
	for v, id := range enq {
		value[id] = v
	}
	events := map[string][]rqEvent{}
	forRecords(t, path, func(f []string) {
		var e rqEvent
		switch f[0] {
		case "start":
			e.kind = "start"
			e.attempt, _ = strconv.Atoi(f[3])
			e.pid, _ = strconv.Atoi(f[4])
			e.ns, _ = strconv.ParseInt(f[5], 10, 64)
			if value[f[1]] != f[2] {
				t.Errorf("job %s handled with value %q, enqueued as %q", f[1], f[2], value[f[1]])
			}
		case "settle", "sending":
			e.kind, e.how, e.done = f[0], f[2], f[4] == "true"
			e.attempt, _ = strconv.Atoi(f[3])
			e.pid, _ = strconv.Atoi(f[5])
			e.ns, _ = strconv.ParseInt(f[6], 10, 64)
		default:
			t.Fatalf("bad record %v", f)
		}
		events[f[1]] = append(events[f[1]], e)
	})
	deadJobs := map[string]DeadLetter[string]{}
	for _, d := range dead {
		if _, dup := deadJobs[d.JobID]; dup {
			t.Errorf("job %s dead-lettered twice", d.JobID)
		}
		if d.Reason == "" {
			t.Errorf("dead letter %+v has no reason", d)
		}
		deadJobs[d.JobID] = d
	}
	var r rqReport
	for id, v := range value {
		evs := events[id]
		sort.SliceStable(evs, func(i, j int) bool { return evs[i].ns < evs[j].ns })
		acks, starts := 0, 0
		lastStart := rqEvent{}
		settled := true      // the last delivery was settled
		ackSent := rqEvent{} // the last ack sent
		for _, e := range evs {
			switch {
			case e.kind == "start":
				starts++
				if !settled {
					r.leaseRedeliveries++
				}
				settled = false
				lastStart = e
			case e.kind == "sending":
				if e.how == "ack" {
					ackSent = e
				}
			case !e.done:
				r.refused++
			case e.how == "ack":
				acks++
				settled = true
				if e.pid != lastStart.pid {
					t.Errorf("job %s acked by worker %d after worker %d received it: %+v", id, e.pid, lastStart.pid, evs)
				}
			case e.how == "retry":
				r.retries++
				settled = true
			default:
				settled = true
			}
		}
		r.runs += starts
		d, isDead := deadJobs[id]
		switch {
		case starts == 0 && !isDead:
			t.Errorf("job %s (%s) never handled nor dead-lettered", id, v)
		case acks > 1:
			t.Errorf("job %s acked %d times: %+v", id, acks, evs)
		case acks == 1 && isDead:
			t.Errorf("job %s acked and dead-lettered: %+v", id, evs)
		case isDead:
			if rqPoison(v) {
				r.poison++
			}
			if d.Value != v {
				t.Errorf("dead letter of job %s holds %q, want %q", id, d.Value, v)
			}
		case acks == 1:
			r.acked++
		case killed[lastStart.pid] && ackSent.pid == lastStart.pid && ackSent.ns > lastStart.ns:
			r.acked++
			r.unlogged++ // its ack was sent; the record of its result died with its worker
		default:
			t.Errorf("job %s left the queue neither acked nor dead: %+v", id, evs)
		}
		if rqPoison(v) && !isDead {
			t.Errorf("poison job %s not dead-lettered: %+v", id, evs)
		}
	}
	return r
}
