package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/childproc"
)

const (
	readyTimeout = 10 * time.Second // wait for PING after (re)start
	stopTimeout  = 5 * time.Second  // SIGTERM grace period before SIGKILL
	startTries   = 5                // ports tried when the server cannot bind
)

// Server is one redis-server child process listening on 127.0.0.1. Its
// methods are safe for concurrent use. Stopping or killing it more than once
// is harmless.
type Server struct {
	bin     string
	dir     string
	logPath string
	extra   func(port int) []string
	conf    string // config file passed first, if any (sentinels need one)
	port    int    // fixed once the first start succeeded

	life sync.Mutex // serializes start/stop/restart

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited and been waited for
}

// Start starts a redis-server on a free port of 127.0.0.1 with
// --bind 127.0.0.1 --save "" --appendonly no --protected-mode no
// --repl-diskless-sync-delay 0 (plus --shutdown-timeout 0 on Redis 7+) and
// --dir set to a fresh tb.TempDir(), followed by extraArgs (for example
// "--maxmemory", "10mb"). It waits until the server answers PING (failing the
// test with the server's log otherwise) and registers a tb.Cleanup that stops
// it. If the server cannot bind its port, a few other ports are tried. A
// server started with "--requirepass" counts as ready when it refuses PING
// with NOAUTH; its Client then needs the password in its options.
func Start(tb testing.TB, extraArgs ...string) *Server {
	tb.Helper()
	bin, _ := ServerPath(tb)
	args := append([]string(nil), extraArgs...)
	s, err := newServer(bin, tb.TempDir(), func(int) []string { return args })
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(s.Stop)
	return s
}

// newServer starts a server whose data and log live in dir; extra returns the
// additional arguments for a given port. The caller owns stopping it.
func newServer(bin, dir string, extra func(port int) []string) (*Server, error) {
	return launchNew(&Server{
		bin:     bin,
		dir:     dir,
		logPath: filepath.Join(dir, "redis-server.log"),
		extra:   extra,
	})
}

