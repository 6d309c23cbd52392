package redisson

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// adderWorkerEnv makes the test binary an adder instance (see
// runAdderWorker) instead of running tests: "<redis addr>|<name>|<flush>".
const adderWorkerEnv = "REDISSON_TEST_ADDERWORKER"

func init() {
	if spec := os.Getenv(adderWorkerEnv); spec != "" {
		os.Exit(runAdderWorker(spec, os.Stdin, os.Stdout))
	}
}

// runAdderWorker holds one LongAdder instance; for each line "add N" on in
// it increments N times and writes "added TOTAL". It writes "ready" once its
// subscription is confirmed.
func runAdderWorker(spec string, in io.Reader, out io.Writer) int {
	f := strings.Split(spec, "|")
	flush, _ := time.ParseDuration(f[2])
	c, err := New(redis.NewClient(&redis.Options{Addr: f[0]}), &Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	a := c.GetLongAdder(f[1], WithFlushInterval(flush))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	_, err = a.Sum(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	fmt.Fprintln(out, "ready")
	total := 0
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		n, _ := strconv.Atoi(strings.TrimPrefix(sc.Text(), "add "))
		for range n {
			a.Increment()
		}
		total += n
		fmt.Fprintln(out, "added", total)
	}
	return 0
}

// TestAdderProcessCrash kills adder processes with SIGKILL: in Redisson's
// mode the dead instance's part leaves the sum; in flushed mode what was
// flushed stays, and the sum is exactly the flushed part (the lost part is
// at most what the last interval added).
func TestAdderProcessCrash(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := testCtx(t, 2*time.Minute)
	c := newClient(t, rdb, nil)
	start := func(name string, flush time.Duration) (kill func(), send func(string) string) {
		cmd, in, out := redistest.Reexec(t, fmt.Sprintf("%s=%s|%s|%v", adderWorkerEnv, srv.Addr(), name, flush))
		lines := bufio.NewScanner(out)
		next := func() string {
			if !lines.Scan() {
				t.Fatalf("worker ended: %v", lines.Err())
			}
			return lines.Text()
		}
		if l := next(); l != "ready" {
			t.Fatalf("worker said %q", l)
		}
		return func() { cmd.Process.Kill(); cmd.Wait() },
			func(line string) string { fmt.Fprintln(in, line); return next() }
	}
	// sum retries while Redis still counts the dead process's subscription.
	sum := func(a *LongAdder) int64 {
		for {
			short, cancel := context.WithTimeout(ctx, time.Second)
			n, err := a.Sum(short)
			cancel()
			if err == nil {
				return n
			}
			if ctx.Err() != nil {
				t.Fatalf("Sum: %v", err)
			}
		}
	}

	// Redisson's mode: the part lives in the process.
	mine := c.GetLongAdder("plain")
	t.Cleanup(func() { mine.Close() })
	kill, send := start("plain", 0)
	if l := send("add 1000"); l != "added 1000" {
		t.Fatalf("worker said %q", l)
	}
	mine.Add(7)
	if got := sum(mine); got != 1007 {
		t.Fatalf("Sum with the worker alive = %d; want 1007", got)
	}
	kill()
	if got := sum(mine); got != 7 {
		t.Fatalf("Sum after kill -9 = %d; want 7 (the dead part is gone, as in Redisson)", got)
	}

	// Flushed mode: what was flushed survives.
	flushed := c.GetLongAdder("flushed", WithFlushInterval(time.Hour))
	t.Cleanup(func() { flushed.Close() })
	kill, send = start("flushed", 50*time.Millisecond)
	if l := send("add 100000"); l != "added 100000" {
		t.Fatalf("worker said %q", l)
	}
	eventually(t, 10*time.Second, "the worker flushed", func() bool {
		return rdb.Get(ctx, "{flushed}:adder-flushed").Val() == "100000"
	})
	if l := send("add 500"); l != "added 100500" {
		t.Fatalf("worker said %q", l)
	}
	kill()
	f, _ := rdb.Get(ctx, "{flushed}:adder-flushed").Int64()
	if f != 100000 && f != 100500 {
		t.Fatalf("flushed part after kill -9 = %d; want 100000 or 100500", f)
	}
	if got := sum(flushed); got != f {
		t.Fatalf("Sum after kill -9 = %d; want the flushed part %d", got, f)
	}
}
