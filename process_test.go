package redisson

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/fencing"
	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// lockWorkerEnv makes the test binary a lock worker (see runLockWorker)
// instead of running tests: "<redis addr>|<watchdog timeout>".
const lockWorkerEnv = "REDISSON_TEST_LOCKWORKER"

func init() {
	if spec := os.Getenv(lockWorkerEnv); spec != "" {
		os.Exit(runLockWorker(spec, os.Stdin, os.Stdout))
	}
}

// runLockWorker serves commands read line by line from in, answering each
// with one line on out (all times in milliseconds):
//
//	lock NAME WAIT LEASE  -> "ok TOKEN" | "no" | "err MSG"  (TryLock)
//	unlock NAME           -> "ok" | "err MSG"
//	ended NAME WAIT       -> "held" | "ended ERR"  (waits up to WAIT for Done)
//	read NAME, write NAME -> "read TOKEN", "write TOKEN": the worker's
//	                         read or write of the toy resource the test
//	                         process keeps, sent with the fencing token of
//	                         its latest acquisition
//	cycles KEYS GOROUTINES DURATION HOLD
//	                      -> one "op JSON" line per recorded call, then
//	                         "done": lock cycles on keys KEYS:0..
func runLockWorker(spec string, in io.Reader, out io.Writer) int {
	addr, wd, _ := strings.Cut(spec, "|")
	watchdog, _ := time.ParseDuration(wd)
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	c, err := New(rdb, &Options{WatchdogTimeout: watchdog})
	if err != nil {
		fmt.Fprintln(out, "err", err)
		return 1
	}
	defer c.Close()
	ctx := context.Background()
	locks := make(map[string]*Lock)
	lock := func(name string) *Lock {
		if locks[name] == nil {
			locks[name] = c.GetLock(name)
		}
		return locks[name]
	}
	ms := func(s string) time.Duration { n, _ := strconv.Atoi(s); return time.Duration(n) * time.Millisecond }
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		l := lock(f[1])
		switch f[0] {
		case "lock":
			ok, err := l.TryLock(ctx, ms(f[2]), ms(f[3]))
			switch {
			case err != nil:
				fmt.Fprintln(out, "err", err)
			case ok:
				fmt.Fprintln(out, "ok", l.Token())
			default:
				fmt.Fprintln(out, "no")
			}
		case "unlock":
			if err := l.Unlock(ctx); err != nil {
				fmt.Fprintln(out, "err", err)
			} else {
				fmt.Fprintln(out, "ok")
			}
		case "ended":
			select {
			case <-l.Done():
				fmt.Fprintln(out, "ended", l.Err())
			case <-time.After(ms(f[2])):
				fmt.Fprintln(out, "held")
			}
		case "read", "write":
			fmt.Fprintln(out, f[0], l.Token())
		case "cycles":
			n, _ := strconv.Atoi(f[2])
			runCtx, cancel := context.WithTimeout(ctx, ms(f[3]))
			w := &workload{rec: &history.Recorder{}, wait: 2 * time.Second, hold: ms(f[4])}
			for i := range 3 {
				w.keys = append(w.keys, fmt.Sprintf("%s:%d", f[1], i))
			}
			done := make(chan struct{})
			for range n {
				go func() { w.lockLoop(runCtx, c); done <- struct{}{} }()
			}
			for range n {
				<-done
			}
			cancel()
			enc := json.NewEncoder(out)
			for _, op := range w.rec.Ops() {
				fmt.Fprint(out, "op ")
				enc.Encode(op)
			}
			fmt.Fprintln(out, "done", w.errSummary())
		}
	}
	return 0
}

// worker is a lock worker process started by a test.
type worker struct {
	t    testing.TB
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	name string
}

