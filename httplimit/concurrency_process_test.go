package httplimit

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// instanceEnv makes the test binary a server instance (see runInstance)
// instead of running tests: "<redis addr>|<name>|<limit>|<lease>".
const instanceEnv = "HTTPLIMIT_TEST_INSTANCE"

func init() {
	if spec := os.Getenv(instanceEnv); spec != "" {
		os.Exit(runInstance(spec, os.Stdout))
	}
	if spec := os.Getenv(idemInstanceEnv); spec != "" {
		os.Exit(runIdemInstance(spec, os.Stdout))
	}
}

// runInstance serves HTTP on a free loopback port behind the concurrency
// limit and writes to out "addr HOST:PORT", then for every admitted request
// "in ID T" as its handler starts and "out ID T" as it ends (Unix ns). The
// handler sleeps for the query's d milliseconds.
func runInstance(spec string, out io.Writer) int {
	f := strings.Split(spec, "|")
	limit, _ := strconv.ParseInt(f[2], 10, 64)
	lease, _ := time.ParseDuration(f[3])
	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: f[0]}), &redisson.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	var mu sync.Mutex
	w := bufio.NewWriter(out)
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(w, format+"\n", args...)
		w.Flush()
		mu.Unlock()
	}
	var seq atomic.Int64
	h := http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		id := seq.Add(1)
		say("in %d %d", id, history.Now())
		ms, _ := strconv.Atoi(r.URL.Query().Get("d"))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		say("out %d %d", id, history.Now())
	})
	// Fail closed: a request served without a permit (fail open, when a
	// call to Redis fails or outlasts Timeout) is not counted by the limit.
	mw, err := NewConcurrency(c, f[1], limit, &ConcurrencyOptions{Lease: lease, FailClosed: true,
		OnError: func(_ *http.Request, err error) { say("error %s", strings.ReplaceAll(err.Error(), " ", "_")) }})
	return serveInstance(out, say, mw, err, h)
}

// serveInstance serves h behind mw (unless err, the middleware's
// constructor's) on a free loopback port, after saying "addr HOST:PORT".
// It returns the process's exit code.
func serveInstance(out io.Writer, say func(format string, args ...any), mw func(http.Handler) http.Handler, err error, h http.Handler) int {
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	say("addr %s", ln.Addr())
	http.Serve(ln, mw(h))
	return 0
}

// instance is a server process started by the test.
type instance struct {
	id     string
	cmd    *exec.Cmd
	addr   string
	dead   atomic.Int64   // when it was found dead after kill (Unix ns)
	gone   chan struct{}  // closed once dead is set
	reader sync.WaitGroup // the goroutine reading its lines
}

// kill kills the instance and waits until it is gone: its requests in
// flight end no later than the time recorded, which its reader gives them
// as their end (they never print "out").
func (in *instance) kill() {
	in.cmd.Process.Signal(syscall.SIGKILL)
	in.cmd.Process.Wait()
	in.dead.Store(history.Now())
	close(in.gone)
}

// startInstance starts instance id, recording its requests into rec; it
// is killed when the test ends.
func startInstance(t *testing.T, rec *history.Recorder, errs *atomic.Int64, spec, id string) *instance {
	t.Helper()
	cmd, _, out := redistest.Reexec(t, instanceEnv+"="+spec)
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "addr ") {
		t.Fatalf("instance %s: first line %q", id, sc.Text())
	}
	in := &instance{id: id, cmd: cmd, addr: strings.TrimPrefix(sc.Text(), "addr "), gone: make(chan struct{})}
	in.reader.Add(1)
	go func() {
		defer in.reader.Done()
		open := map[string]bool{}
		defer func() {
			// EOF: the process died; kill tells when it was gone.
			select {
			case <-in.gone:
			case <-time.After(10 * time.Second):
				t.Errorf("instance %s ended without being killed", id)
				in.dead.Store(history.Now())
			}
			for owner := range open {
				rec.SetLost(owner, "k", in.dead.Load())
			}
		}()
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 2 && f[0] == "error" {
				errs.Add(1)
				continue
			}
			if len(f) != 3 {
				continue // a line cut by kill -9
			}
			at, _ := strconv.ParseInt(f[2], 10, 64)
			owner := id + "/" + f[1]
			switch f[0] {
			case "in":
				open[owner] = true
				rec.Add(history.Op{Owner: owner, Key: "k", Kind: history.Acquire, OK: true, Invoke: at, Return: at})
			case "out":
				delete(open, owner)
				rec.Add(history.Op{Owner: owner, Key: "k", Kind: history.Release, OK: true, Invoke: at, Return: at})
			}
		}
	}()
	return in
}

