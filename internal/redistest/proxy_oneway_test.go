package redistest

import (
	"context"
	"errors"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A one-way partition holds one direction only: with replies held the
// server still executes a request; with requests held it does not.
func TestProxyOneWayPartition(t *testing.T) {
	ctx := context.Background()
	s := Shared(t)
	direct := s.Client(t)
	p := NewProxy(t, s.Addr())
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 300 * time.Millisecond})
	defer c.Close()
	key := "redistest:" + t.Name()
	defer direct.Del(ctx, key)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	p.PartitionOneWay(ToClient, true)
	if err := c.Incr(ctx, key).Err(); err == nil {
		t.Fatal("INCR answered while replies are held")
	}
	if v := direct.Get(ctx, key).Val(); v != "1" {
		t.Fatalf("GET = %q with replies held; want 1 (executed)", v)
	}
	p.PartitionOneWay(ToClient, false)

	p.PartitionOneWay(ToServer, true)
	if err := c.Incr(ctx, key).Err(); err == nil {
		t.Fatal("INCR answered while requests are held")
	}
	if v := direct.Get(ctx, key).Val(); v != "1" {
		t.Fatalf("GET = %q with requests held; want 1 (not executed)", v)
	}
	p.PartitionOneWay(ToServer, false)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after healing: %v", err)
	}
}

// Reset aborts open connections with a TCP reset.
func TestProxyReset(t *testing.T) {
	s := Shared(t)
	p := NewProxy(t, s.Addr())
	conn, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	buf := make([]byte, 16)
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Read(buf); err != nil || string(buf[:n]) != "+PONG\r\n" {
		t.Fatalf("raw PING = %q, %v", buf[:n], err)
	}
	p.Reset()
	_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Read(buf); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("read after Reset: %v; want ECONNRESET", err)
	}
}
