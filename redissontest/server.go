package redissontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/goredisson/redisson/internal/childproc"
)

const (
	readyTimeout = 10 * time.Second // until the server answers PING
	stopTimeout  = 5 * time.Second  // SIGTERM grace before SIGKILL
	startTries   = 3                // ports tried when one is taken meanwhile
)

// Start starts a real redis-server, found in PATH, on a free port of
// 127.0.0.1, with nothing persisted (--save "" --appendonly no) and its
// working directory in t.TempDir(), and waits until it answers PING. It
// returns the server's address ("127.0.0.1:<port>") and a go-redis client
// connected to it. When the test ends, t.Cleanup closes the client and
// stops the server (SIGTERM, then SIGKILL after 5 s).
//
// It fails the test, naming what to install, when redis-server is not in
// PATH, and with the server's output when it does not start.
func Start(t testing.TB) (addr string, rdb *redis.Client) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redissontest: redis-server not found in PATH: install Redis " +
			"(Debian/Ubuntu: apt-get install redis-server; Fedora: dnf install redis; " +
			"macOS: brew install redis), or use NewEmbedded, which needs nothing installed")
	}
	dir := t.TempDir()
	var stop func()
	for try := 0; ; try++ {
		addr, stop, err = launch(bin, dir)
		if err == nil || try+1 == startTries {
			break
		}
	}
	if err != nil {
		t.Fatalf("redissontest: %v", err)
	}
	t.Cleanup(stop)
	rdb = redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	return addr, rdb
}

// launch starts one redis-server in dir on a free port and waits for it to
// answer PING; stop ends it and waits for it to exit.
func launch(bin, dir string) (addr string, stop func(), err error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var out syncBuffer
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir", dir)
	cmd.Stdout, cmd.Stderr = &out, &out
	// Killed with the test process however it ends, so that a test binary
	// that times out or is killed leaves no server behind (see childproc).
	wait, err := childproc.Start(cmd)
	if err != nil {
		return "", nil, fmt.Errorf("start %s: %w", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = wait(); close(exited) }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(stopTimeout):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	if err := awaitPing(addr, exited); err != nil {
		stop()
		return "", nil, fmt.Errorf("redis-server on %s: %w; its output:\n%s", addr, err, out.String())
	}
	return addr, stop, nil
}

// awaitPing waits until addr answers PING, the process exits, or
// readyTimeout passes.
func awaitPing(addr string, exited <-chan struct{}) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	deadline := time.Now().Add(readyTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before answering PING")
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within %v: %w", readyTimeout, err)
		}
	}
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer is a bytes.Buffer safe for the process's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
