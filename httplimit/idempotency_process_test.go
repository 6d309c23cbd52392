package httplimit

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// idemInstanceEnv makes the test binary an idempotency server instance
// (see runIdemInstance, and init in concurrency_process_test.go):
// "<redis addr>|<name>|<lease>".
const idemInstanceEnv = "HTTPLIMIT_TEST_IDEM_INSTANCE"

// runIdemInstance serves HTTP on a free loopback port behind the
// idempotency middleware and writes to out "addr HOST:PORT", then "run
// PID" as each run of the handler starts. The handler sleeps for the
// query's d milliseconds (for ever with a header X-Hang), then answers 201 with a
// body and header unique to the run.
func runIdemInstance(spec string, out io.Writer) int {
	f := strings.Split(spec, "|")
	lease, _ := time.ParseDuration(f[2])
	c, err := redisson.New(redis.NewClient(&redis.Options{Addr: f[0], PoolSize: 50}), &redisson.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	var mu sync.Mutex
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", args...)
		mu.Unlock()
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		say("run %d", os.Getpid())
		if r.Header.Get("X-Hang") != "" {
			select {} // until killed
		}
		var ms int
		fmt.Sscan(r.URL.Query().Get("d"), &ms)
		time.Sleep(time.Duration(ms) * time.Millisecond)
		nonce := rand.Uint64()
		w.Header().Set("X-Run", fmt.Sprintf("%d-%d", os.Getpid(), nonce))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "order %d made by %d\x00", nonce, os.Getpid())
	})
	mw, err := NewIdempotency(c, f[1], &IdempotencyOptions{Lease: lease,
		OnError: func(_ *http.Request, err error) { say("error %s", strings.ReplaceAll(err.Error(), " ", "_")) }})
	return serveInstance(out, say, mw, err, h)
}

// idemInstance is an idempotency server process started by the test.
type idemInstance struct {
	cmd  *exec.Cmd
	addr string
	runs chan string // a line per run ("run PID"), errors ("error ...")
}

func startIdemInstance(t *testing.T, spec string) *idemInstance {
	t.Helper()
	cmd, _, out := redistest.Reexec(t, idemInstanceEnv+"="+spec)
	sc := bufio.NewScanner(out)
	if !sc.Scan() || !strings.HasPrefix(sc.Text(), "addr ") {
		t.Fatalf("instance: first line %q", sc.Text())
	}
	in := &idemInstance{cmd: cmd, addr: strings.TrimPrefix(sc.Text(), "addr "), runs: make(chan string, 10000)}
	go func() {
		for sc.Scan() {
			in.runs <- sc.Text()
		}
	}()
	return in
}

// drain returns the lines an instance wrote so far.
func (in *idemInstance) drain() []string {
	var lines []string
	for {
		select {
		case l := <-in.runs:
			lines = append(lines, l)
		default:
			return lines
		}
	}
}

// post sends one request with key to in.
func post(hc *http.Client, in *idemInstance, query, key string, hang bool) (int, string, string, error) {
	req, _ := http.NewRequest("POST", "http://"+in.addr+"/orders?"+query, strings.NewReader(`{"item":42}`))
	req.Header.Set("Idempotency-Key", key)
	if hang {
		req.Header.Set("X-Hang", "1")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("X-Run"), string(b), err
}

// 1,000 concurrent requests with one key, spread over three instance
// processes: the handler runs exactly once, and every request gets its
// response (status, header, body).
func TestIdempotencyProcessOnce(t *testing.T) {
	_, rdb := newRedisson(t)
	name := concName(t, rdb)
	spec := fmt.Sprintf("%s|%s|%v", redistest.Shared(t).Addr(), name, time.Second)
	insts := []*idemInstance{startIdemInstance(t, spec), startIdemInstance(t, spec), startIdemInstance(t, spec)}
	hc := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 400}}
	const n = 1000
	type answer struct {
		code      int
		run, body string
	}
	answers := make([]answer, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			code, run, body, err := post(hc, insts[i%3], "d=300", "order-1", false)
			if err != nil {
				t.Errorf("request %d: %v", i, err)
			}
			answers[i] = answer{code, run, body}
		})
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)
	var runs, errs []string
	for _, in := range insts {
		for _, l := range in.drain() {
			if strings.HasPrefix(l, "run ") {
				runs = append(runs, l)
			} else {
				errs = append(errs, l)
			}
		}
	}
	if len(runs) != 1 || len(errs) != 0 {
		t.Fatalf("runs %v, errors %v; want one run, no error", runs, errs)
	}
	differ := 0
	for i, a := range answers {
		if a != answers[0] {
			differ++
			if differ < 5 {
				t.Errorf("answer %d: %+v, want %+v", i, a, answers[0])
			}
		}
	}
	if answers[0].code != http.StatusCreated || answers[0].run == "" || differ != 0 {
		t.Errorf("first answer %+v, %d answers differ", answers[0], differ)
	}
	t.Logf("SUMMARY %d requests, one key, 3 instance processes: %d run (%s), %d differing answers, all answered in %v (handler 300ms)",
		n, len(runs), runs[0], differ, took.Round(time.Millisecond))
}

// An instance killed (SIGKILL) while its handler runs leaves its key
// running until the lease ends: a request to another instance waits, then
// runs the handler itself, and later requests replay that run.
func TestIdempotencyProcessKilledRun(t *testing.T) {
	_, rdb := newRedisson(t)
	name := concName(t, rdb)
	const lease = time.Second
	spec := fmt.Sprintf("%s|%s|%v", redistest.Shared(t).Addr(), name, lease)
	a, b := startIdemInstance(t, spec), startIdemInstance(t, spec)
	hc := &http.Client{Timeout: 60 * time.Second}
	go post(hc, a, "d=1", "order-2", true) // fails when a is killed
	select {
	case l := <-a.runs:
		if !strings.HasPrefix(l, "run ") {
			t.Fatalf("instance a: %q", l)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("instance a never ran the handler")
	}
	a.cmd.Process.Signal(syscall.SIGKILL)
	a.cmd.Process.Wait()
	killed := time.Now()
	code, run, body, err := post(hc, b, "d=1", "order-2", false)
	took := time.Since(killed)
	if err != nil || code != http.StatusCreated {
		t.Fatalf("after the kill: %d %v", code, err)
	}
	for range 3 {
		c2, r2, b2, err := post(hc, b, "d=1", "order-2", false)
		if err != nil || c2 != code || r2 != run || b2 != body {
			t.Errorf("replay: %d %q %q %v, want %d %q %q", c2, r2, b2, err, code, run, body)
		}
	}
	lines := b.drain()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "run ") {
		t.Errorf("instance b wrote %q, want one run", lines)
	}
	// The key was freed by the end of the lease, not sooner: the record
	// was renewed until the kill, so the wait cannot be much below it.
	if took < lease/2 {
		t.Errorf("request after the kill ran after %v, before half the lease %v", took, lease)
	}
	t.Logf("SUMMARY handler killed mid-run (SIGKILL); the next request ran it %v after the kill (lease %v)", took.Round(time.Millisecond), lease)
}
