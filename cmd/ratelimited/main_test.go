package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv("RATELIMITED_RUN_MAIN") == "1" { // the command itself, for TestCommand*
		os.Args = append([]string{"ratelimited"}, strings.Fields(os.Getenv("RATELIMITED_ARGS"))...)
		main()
	}
	redistest.Main(m)
}

// command returns the command (this test binary running main) with args.
func command(t *testing.T, args string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RATELIMITED_RUN_MAIN=1", "RATELIMITED_ARGS="+args)
	return cmd
}

// The doc comment's example, -demo 24 with the default 10 per minute,
// shows each client's last two requests refused, and exits 0.
func TestCommandDemoShows429(t *testing.T) {
	out, err := command(t, "-demo 24 -timeout 10s").CombinedOutput()
	if err != nil {
		t.Fatalf("-demo 24: %v\n%s", err, out)
	}
	if n := strings.Count(string(out), " 429 "); n != 4 {
		t.Errorf("-demo 24: %d responses 429; want 4 (2 per client)\n%s", n, out)
	}
}

// SIGTERM (docker stop, Kubernetes) stops the server gracefully, exit
// status 0, as SIGINT does.
func TestCommandSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := command(t, "-addr 127.0.0.1:0")
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(stdout)
		if !lines.Scan() || !strings.HasPrefix(lines.Text(), "ratelimited: http://") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("first line %q; want the listening address", lines.Text())
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		var rest strings.Builder
		for lines.Scan() {
			rest.WriteString(lines.Text() + "\n")
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%v: exit %v; want status 0", sig, err)
		}
		if !strings.Contains(rest.String(), "shutting down") {
			t.Errorf("%v: output %q; want it to say it is shutting down", sig, rest.String())
		}
	}
}

// The demo's handler limits / per client IP and leaves /healthz alone.
func TestHandler(t *testing.T) {
	for _, algo := range []string{"fixed", "gcra"} {
		t.Run(algo, func(t *testing.T) {
			rdb := redistest.Shared(t).Client(t)
			c, err := redisson.New(rdb, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			name := fmt.Sprintf("ratelimited-test:%s:%d", algo, time.Now().UnixNano())
			t.Cleanup(func() {
				for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
					rdb.Del(context.Background(), name+":{"+ip+"}")
				}
			})
			// A decision that ran out of its 50ms default on a loaded machine would be
			// served (fail open) and read as a limiter that does not limit.
			h, err := Handler(c, Config{Algo: algo, Limit: 3, Window: time.Hour, Name: name, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			get := func(path, remote string) int {
				r := httptest.NewRequest(http.MethodGet, path, nil)
				r.RemoteAddr = remote
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code
			}
			for i := range 5 {
				want := http.StatusOK
				if i >= 3 {
					want = http.StatusTooManyRequests
				}
				if got := get("/", "192.0.2.1:1000"); got != want {
					t.Errorf("request %d: %d; want %d", i, got, want)
				}
			}
			if got := get("/healthz", "192.0.2.1:1000"); got != http.StatusOK {
				t.Errorf("/healthz over the limit: %d; want 200", got)
			}
			if got := get("/", "192.0.2.2:1000"); got != http.StatusOK {
				t.Errorf("another client: %d; want 200", got)
			}
		})
	}
	if _, err := Handler(nil, Config{Algo: "leaky"}); err == nil {
		t.Error("unknown algorithm accepted")
	}
}

// -metrics serves the redisson metrics in Prometheus text format: the
// limiter's decisions, allowed and denied, and the client's gauges.
func TestCommandMetrics(t *testing.T) {
	name := fmt.Sprintf("ratelimited-metrics:%d", time.Now().UnixNano())
	cmd := command(t, "-addr 127.0.0.1:0 -metrics 127.0.0.1:0 -limit 2 -timeout 10s -trust 127.0.0.1 -name "+name)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var serverURL, metricsURL string
	for metricsURL == "" && lines.Scan() {
		if rest, ok := strings.CutPrefix(lines.Text(), "ratelimited: http://"); ok {
			serverURL = "http://" + strings.Fields(rest)[0]
		}
		if u, ok := strings.CutPrefix(lines.Text(), "ratelimited: metrics at "); ok {
			metricsURL = u
		}
	}
	if serverURL == "" || metricsURL == "" {
		t.Fatalf("no server or metrics address announced (server %q, metrics %q)", serverURL, metricsURL)
	}
	for range 3 {
		req, _ := http.NewRequest(http.MethodGet, serverURL, nil)
		req.Header.Set("X-Forwarded-For", "198.51.100.7")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	resp, err := http.Get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q; want Prometheus text (text/plain)", ct)
	}
	page := string(body)
	for _, want := range []string{
		`redisson_decision="allowed"`, `redisson_decision="denied"`, "# TYPE redisson_ratelimit_decisions_total counter",
		"# TYPE redisson_leases_held gauge", "redisson_operation_duration_seconds_bucket{",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	for _, l := range strings.Split(page, "\n") {
		if !strings.HasPrefix(l, "redisson_ratelimit_decisions_total{") {
			continue
		}
		switch {
		case strings.Contains(l, `redisson_decision="allowed"`) && !strings.HasSuffix(l, " 2"):
			t.Errorf("allowed: %q; want 2", l)
		case strings.Contains(l, `redisson_decision="denied"`) && !strings.HasSuffix(l, " 1"):
			t.Errorf("denied: %q; want 1", l)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit %v; want status 0", err)
	}
}
