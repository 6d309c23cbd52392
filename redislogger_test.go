package redisson

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// goRedisLogEnv makes the test binary a service that logs JSON to stderr
// while go-redis fails to dial (see runGoRedisLogService): "bridge" with a
// RedisLogger installed, "plain" with go-redis's own logger. A process of
// its own, because redis.SetLogger sets an unguarded global that the
// package's other tests' clients read.
const goRedisLogEnv = "REDISSON_TEST_GOREDISLOG"

func init() {
	if mode := os.Getenv(goRedisLogEnv); mode != "" {
		os.Exit(runGoRedisLogService(mode))
	}
}

func runGoRedisLogService(mode string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	if mode == "bridge" {
		redis.SetLogger(NewRedisLogger(logger))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	addr := ln.Addr().String()
	ln.Close() // a port nobody listens on: every dial is refused
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	c, err := New(rdb, &Options{Logger: logger})
	if err != nil {
		fmt.Println("New:", err)
		return 1
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.GetLock("goredislog").TryLock(ctx, 0, time.Second)
	logger.Error("order service: lock failed", "error", err) // the service's own line
	return 0
}

// goRedisLogLines runs the test binary as that service and returns its
// stderr, split into lines.
func goRedisLogLines(t *testing.T, mode string) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), goRedisLogEnv+"="+mode)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("service (%s): %v; stdout %q, stderr %q", mode, err, out, stderr.String())
	}
	return strings.Split(strings.TrimSpace(stderr.String()), "\n")
}

// With a RedisLogger installed, go-redis's own line about the failed dial
// is one of the service's JSON records; without it, it is plain text among
// them (the problem it solves, and proof that the service makes go-redis
// log at all).
func TestRedisLoggerKeepsLogsJSON(t *testing.T) {
	var goRedis map[string]any
	for i, line := range goRedisLogLines(t, "bridge") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("line %d is not JSON (%v): %q", i, err, line)
			continue
		}
		if rec["component"] == "go-redis" {
			goRedis = rec
		}
	}
	if goRedis == nil {
		t.Fatal("no record with component=go-redis")
	}
	msg, _ := goRedis["msg"].(string)
	if !strings.Contains(msg, "failed to dial") || !strings.Contains(msg, "connection refused") {
		t.Errorf("go-redis record msg = %q, want go-redis's dial failure", msg)
	}
	if goRedis["level"] != "WARN" {
		t.Errorf("go-redis record level = %v, want WARN", goRedis["level"])
	}

	plain := 0
	for _, line := range goRedisLogLines(t, "plain") {
		if json.Valid([]byte(line)) {
			continue
		}
		if strings.Contains(line, "failed to dial") {
			plain++
		}
	}
	if plain == 0 {
		t.Error("without a RedisLogger, no plain-text go-redis line: the service does not make go-redis log")
	}
}

// A level the handler does not take costs no formatting and writes
// nothing; a taken one writes the message without its newline.
func TestRedisLoggerLevels(t *testing.T) {
	var buf bytes.Buffer
	l := NewRedisLogger(slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelError})))
	l.Printf(context.Background(), "redis: %s\n", "dropped")
	if buf.Len() != 0 {
		t.Errorf("a Warn line below the handler's Error level was written: %q", buf.String())
	}
	NewRedisLogger(slog.New(slog.NewJSONHandler(&buf, nil))).Printf(context.Background(), "redis: %d attempts\n", 3)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil || rec["msg"] != "redis: 3 attempts" || rec["component"] != "go-redis" {
		t.Errorf("wrote %q (%v), want msg %q with component go-redis", buf.String(), err, "redis: 3 attempts")
	}
}