// startWorker starts a lock worker process on the Redis at addr; it is
// killed when the test ends.
func startWorker(t testing.TB, addr string, watchdog time.Duration, name string) *worker {
	t.Helper()
	cmd, in, out := redistest.Reexec(t, lockWorkerEnv+"="+addr+"|"+watchdog.String())
	return &worker{t: t, cmd: cmd, in: in, out: bufio.NewReader(out), name: name}
}

// send writes one command line.
func (w *worker) send(format string, args ...any) {
	w.t.Helper()
	if _, err := fmt.Fprintf(w.in, format+"\n", args...); err != nil {
		w.t.Fatalf("%s: send: %v", w.name, err)
	}
}

// line reads one answer line (the worker answers within the test's time;
// a dead worker gives EOF).
func (w *worker) line() string {
	w.t.Helper()
	s, err := w.out.ReadString('\n')
	if err != nil {
		w.t.Fatalf("%s: read: %v (got %q)", w.name, err, s)
	}
	return strings.TrimSpace(s)
}

// do sends a command and returns its answer.
func (w *worker) do(format string, args ...any) string {
	w.t.Helper()
	w.send(format, args...)
	return w.line()
}

// mustLock makes the worker take the lock and returns its token.
func (w *worker) mustLock(name string, wait time.Duration) int64 {
	w.t.Helper()
	ans := w.do("lock %s %d 0", name, wait.Milliseconds())
	tok, ok := strings.CutPrefix(ans, "ok ")
	if !ok {
		w.t.Fatalf("%s: lock %s = %q; want ok TOKEN", w.name, name, ans)
	}
	n, _ := strconv.ParseInt(tok, 10, 64)
	return n
}

func (w *worker) signal(sig syscall.Signal) {
	w.t.Helper()
	if err := w.cmd.Process.Signal(sig); err != nil {
		w.t.Fatalf("%s: %v: %v", w.name, sig, err)
	}
}

// A holder process killed with SIGKILL leaves its lock to expire with its
// lease; a waiter in another process, already waiting, then acquires it
// with a higher fencing token.
func TestProcessHolderKilledWaiterProcessAcquires(t *testing.T) {
	addr := redistest.Shared(t).Addr()
	rdb := sharedRedis(t)
	name := uniqueName(t, rdb)
	const lease = time.Second
	holder := startWorker(t, addr, lease, "holder")
	waiter := startWorker(t, addr, lease, "waiter")
	t1 := holder.mustLock(name, 0)
	waiter.send("lock %s 30000 0", name) // waits
	time.Sleep(2 * lease)                // renewed while alive
	if n, _ := rdb.Exists(context.Background(), name).Result(); n != 1 {
		t.Fatal("live holder's lock not kept by its watchdog")
	}
	holder.signal(syscall.SIGKILL)
	killed := time.Now()
	ans := waiter.line()
	took := time.Since(killed)
	tok, ok := strings.CutPrefix(ans, "ok ")
	if !ok {
		t.Fatalf("waiter process: %q; want ok TOKEN", ans)
	}
	if t2, _ := strconv.ParseInt(tok, 10, 64); t2 <= t1 {
		t.Fatalf("waiter's token %d; want above the killed holder's %d", t2, t1)
	}
	if ans := waiter.do("unlock %s", name); ans != "ok" {
		t.Fatalf("waiter unlock: %q", ans)
	}
	t.Logf("SUMMARY fault=SIGKILL holder process; topology=single, 2 processes; ops=2 acquires; violations=0; errors=none; recovery=%v (lease %v)",
		took.Round(time.Millisecond), lease)
}

// token parses the answer "<verb> TOKEN".
func (w *worker) token(verb, name string) int64 {
	w.t.Helper()
	ans := w.do("%s %s", verb, name)
	tok, ok := strings.CutPrefix(ans, verb+" ")
	if !ok {
		w.t.Fatalf("%s: %s = %q", w.name, verb, ans)
	}
	n, _ := strconv.ParseInt(tok, 10, 64)
	return n
}

