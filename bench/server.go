package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// server is one redis-server child process on 127.0.0.1, with no
// persistence, started by the suite and stopped by stop.
type server struct {
	addr string
	dir  string
	cmd  *exec.Cmd
	done chan struct{}
}

// startServer starts redis-server (from $REDIS_SERVER or PATH) on a free
// loopback port and waits until it answers PING.
func startServer(extra ...string) (*server, error) {
	bin := os.Getenv("REDIS_SERVER")
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("redis-server"); err != nil {
			return nil, fmt.Errorf("redis-server not found (install it, e.g. apt-get install -y redis-server, or set REDIS_SERVER): %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "redisson-bench-")
	if err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s := &server{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan struct{})}
		s.cmd = exec.Command(bin,
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no", "--protected-mode", "no",
			"--dir", dir, "--logfile", "redis.log")
		s.cmd.Args = append(s.cmd.Args, extra...)
		s.cmd.SysProcAttr = childAttr()
		if err := s.cmd.Start(); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
		go func() { _ = s.cmd.Wait(); close(s.done) }()
		if err = s.waitReady(); err == nil {
			return s, nil
		}
		s.stop()
		if try == 4 {
			log, _ := os.ReadFile(dir + "/redis.log")
			os.RemoveAll(dir)
			return nil, fmt.Errorf("redis-server did not start: %w\n%s", err, log)
		}
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *server) waitReady() error {
	rdb := redis.NewClient(&redis.Options{Addr: s.addr, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-s.done:
			return errors.New("redis-server exited")
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop terminates the server (SIGTERM, then SIGKILL after 5s) and removes
// its directory. Calling it twice is harmless.
func (s *server) stop() {
	if s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(5 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}

// client returns a new go-redis client of this server with default options
// (a pool of 10 connections per CPU, as every library here is used with).
func (s *server) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.addr})
}

// info returns the fields of one INFO section.
func info(ctx context.Context, rdb *redis.Client, section string) (map[string]string, error) {
	txt, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, line := range strings.Split(txt, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok {
			m[k] = v
		}
	}
	return m, nil
}

// serverCommands returns the calls counted by INFO commandstats, commands
// run inside scripts included, leaving out what the suite itself sends
// (INFO, CLIENT, HELLO, MEMORY, FLUSHALL, DBSIZE, CONFIG) and connection set-up.
func serverCommands(ctx context.Context, rdb *redis.Client) (int64, error) {
	m, err := commandCalls(ctx, rdb)
	var n int64
	for _, c := range m {
		n += c
	}
	return n, err
}

// commandCalls returns serverCommands's calls by command name (subcommands
// as INFO commandstats names them, e.g. "xinfo|stream").
func commandCalls(ctx context.Context, rdb *redis.Client) (map[string]int64, error) {
	m, err := info(ctx, rdb, "commandstats")
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for k, v := range m {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		switch strings.SplitN(name, "|", 2)[0] {
		case "info", "client", "hello", "memory", "flushall", "dbsize", "config":
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(v, "calls="), ",")
		c, _ := strconv.ParseInt(calls, 10, 64)
		out[name] = c
	}
	return out, nil
}

// serverCPU returns the server's user+system CPU time.
func serverCPU(ctx context.Context, rdb *redis.Client) (time.Duration, error) {
	m, err := info(ctx, rdb, "cpu")
	if err != nil {
		return 0, err
	}
	u, _ := strconv.ParseFloat(m["used_cpu_user"], 64)
	s, _ := strconv.ParseFloat(m["used_cpu_sys"], 64)
	return time.Duration((u + s) * float64(time.Second)), nil
}
