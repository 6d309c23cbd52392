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
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// electionWorkerEnv makes the test binary an election candidate (see
// runElectionWorker) instead of running tests:
// "<redis addr>|<lease>|<election name>|<candidate id>".
const electionWorkerEnv = "REDISSON_TEST_ELECTIONWORKER"

func init() {
	if spec := os.Getenv(electionWorkerEnv); spec != "" {
		os.Exit(runElectionWorker(spec, os.Stdin, os.Stdout))
	}
}

// runElectionWorker campaigns again and again, and while it leads acts
// every 2 ms, each act checked with Leadership.Err just after its time was
// taken. It writes one line per event to out (times in Unix ns):
//
//	lead TERM SINCE INVOKE RETURN  Campaign returned: SINCE is the server's
//	                               clock at the announcement
//	act TERM T                     an act at T, when Err was still nil
//	end TERM T CAUSE               Err reported the end at T
//	resign TERM INVOKE RETURN ERR  Resign, asked for by the line "resign" on in
//	err MSG                        a Campaign failed
func runElectionWorker(spec string, in io.Reader, out io.Writer) int {
	f := strings.Split(spec, "|")
	lease, _ := time.ParseDuration(f[1])
	rdb := redis.NewClient(&redis.Options{Addr: f[0]})
	c, err := New(rdb, &Options{WatchdogTimeout: lease, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	e := c.GetElection(f[2])
	w := bufio.NewWriter(out)
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
		mu.Unlock()
	}
	resign := make(chan struct{}, 1)
	go func() {
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if sc.Text() == "resign" {
				select {
				case resign <- struct{}{}:
				default:
				}
			}
		}
		os.Exit(0) // the test ended
	}()
	ctx := context.Background()
	for {
		inv := history.Now()
		lead, err := e.Campaign(ctx, f[3])
		ret := history.Now()
		if err != nil {
			say("err %s", strings.ReplaceAll(err.Error(), "\n", " "))
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case <-resign: // asked of an earlier leadership
		default:
		}
		term := lead.Term()
		say("lead %d %d %d %d", term, lead.since.UnixNano(), inv, ret)
		tick := time.NewTicker(2 * time.Millisecond)
	leading:
		for {
			select {
			case <-resign:
				inv := history.Now()
				err := lead.Resign(ctx)
				say("resign %d %d %d %v", term, inv, history.Now(), err == nil)
				break leading
			case <-tick.C:
				t := history.Now()
				if err := lead.Err(); err != nil {
					say("end %d %d %s", term, history.Now(), strings.ReplaceAll(errClass(err), " ", "_"))
					break leading
				}
				say("act %d %d", term, t)
			}
		}
		tick.Stop()
	}
}

// candidate is an election worker process started by the test.
type candidate struct {
	id  string
	cmd *exec.Cmd
	in  io.WriteCloser
}

// electionLog gathers what every candidate process reported.
type electionLog struct {
	mu      sync.Mutex
	terms   map[int64]*history.Term
	resigns [][2]int64 // term, Resign's invocation
	errs    int
	leads   chan history.Term // every lead line, as read
}

func (g *electionLog) read(id string, r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		n := func(i int) int64 {
			if i >= len(f) {
				return 0
			}
			v, _ := strconv.ParseInt(f[i], 10, 64)
			return v
		}
		g.mu.Lock()
		switch {
		case len(f) == 5 && f[0] == "lead":
			// The term began at its acquisition: the term itself is the
			// server clock then, in µs (max(previous + 1, clock)), unless
			// the announcement's clock reads earlier.
			t := &history.Term{Owner: id, Term: n(1), Start: min(n(2), n(1)*1000)}
			g.terms[t.Term] = t
			g.leads <- *t
		case len(f) == 3 && f[0] == "act":
			if t := g.terms[n(1)]; t != nil {
				t.LastAct = max(t.LastAct, n(2))
				t.Acts++
			}
		case len(f) == 4 && f[0] == "end":
			if t := g.terms[n(1)]; t != nil {
				t.End = n(2)
			}
		case len(f) == 5 && f[0] == "resign":
			if t := g.terms[n(1)]; t != nil {
				t.End = n(2)
				g.resigns = append(g.resigns, [2]int64{n(1), n(2)})
			}
		case len(f) > 0 && f[0] == "err":
			g.errs++
		}
		g.mu.Unlock()
	}
}

// startCandidate starts candidate id; it is killed when the test ends.
func startCandidate(t *testing.T, g *electionLog, addr, name, id string, lease time.Duration) *candidate {
	t.Helper()
	cmd, in, out := redistest.Reexec(t, fmt.Sprintf("%s=%s|%v|%s|%s", electionWorkerEnv, addr, lease, name, id))
	go g.read(id, out)
	return &candidate{id: id, cmd: cmd, in: in}
}

