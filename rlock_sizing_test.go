package redisson

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLockSizing measures what a lock name costs in Redis, the numbers the
// Lock doc and docs/locks.md ("What a lock name costs in Redis") quote: MEMORY
// USAGE of a held lock's hash and of the fencing counter that outlives it,
// and used_memory over many names locked once and released. It fails when a
// released lock leaves more than its fencing counter behind, when the counter
// does not expire after TokenIdleTTL, or when the cost per name exceeds the
// documented bound.
func TestLockSizing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	client, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := redistest.Ctx(t, 2*time.Minute)

	usage := func(key string) int64 {
		t.Helper()
		n, err := rdb.MemoryUsage(ctx, key, 0).Result()
		if err != nil {
			t.Fatalf("MEMORY USAGE %s: %v", key, err)
		}
		return n
	}
	lock := client.GetLock("order:1000001")
	if err := lock.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	hash := usage(lock.Name())
	counterKey := prefixName("redisson_lock_token", lock.Name())
	counter := usage(counterKey)
	if err := lock.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "only the fencing counter left", func() bool {
		keys, err := rdb.Keys(ctx, "*").Result()
		return err == nil && len(keys) == 1 && keys[0] == counterKey
	})
	ttl, err := rdb.PTTL(ctx, counterKey).Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("fencing counter TTL %v, want the default TokenIdleTTL 24h", ttl)
	}
	t.Logf("MEMORY USAGE (SAMPLES 0): held lock hash %q %d B, fencing counter %q %d B", lock.Name(), hash, counterKey, counter)

	// Many names, each locked once and released: what a day of order ids
	// leaves behind until TokenIdleTTL ends.
	const names = 10000
	before := usedMemoryBytes(t, ctx, rdb)
	for i := range names {
		l := client.GetLock("order:" + strconv.Itoa(2000000+i))
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	redistest.Eventually(t, 30*time.Second, "only fencing counters left", func() bool {
		n, err := rdb.DBSize(ctx).Result()
		return err == nil && n == names+1
	})
	perName := float64(usedMemoryBytes(t, ctx, rdb)-before) / names
	t.Logf("used_memory after %d names locked and released: %.1f B per name (%.0f MB per million)", names, perName, perName)
	if counter > 120 || perName > 200 {
		t.Errorf("a fencing counter costs %d B (MEMORY USAGE) and %.1f B (used_memory per name); the docs say at most 120 and 200", counter, perName)
	}
	if perName < float64(counter)/2 {
		t.Errorf("used_memory grew %.1f B per name, less than half of MEMORY USAGE's %d B: the measurement is broken", perName, counter)
	}
}

// usedMemoryBytes returns INFO memory's used_memory.
func usedMemoryBytes(t *testing.T, ctx context.Context, rdb *redis.Client) int64 {
	t.Helper()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}