// A holder process stopped with SIGSTOP for longer than its lease loses the
// lock: a waiter process then acquires it with a higher token, and once
// resumed the stale holder reports ErrLeaseLost. Both did a
// read-modify-write (increment) of a toy resource, the stale one writing
// after its resumption: a resource that checks tokens only on writes
// accepts the stale write and loses an increment (two writes accepted, the
// value is 1), while one that checks reads as well refuses it (one write
// accepted, value 1, and the stale holder is told).
func TestProcessPausedHolderFencedOff(t *testing.T) {
	addr := redistest.Shared(t).Addr()
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	const lease = time.Second
	stale := startWorker(t, addr, lease, "stale")
	next := startWorker(t, addr, lease, "next")
	writeOnly, readChecked := fencing.New(false), fencing.New(true)
	type reads struct{ w, r int64 }
	read := func(w *worker) (token int64, got reads) {
		token = w.token("read", name)
		var err error
		if got.w, err = writeOnly.Read(token); err != nil {
			t.Fatalf("%s: write-checking resource refused a read: %v", w.name, err)
		}
		if got.r, err = readChecked.Read(token); err != nil {
			t.Fatalf("%s: read with token %d refused: %v", w.name, token, err)
		}
		return token, got
	}

	t1 := stale.mustLock(name, 0)
	tok, staleRead := read(stale)
	if tok != t1 {
		t.Fatalf("read sent token %d; want the lock's %d", tok, t1)
	}
	stale.signal(syscall.SIGSTOP)
	stopped := time.Now()
	eventually(t, 10*lease, "paused holder's lock expired", func() bool {
		return rdb.Exists(ctx, name).Val() == 0
	})
	expired := time.Since(stopped)
	t2 := next.mustLock(name, 10*time.Second)
	if t2 <= t1 {
		t.Fatalf("next holder's token %d; want above %d", t2, t1)
	}
	_, nextRead := read(next)

	stale.signal(syscall.SIGCONT)
	staleTok := stale.token("write", name) // the write it was about to do
	if err := writeOnly.Write(staleTok, staleRead.w+1); err != nil {
		t.Fatalf("write-checking resource refused the stale write: %v; want it accepted (nobody wrote since)", err)
	}
	if err := readChecked.Write(staleTok, staleRead.r+1); !errors.Is(err, fencing.ErrStaleToken) {
		t.Fatalf("read-checking resource: stale write with token %d = %v; want ErrStaleToken", staleTok, err)
	}
	if err := writeOnly.Write(t2, nextRead.w+1); err != nil {
		t.Fatal(err)
	}
	if err := readChecked.Write(t2, nextRead.r+1); err != nil {
		t.Fatal(err)
	}
	if v, n := writeOnly.Value(); v != 1 || n != 2 {
		t.Fatalf("write-checking resource: value %d after %d accepted increments; want the lost update (1 after 2)", v, n)
	}
	if v, n := readChecked.Value(); v != 1 || n != 1 {
		t.Fatalf("read-checking resource: value %d after %d accepted increments; want 1 after 1", v, n)
	}
	if ans := stale.do("ended %s 5000", name); !strings.Contains(ans, ErrLeaseLost.Error()) {
		t.Fatalf("resumed holder: %q; want ended with ErrLeaseLost", ans)
	}
	if ans := stale.do("unlock %s", name); !strings.HasPrefix(ans, "err") {
		t.Fatalf("stale holder unlock = %q; want an error", ans)
	}
	if ans := next.do("unlock %s", name); ans != "ok" {
		t.Fatalf("next holder unlock = %q", ans)
	}
	t.Logf("SUMMARY fault=SIGSTOP holder process > lease; topology=single, 2 processes; ops=2 acquires, 4 reads, 4 writes; violations=0 (read-checking resource), 1 lost update (write-only checking); errors=ErrLeaseLost to the stale holder, ErrStaleToken from the resource; recovery=%v (lease %v)",
		expired.Round(time.Millisecond), lease)
}