// Candidates in separate processes campaign under kill -9 of the leader,
// SIGSTOP of the leader for twice its lease, connection cuts (CLIENT KILL
// of every command and pub/sub connection) and resignations. The recorded
// history has no leader acting after a later term started, and terms rise
// in the order they start. It reports the failover time after a kill or a
// pause (bounded by lease + one renewal interval, plus the wake-up) and the
// hand-over latency of a resignation.
func TestElectionProcessHistory(t *testing.T) {
	addr := redistest.Shared(t).Addr()
	rdb := sharedRedis(t)
	ctx := testCtx(t, 5*time.Minute)
	name := electionName(t, rdb)
	const lease = time.Second
	rounds := 24
	if testing.Short() {
		rounds = 8
	}
	g := &electionLog{terms: make(map[int64]*history.Term), leads: make(chan history.Term, 1<<12)}
	byID := make(map[string]*candidate)
	next := 0
	spawn := func() {
		next++
		id := fmt.Sprintf("c%d", next)
		byID[id] = startCandidate(t, g, addr, name, id, lease)
	}
	for range 3 {
		spawn()
	}
	faults := []string{"resign", "kill", "stop", "cut"}
	var plan []string
	for i := range rounds {
		plan = append(plan, faults[i%len(faults)])
	}
	rand.Shuffle(len(plan), func(i, j int) { plan[i], plan[j] = plan[j], plan[i] })

	var current history.Term
	// nextLeader waits for a leadership with a term above current's.
	nextLeader := func(what string) history.Term {
		t.Helper()
		timeout := time.After(30 * time.Second)
		for {
			select {
			case ld := <-g.leads:
				if ld.Term > current.Term {
					current = ld
					return ld
				}
			case <-timeout:
				t.Fatalf("no new leader within 30s after %s", what)
			}
		}
	}
	var failovers, handovers []time.Duration
	nextLeader("start")
	for _, fault := range plan {
		time.Sleep(time.Duration(20+rand.IntN(80)) * time.Millisecond) // the leader acts
		victim := byID[current.Owner]
		switch fault {
		case "resign":
			fmt.Fprintln(victim.in, "resign")
			nextLeader("a resignation")
		case "kill":
			at := history.Now()
			victim.cmd.Process.Kill()
			ld := nextLeader("kill -9")
			failovers = append(failovers, time.Duration(ld.Start-at))
			delete(byID, victim.id)
			spawn()
		case "stop":
			at := history.Now()
			victim.cmd.Process.Signal(syscall.SIGSTOP)
			ld := nextLeader("SIGSTOP")
			failovers = append(failovers, time.Duration(ld.Start-at))
			if d := 2*lease - time.Duration(history.Now()-at); d > 0 {
				time.Sleep(d) // paused for longer than the lease
			}
			victim.cmd.Process.Signal(syscall.SIGCONT)
		case "cut":
			rdb.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes")
			rdb.ClientKillByFilter(ctx, "TYPE", "pubsub")
			time.Sleep(lease / 2)
			// The leader may have survived the cut (its renewal got
			// through on a new connection) or not: either way, hand over.
			fmt.Fprintln(byID[current.Owner].in, "resign")
			nextLeader("a connection cut")
		}
	}
	time.Sleep(2 * lease) // resumed processes report their ends
	for _, c := range byID {
		c.cmd.Process.Kill()
	}
	time.Sleep(100 * time.Millisecond)

	g.mu.Lock()
	defer g.mu.Unlock()
	var terms []history.Term
	acts := 0
	for _, tm := range g.terms {
		terms = append(terms, *tm)
		acts += tm.Acts
	}
	overlaps, order := history.TermOverlaps(terms), history.TermOrder(terms)
	if len(overlaps) != 0 {
		t.Errorf("%d overlapping leaderships:\n%s", len(overlaps), strings.Join(overlaps, "\n"))
	}
	if len(order) != 0 {
		t.Errorf("%d term order violations:\n%s", len(order), strings.Join(order, "\n"))
	}
	if len(terms) < rounds+1 {
		t.Errorf("%d leaderships recorded; want at least %d", len(terms), rounds+1)
	}
	for _, r := range g.resigns {
		var succ *history.Term
		for _, tm := range g.terms {
			if tm.Term > r[0] && (succ == nil || tm.Term < succ.Term) {
				succ = tm
			}
		}
		if succ != nil {
			handovers = append(handovers, time.Duration(succ.Start-r[1]))
		}
	}
	t.Logf("SUMMARY fault=kill -9, SIGSTOP 2x lease, CLIENT KILL, resign; topology=single, 3 candidate processes (%d started); "+
		"ops=%d leaderships, %d acts, %d resigns, %d campaign errors; violations=%d overlaps, %d term order; "+
		"failover (lease %v, renewal every %v) %s; resign hand-over %s",
		next, len(terms), acts, len(g.resigns), g.errs, len(overlaps), len(order), lease, lease/3, quantiles(failovers), quantiles(handovers))
}

// quantiles describes durations: count, p50, p90 and max.
func quantiles(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("n=%d p50=%v p90=%v max=%v", len(s), q(0.5), q(0.9), s[len(s)-1].Round(10*time.Microsecond))
}