// launchNew starts s, not yet shared, on a free port, trying a few ports.
func launchNew(s *Server) (*Server, error) {
	var err error
	for try := 0; try < startTries; try++ {
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		var bindErr bool
		if bindErr, err = s.launch(); err == nil || !bindErr {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Addr returns the server address, "127.0.0.1:<port>".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the TCP port the server listens on.
func (s *Server) Port() int { return s.port }

// Dir returns the server's working directory (its --dir).
func (s *Server) Dir() string { return s.dir }

// Log returns the server's captured stdout/stderr (all runs, including
// restarts).
func (s *Server) Log() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", s.logPath, err)
	}
	return string(b)
}

// Client returns a go-redis client for the server, with opts applied to the
// options (Addr is preset). The client is closed by tb.Cleanup.
func (s *Server) Client(tb testing.TB, opts ...func(*redis.Options)) *redis.Client {
	tb.Helper()
	o := &redis.Options{Addr: s.Addr()}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Do sends one command on a fresh connection (RESP2, no goroutines) and
// returns the reply as string, int64, nil or []any; error replies are
// returned as RedisError. A 5 s timeout applies unless ctx has a deadline.
func (s *Server) Do(ctx context.Context, args ...string) (any, error) {
	return do(ctx, s.Addr(), args...)
}

// Pid returns the process ID of the server's current process, or 0 if it
// was never started.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Running reports whether the server process is alive (it may be paused).
func (s *Server) Running() bool {
	s.mu.Lock()
	done := s.done
	s.mu.Unlock()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Stop stops the server: SIGTERM (and SIGCONT, in case it is paused), then
// SIGKILL if it has not exited after 5 s. It returns once the process has
// been reaped. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.life.Lock()
	defer s.life.Unlock()
	s.stopLocked(true)
}

// Kill kills the server with SIGKILL (a crash, without shutdown) and waits
// for the process to exit. Killing a stopped server does nothing.
func (s *Server) Kill() {
	s.life.Lock()
	defer s.life.Unlock()
	s.stopLocked(false)
}

// Restart stops the server if it is running, deletes its RDB/AOF files and
// starts it again on the same port, waiting until it answers PING. The
// server comes back empty; a cluster node keeps its nodes-<port>.conf, so it
// rejoins its cluster with the same node ID and slots, but without data.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	s.life.Lock()
	defer s.life.Unlock()
	s.stopLocked(true)
	_ = os.Remove(filepath.Join(s.dir, "dump.rdb"))
	_ = os.Remove(filepath.Join(s.dir, "appendonly.aof"))
	_ = os.RemoveAll(filepath.Join(s.dir, "appendonlydir"))
	if err := s.relaunch(); err != nil {
		tb.Fatalf("redistest: restart %s: %v", s.Addr(), err)
	}
}

// relaunch starts the stopped server again on its port. The port was just
// released; it retries briefly in case it is still held. s.life must be
// held.
func (s *Server) relaunch() error {
	var err error
	for try := 0; try < startTries; try++ {
		var bindErr bool
		if bindErr, err = s.launch(); err == nil || !bindErr {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	return err
}

// CrashRestart kills the server with SIGKILL (a crash, without shutdown)
// and starts it again on the same port with its files kept, waiting until
// it answers PING: it comes back with what its persistence (for example
// --appendonly yes --appendfsync always) had written.
func (s *Server) CrashRestart(tb testing.TB) {
	tb.Helper()
	s.life.Lock()
	defer s.life.Unlock()
	s.stopLocked(false)
	if err := s.relaunch(); err != nil {
		tb.Fatalf("redistest: crash restart %s: %v", s.Addr(), err)
	}
}

// Pause suspends the server process with SIGSTOP: connections stay open but
// nothing is answered (a hung server). Resume undoes it. Stop and Kill work
// on a paused server.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume continues a server suspended by Pause (SIGCONT).
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig os.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// stopLocked stops the process; s.life must be held.
func (s *Server) stopLocked(graceful bool) {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	if graceful {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Process.Signal(syscall.SIGCONT)
		t := time.NewTimer(stopTimeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
	}
	_ = cmd.Process.Kill()
	<-done
}

// launch starts the process on s.port and waits for PING. On failure the
// process is killed and bindErr reports whether the port was unavailable.
// s.life must be held (or s not yet shared).
func (s *Server) launch() (bindErr bool, err error) {
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--dir", s.dir,
		"--protected-mode", "no",
		// Replicas (cluster or REPLICAOF) sync at once instead of after 5 s.
		"--repl-diskless-sync-delay", "0",
	}
	if serverMajorVersion(s.bin) >= 7 {
		// Do not wait for lagging replicas on SIGTERM.
		args = append(args, "--shutdown-timeout", "0")
	}
	if s.extra != nil {
		args = append(args, s.extra(s.port)...)
	}
	if s.conf != "" {
		args = append([]string{s.conf}, args...)
	}
	logf, err := os.OpenFile(s.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	var offset int64
	if st, err := logf.Stat(); err == nil {
		offset = st.Size()
	}
	fmt.Fprintf(logf, "### redistest: %s %s\n", s.bin, strings.Join(quoteArgs(args), " "))
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	if err := writeOwner(s.dir); err != nil {
		logf.Close()
		return false, err
	}
	// Killed with this process however it ends (see childproc).
	wait, err := childproc.Start(cmd)
	logf.Close() // the child has its own descriptor
	if err != nil {
		return false, fmt.Errorf("start %s: %w", s.bin, err)
	}
	done := make(chan struct{})
	go func() {
		_ = wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done = cmd, done
	s.mu.Unlock()

	if err = s.waitReady(done); err == nil {
		return false, nil
	}
	s.stopLocked(false)
	out := s.Log()
	if int64(len(out)) >= offset {
		out = out[offset:]
	}
	bindErr = strings.Contains(out, "Address already in use") || strings.Contains(out, "bind:")
	return bindErr, fmt.Errorf("redis-server on %s: %w; server output:\n%s", s.Addr(), err, tailLines(out, 60))
}

// waitReady polls PING until it returns PONG, the process exits or the
// ready timeout expires.
func (s *Server) waitReady(done <-chan struct{}) error {
	deadline := time.Now().Add(readyTimeout)
	var lastErr error
	for {
		select {
		case <-done:
			return errors.New("process exited during startup")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		v, err := do(ctx, s.Addr(), "PING")
		cancel()
		var reply RedisError
		if err == nil && v == "PONG" || errors.As(err, &reply) && strings.HasPrefix(string(reply), "NOAUTH") {
			return nil // a server started with --requirepass answers, refusing
		}
		if err == nil {
			err = fmt.Errorf("unexpected PING reply %v", v)
		}
		lastErr = err
		if time.Now().After(deadline) {
			return fmt.Errorf("no PONG within %v (last error: %v)", readyTimeout, lastErr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = strconv.Quote(a)
		}
		out[i] = a
	}
	return out
}

var (
	portsMu  sync.Mutex
	reserved = map[int]bool{} // ports handed out in this process, never reused
)

// freePort returns a port on 127.0.0.1 that is currently free, as is
// port+10000 (the cluster bus port), and that this process has not handed
// out before (a stopped server can be restarted on its port).
func freePort() (int, error) {
	portsMu.Lock()
	defer portsMu.Unlock()
	var lastErr error = errors.New("no suitable port")
	for i := 0; i < 100; i++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			lastErr = err
			continue
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port+10000 > 65535 || reserved[port] || reserved[port+10000] || reserved[port-10000] {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		l.Close()
		if err != nil {
			lastErr = err
			continue
		}
		bus.Close()
		reserved[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("redistest: cannot find a free port: %w", lastErr)
}
