package redistest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestMain stops the shared servers and checks for goroutine leaks. Run
// with orphanChildEnv set, the binary is instead the child of the orphan
// tests (orphans_linux_test.go).
func TestMain(m *testing.M) {
	if mode := os.Getenv(orphanChildEnv); mode != "" {
		orphanChild(mode)
		return
	}
	Main(m)
}

func TestServerLifecycle(t *testing.T) {
	ctx := context.Background()
	s := Start(t, "--maxmemory", "10mb")
	if want := fmt.Sprintf("127.0.0.1:%d", s.Port()); s.Addr() != want {
		t.Fatalf("Addr() = %q, want %q", s.Addr(), want)
	}
	if s.Port() == 6379 {
		t.Fatal("started on the system port 6379")
	}
	if v, err := s.Do(ctx, "CONFIG", "GET", "maxmemory"); err != nil || fmt.Sprint(v) != "[maxmemory 10485760]" {
		t.Fatalf("CONFIG GET maxmemory = %v, %v", v, err)
	}
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(ctx, "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET k = %q, %v", v, err)
	}

	// Pause: no answer until Resume.
	s.Pause()
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := s.Do(short, "PING")
	cancel()
	if err == nil {
		t.Fatal("PING answered while paused")
	}
	s.Resume()
	if v, err := s.Do(ctx, "PING"); err != nil || v != "PONG" {
		t.Fatalf("PING after Resume = %v, %v", v, err)
	}

	port := s.Port()
	s.Restart(t)
	if s.Port() != port {
		t.Fatalf("Restart changed port %d -> %d", port, s.Port())
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET k after Restart: err = %v, want redis.Nil", err)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after Restart: %v", err)
	}

	s.Kill()
	if s.Running() {
		t.Fatal("Running() after Kill")
	}
	if _, err := s.Do(ctx, "PING"); err == nil {
		t.Fatal("PING answered after Kill")
	}
	s.Kill()
	s.Stop() // harmless after Kill; Cleanup stops once more
	if !strings.Contains(s.Log(), "Ready to accept connections") {
		t.Fatalf("log does not look like redis-server output:\n%s", s.Log())
	}
}

func TestStopPaused(t *testing.T) {
	s := Start(t)
	s.Pause()
	start := time.Now()
	s.Stop()
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("Stop of a paused server took %v", d)
	}
	if s.Running() {
		t.Fatal("Running() after Stop")
	}
}

func TestShared(t *testing.T) {
	s1, s2 := Shared(t), Shared(t)
	if s1 != s2 {
		t.Fatal("Shared returned two different servers")
	}
	ctx := context.Background()
	c := s1.Client(t)
	key := "redistest:" + t.Name()
	if err := c.Set(ctx, key, "x", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestCluster(t *testing.T) {
	ctx := context.Background()
	cl := StartCluster(t, 3, 0)
	if len(cl.Addrs()) != 3 || len(cl.Servers()) != 3 {
		t.Fatalf("Addrs = %v", cl.Addrs())
	}
	for _, s := range cl.Servers() {
		v, err := s.Do(ctx, "CLUSTER", "INFO")
		if err != nil || !strings.Contains(fmt.Sprint(v), "cluster_state:ok") {
			t.Fatalf("CLUSTER INFO on %s = %v, %v", s.Addr(), v, err)
		}
	}
	c := cl.Client(t)
	for ch := 'a'; ch <= 'z'; ch++ {
		key := fmt.Sprintf("{%c}x", ch)
		if err := c.Set(ctx, key, "1", 0).Err(); err != nil {
			t.Fatalf("SET %s: %v", key, err)
		}
	}
	// The 26 hash tags hash to slots owned by all three masters.
	for _, s := range cl.Servers() {
		n, err := s.Do(ctx, "DBSIZE")
		if err != nil || n.(int64) == 0 {
			t.Fatalf("DBSIZE on %s = %v, %v; keys did not spread", s.Addr(), n, err)
		}
	}
}

func TestSharedCluster(t *testing.T) {
	c1, c2 := SharedCluster(t), SharedCluster(t)
	if c1 != c2 {
		t.Fatal("SharedCluster returned two different clusters")
	}
	ctx := context.Background()
	if err := c1.Client(t).Set(ctx, "redistest:"+t.Name(), "1", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
}

// TestProxyDropReply shows the retry-duplication hazard: a dropped reply to
// INCR leaves the increment applied, and a retrying client applies it again.
func TestProxyDropReply(t *testing.T) {
	ctx := context.Background()
	s := Shared(t)
	direct := s.Client(t)
	p := NewProxy(t, s.Addr())

	noRetry := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
	defer noRetry.Close()
	key := "redistest:" + t.Name() + ":noretry"
	if err := noRetry.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.DropNextReply()
	if v, err := noRetry.Incr(ctx, key).Result(); err == nil {
		t.Fatalf("INCR through armed proxy succeeded: %d", v)
	}
	if v, err := direct.Get(ctx, key).Result(); err != nil || v != "1" {
		t.Fatalf("GET %s = %q, %v; want 1 (applied, reply lost)", key, v, err)
	}

	retry := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: 3})
	defer retry.Close()
	key = "redistest:" + t.Name() + ":retry"
	if err := retry.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.DropNextReply()
	if v, err := retry.Incr(ctx, key).Result(); err != nil || v != 2 {
		t.Fatalf("INCR with retries = %d, %v; want 2", v, err)
	}
	if v, err := direct.Get(ctx, key).Result(); err != nil || v != "2" {
		t.Fatalf("GET %s = %q, %v; want 2 (applied twice)", key, v, err)
	}
	if p.Dropped() != 2 {
		t.Fatalf("Dropped() = %d, want 2", p.Dropped())
	}
}

func TestProxyFaults(t *testing.T) {
	ctx := context.Background()
	s := Shared(t)
	p := NewProxy(t, s.Addr())
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	p.SetLatency(50 * time.Millisecond)
	start := time.Now()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Fatalf("PING with 2x50ms latency took %v", d)
	}
	p.SetLatency(0)

	p.Partition(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := do(short, p.Addr(), "PING")
	cancel()
	if err == nil {
		t.Fatal("PING answered during partition")
	}
	// A request sent during the partition is delivered once it heals.
	held := make(chan error, 1)
	go func() {
		v, err := do(ctx, p.Addr(), "PING")
		if err == nil && v != "PONG" {
			err = fmt.Errorf("reply %v", v)
		}
		held <- err
	}()
	time.Sleep(100 * time.Millisecond)
	p.Partition(false)
	if err := <-held; err != nil {
		t.Fatalf("held PING after partition: %v", err)
	}

	// CloseAll resets open connections.
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "+PONG\r\n" {
		t.Fatalf("raw PING = %q, %v", buf[:n], err)
	}
	p.CloseAll()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("read after CloseAll: %v, want EOF", err)
	}
	if err := c.Ping(ctx).Err(); err != nil { // pool discards the dead conn
		t.Fatalf("PING after CloseAll: %v", err)
	}
}
