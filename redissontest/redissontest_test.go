package redissontest

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A lock lease runs out on the embedded Redis after that much real time, as
// on a server: another owner then gets the lock, with nobody moving the
// clock by hand.
func TestEmbeddedLeaseExpiresInRealTime(t *testing.T) {
	e, rdb := NewEmbedded(t)
	ctx := context.Background()
	holder, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	other, err := redisson.New(e.NewClient(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()

	const lease = 100 * time.Millisecond
	if ok, err := holder.GetLock("job").TryLock(ctx, 0, lease); !ok || err != nil {
		t.Fatalf("first TryLock = %v, %v; want true, nil", ok, err)
	}
	l := other.GetLock("job")
	if ok, err := l.TryLock(ctx, 0, time.Minute); ok || err != nil {
		t.Fatalf("TryLock while held = %v, %v; want false, nil", ok, err)
	}
	// Wait for the lease with a generous bound: a lease that never
	// expired (a frozen clock) fails, a slow machine does not.
	ok, err := l.TryLock(ctx, 5*time.Second, time.Minute)
	if !ok || err != nil {
		t.Fatalf("TryLock after the lease = %v, %v; want true, nil", ok, err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A key's TTL counts down with real time without FastForward.
func TestEmbeddedClockFollowsRealTime(t *testing.T) {
	e, rdb := NewEmbedded(t)
	ctx := context.Background()
	if err := rdb.Set(ctx, "k", "v", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if e.Exists("k") {
		t.Fatalf("key with a 50ms TTL still there after 300ms (TTL %v)", e.TTL("k"))
	}
	if _, err := rdb.Get(ctx, "k").Result(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after expiry: err %v; want redis.Nil", err)
	}
}

// Close may be called twice (by the caller and by t.Cleanup).
func TestEmbeddedCloseTwice(t *testing.T) {
	e, err := StartEmbedded()
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	e.Close()
}

// Start runs a real redis-server that expires keys on its own and is gone
// after the test.
func TestStartRealServer(t *testing.T) {
	var addr string
	t.Run("server", func(t *testing.T) {
		var rdb *redis.Client
		addr, rdb = Start(t)
		ctx := context.Background()
		info, err := rdb.Info(ctx, "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(info) == 0 {
			t.Fatal("empty INFO server")
		}
		if err := rdb.Set(ctx, "k", "v", 50*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for rdb.Exists(ctx, "k").Val() == 1 {
			if time.Now().After(deadline) {
				t.Fatal("key with a 50ms TTL still there after 5s")
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		c.Close()
		t.Errorf("server %s still accepts connections after its test ended", addr)
	}
}
