package redistest

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// goneWithin is how long a killed test binary's servers may take to die:
// the kernel signals them as the binary's last thread ends, so this is
// only slack for a loaded machine.
const goneWithin = 15 * time.Second

// TestServersDieWithTestBinary starts a child test binary that starts two
// servers, one of them from a thread that ends at once, and checks that both
// are running, then that both are gone soon after the child is killed with
// SIGKILL, panics as on go test's -timeout, or exits without cleaning up.
func TestServersDieWithTestBinary(t *testing.T) {
	ServerPath(t)
	for _, mode := range []string{"kill", "timeout", "exit"} {
		t.Run(mode, func(t *testing.T) {
			tmp := t.TempDir()
			errf, err := os.Create(filepath.Join(tmp, "stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer errf.Close()
			stderr := childStderr(errf.Name())
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), orphanChildEnv+"="+mode, "TMPDIR="+tmp)
			cmd.Stderr = errf
			stdin, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			t.Cleanup(func() {
				_ = cmd.Process.Kill()
				<-exited
			})
			lines := make(chan string, 1)
			go func() {
				line, _ := bufio.NewReader(stdout).ReadString('\n')
				lines <- line
				_, _ = bufio.NewReader(stdout).WriteTo(io.Discard)
				exited <- cmd.Wait()
			}()
			var line string
			select {
			case line = <-lines:
			case <-time.After(time.Minute):
				t.Fatalf("child printed no pids within a minute; stderr:\n%s", stderr)
			}
			pids := parsePids(t, line, stderr)
			starts := make([]string, len(pids))
			for i, pid := range pids {
				if starts[i] = processStart(pid); starts[i] == "" {
					t.Fatalf("server %d of the child is not running before the child ends; stderr:\n%s", pid, stderr)
				}
			}
			// A parent-death signal tied to the ended thread would have
			// killed the second server by now; it must still answer.
			for _, pid := range pids {
				if processStart(pid) == "" {
					t.Fatalf("server %d died while the child still runs", pid)
				}
			}
			if _, err := stdin.Write([]byte("go\n")); err != nil {
				t.Fatal(err)
			}
			if mode == "kill" {
				if err := cmd.Process.Kill(); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case err := <-exited:
				exited <- err // for the cleanup
				if err == nil {
					t.Fatalf("child exited with status 0; stderr:\n%s", stderr)
				}
			case <-time.After(time.Minute):
				t.Fatalf("child did not end within a minute")
			}
			deadline := time.Now().Add(goneWithin)
			for i, pid := range pids {
				for processStart(pid) == starts[i] {
					if time.Now().After(deadline) {
						killAll(pids, starts) // leave no orphan behind, even failing
						t.Fatalf("server %d still runs %v after its test binary ended (%s)", pid, goneWithin, mode)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
		})
	}
}

// killAll kills those of pids that still run with the recorded start times.
func killAll(pids []int, starts []string) {
	for i, pid := range pids {
		if processStart(pid) == starts[i] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestServerSurvivesStartingThread checks that a server started from a
// goroutine locked to a thread that then ends keeps running.
func TestServerSurvivesStartingThread(t *testing.T) {
	bin, _ := ServerPath(t)
	got := make(chan *Server, 1)
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
		s, err := newServer(bin, t.TempDir(), nil)
		if err != nil {
			errc <- err
			return
		}
		got <- s
	}()
	var s *Server
	select {
	case s = <-got:
	case err := <-errc:
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	time.Sleep(200 * time.Millisecond) // the thread has ended by now
	v, err := s.Do(context.Background(), "PING")
	if err != nil || v != "PONG" {
		t.Fatalf("PING after the starting thread ended = %v, %v; want PONG (running: %v)", v, err, s.Running())
	}
}

// TestSweepOrphans checks that the first launch's sweep kills a server whose
// recorded owner is gone, and leaves alone this process's servers and a
// server whose owner lives.
func TestSweepOrphans(t *testing.T) {
	bin, _ := ServerPath(t)
	mine := Start(t)

	// A process that has ended: its pid, with a start time it never had.
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(done.Process.Pid) + " 1\n"
	live := strconv.Itoa(os.Getpid()) + " " + processStart(os.Getpid()) + "\n"

	orphan := startUnowned(t, bin, dead)
	owned := startUnowned(t, bin, live)

	killed := sweepOrphans()
	if !slices.Contains(killed, orphan.Process.Pid) {
		t.Fatalf("sweepOrphans killed %v; want it to include the orphan %d", killed, orphan.Process.Pid)
	}
	for _, pid := range []int{owned.Process.Pid, mine.Pid()} {
		if slices.Contains(killed, pid) {
			t.Fatalf("sweepOrphans killed %d, whose owner lives", pid)
		}
	}
	if err := orphan.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("orphan's exit = %v; want killed", err)
	}
	if !mine.Running() {
		t.Fatal("the harness's own server stopped")
	}
}

// startUnowned starts a redis-server outside the harness (no parent-death
// signal) whose working directory holds owner as its owner file.
func startUnowned(t *testing.T, bin, owner string) *exec.Cmd {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(owner), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	// Wait until the server has its working directory (it answers PING).
	deadline := time.Now().Add(readyTimeout)
	for {
		v, err := do(context.Background(), "127.0.0.1:"+strconv.Itoa(port), "PING")
		if err == nil && v == "PONG" {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatalf("unowned server gave no PONG: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// childStderr shows the child's stderr, read from its file when printed.
type childStderr string

func (c childStderr) String() string {
	b, err := os.ReadFile(string(c))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func parsePids(t *testing.T, line string, stderr childStderr) []int {
	t.Helper()
	f := strings.Fields(line)
	if len(f) < 2 || f[0] != "pids" {
		t.Fatalf("child printed %q, want pids; stderr:\n%s", line, stderr)
	}
	var pids []int
	for _, s := range f[1:] {
		pid, err := strconv.Atoi(s)
		if err != nil || pid <= 0 {
			t.Fatalf("child printed %q", line)
		}
		pids = append(pids, pid)
	}
	return pids
}