// Three instance processes behind one concurrency limit of 3, loaded by 12
// clients, one instance killed with SIGKILL (with requests in flight, whose
// permits it never releases) and restarted every 1.5 s: the recorded
// history never has more than 3 requests in their handlers at once, and
// the leaked permits all come back within their lease.
func TestConcurrencyProcessHistory(t *testing.T) {
	addr := redistest.Shared(t).Addr()
	c, rdb := newRedisson(t)
	name := concName(t, rdb)
	const limit, lease = 3, time.Second
	spec := fmt.Sprintf("%s|%s|%d|%v", addr, name, limit, lease)
	rec := &history.Recorder{}
	var errs atomic.Int64 // calls to Redis that failed (or timed out): answered 503
	var mu sync.Mutex
	insts := make([]*instance, 3)
	started := 0
	for i := range insts {
		started++
		insts[i] = startInstance(t, rec, &errs, spec, fmt.Sprintf("i%d", started))
	}
	run := 8 * time.Second
	if testing.Short() {
		run = 3 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), run)
	defer cancel()
	hc := &http.Client{Timeout: 2 * time.Second}
	var ok, refused, failed atomic.Int64
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			for ctx.Err() == nil {
				mu.Lock()
				in := insts[rand.IntN(len(insts))]
				mu.Unlock()
				resp, err := hc.Get(fmt.Sprintf("http://%s/?d=%d", in.addr, 1+rand.IntN(30)))
				if err != nil {
					failed.Add(1) // the instance was killed
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusOK:
					ok.Add(1)
				case http.StatusServiceUnavailable:
					refused.Add(1)
				default:
					t.Errorf("status %d", resp.StatusCode)
				}
			}
		})
	}
	var lastKill time.Time
	for tick := time.NewTicker(1500 * time.Millisecond); ; {
		select {
		case <-ctx.Done():
		case <-tick.C:
			i := rand.IntN(len(insts))
			victim := insts[i]
			victim.kill()
			lastKill = time.Now()
			victim.reader.Wait()
			started++
			next := startInstance(t, rec, &errs, spec, fmt.Sprintf("i%d", started))
			mu.Lock()
			insts[i] = next
			mu.Unlock()
			continue
		}
		tick.Stop()
		break
	}
	wg.Wait()
	for _, in := range insts {
		in.kill()
		in.reader.Wait()
	}
	lastKill = time.Now()
	holds, err := history.Holds(rec.Ops())
	if err != nil {
		t.Fatal(err)
	}
	bad := history.Overlaps(holds, limit)
	if len(bad) != 0 {
		t.Errorf("%d moments with more than %d requests in flight:\n%s", len(bad), limit, strings.Join(bad[:min(len(bad), 10)], "\n"))
	}
	if ok.Load() == 0 || refused.Load() == 0 {
		t.Errorf("%d served, %d refused; want some of each", ok.Load(), refused.Load())
	}
	// Every permit back: the released ones at once, the killed instances'
	// within their lease of the last kill.
	sem := c.GetPermitExpirableSemaphore(name + ":all")
	redistest.Eventually(t, 10*lease, "every permit back", func() bool {
		n, _ := sem.AvailablePermits(context.Background())
		return n == limit
	})
	t.Logf("SUMMARY fault=SIGKILL of an instance every 1.5s; topology=single, 3 instance processes (%d started), 12 clients; "+
		"ops=%d served, %d refused (503; %d of them for a failed or late call to Redis), %d failed (killed); holds=%d; violations=%d; all %d permits back %v after the last kill (lease %v; every instance is killed at the end)",
		started, ok.Load(), refused.Load(), errs.Load(), failed.Load(), len(holds), len(bad), limit, time.Since(lastKill).Round(time.Millisecond), lease)
}
