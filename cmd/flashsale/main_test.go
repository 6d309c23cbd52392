package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/redissontest"
	"go.uber.org/goleak"
)

func runSale(t *testing.T, cfg Config) *Result {
	t.Helper()
	mr, err := redissontest.StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Close()
	cfg.ProductID = t.Name()
	r, err := Run(context.Background(), cfg, clientFactory(mr.Addr(), cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", *r)
	// Keys without a TTL would stay forever on a real server.
	for _, k := range mr.Keys() {
		if mr.TTL(k) <= 0 {
			t.Errorf("key left behind: %s", k)
		}
	}
	return r
}

func TestLockedSaleDoesNotOversell(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := runSale(t, Config{
		Stock: 50, Instances: 2, Buyers: 16,
		Work: time.Millisecond, LockWait: 5 * time.Second, Duration: time.Minute,
	})
	if r.Stopped != "" {
		t.Fatalf("sale stopped early: %s", r.Stopped)
	}
	if r.Oversold != 0 || r.Sold != 50 || r.Left != 0 {
		t.Errorf("sold %d left %d oversold %d, want 50 0 0", r.Sold, r.Left, r.Oversold)
	}
	if !r.OK() {
		t.Errorf("invariant broken: %+v", *r)
	}
	if r.Errors != 0 {
		t.Errorf("%d errors, first: %s", r.Errors, r.FirstError)
	}
}

// The naive lock's lease (20ms) is far shorter than its business step (60ms):
// every lease expires mid-purchase, the next of the 12 spinning buyers gets in
// within a few ms and reads the same stock, so nearly every unit is sold twice.
// Overselling by at least one over 20 units is practically certain.
func TestNaiveSaleOversells(t *testing.T) {
	defer goleak.VerifyNone(t)
	r := runSale(t, Config{
		Stock: 20, Instances: 2, Buyers: 12, Naive: true,
		NaiveLease: 20 * time.Millisecond, NaiveWork: 60 * time.Millisecond,
		Duration: 30 * time.Second,
	})
	if r.Stopped != "" {
		t.Fatalf("sale stopped early: %s", r.Stopped)
	}
	if r.Sold <= 20 || r.Oversold == 0 || r.OK() {
		t.Errorf("naive lock did not oversell: sold %d left %d oversold %d", r.Sold, r.Left, r.Oversold)
	}
}

// Off a terminal (Live false) the progress bar is one line at the end, with
// no carriage returns: a log file does not get a frame per 100ms.
func TestProgressOffTerminalIsOneLine(t *testing.T) {
	var buf bytes.Buffer
	runSale(t, Config{
		Stock: 20, Instances: 2, Buyers: 4,
		Work: 20 * time.Millisecond, LockWait: 5 * time.Second, Duration: time.Minute,
		Progress: &buf,
	})
	out := buf.String()
	if strings.Contains(out, "\r") || strings.Count(out, "\n") != 1 || !strings.Contains(out, "20/20 sold") {
		t.Errorf("progress off a terminal = %q; want one line saying 20/20 sold, without \\r", out)
	}
	if f, err := os.CreateTemp(t.TempDir(), "log"); err == nil {
		defer f.Close()
		if isTerminal(f) {
			t.Error("isTerminal(a regular file) = true")
		}
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("FLASHSALE_RUN_MAIN") == "1" { // the command itself, for TestCommand*
		os.Args = append([]string{"flashsale"}, strings.Fields(os.Getenv("FLASHSALE_ARGS"))...)
		main()
	}
	os.Exit(m.Run())
}

// command returns the command (this test binary running main) with args.
func command(args string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "FLASHSALE_RUN_MAIN=1", "FLASHSALE_ARGS="+args)
	return cmd
}

// -metrics serves the redisson metrics in Prometheus text format during
// the sale and, once it is over, until SIGINT; the exit status stays the
// sale's.
func TestCommandMetrics(t *testing.T) {
	defer goleak.VerifyNone(t)
	cmd := command("-q -stock 30 -buyers 6 -instances 2 -metrics 127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var url string
	var out strings.Builder
	for lines.Scan() {
		out.WriteString(lines.Text() + "\n")
		if u, ok := strings.CutPrefix(lines.Text(), "metrics: http://"); ok && url == "" {
			url = "http://" + u
		}
		if strings.HasPrefix(lines.Text(), "metrics: the sale is over") {
			break
		}
	}
	if url == "" || !strings.Contains(out.String(), "OK: nothing oversold") {
		t.Fatalf("no metrics address, or the sale did not end well:\n%s\nstderr:\n%s", out.String(), stderr.String())
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	http.DefaultClient.CloseIdleConnections()
	page := string(body)
	for _, want := range []string{
		"# TYPE redisson_lock_acquire_duration_seconds histogram",
		`redisson_object_kind="lock"`, `redisson_outcome="acquired"`,
		"# TYPE redisson_lock_wait_duration_seconds histogram",
		"# TYPE redisson_lock_hold_duration_seconds histogram",
		`redisson_operation="lock.release"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if strings.Contains(page, "product:") {
		t.Error("/metrics names a lock: object names must not be metric attributes")
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", page)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() {
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit %v after SIGINT; want status 0 (the sale's)\nstderr:\n%s", err, stderr.String())
	}
}

// The README's first command, run as it is written from the repository's
// root, runs the demo to its OK line.
func TestReadmeDemoCommand(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## The two commands\n")
	if !ok {
		t.Fatal("README.md has no section \"The two commands\"")
	}
	_, after, ok = strings.Cut(after, "```sh\n")
	if !ok {
		t.Fatal("no ```sh block in \"The two commands\"")
	}
	first, _, _ := strings.Cut(after, "\n")
	line, _, _ := strings.Cut(first, "#")
	line = strings.TrimSpace(line)
	if line != "make demo" {
		t.Errorf("README's first command is %q; this test expects the demo's", line)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	if !strings.Contains(string(out), "OK: nothing oversold") {
		t.Errorf("%s printed no OK line:\n%s", line, out)
	}
}
