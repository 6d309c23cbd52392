package redisson

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(holderEnv); spec != "" {
		runHolderProcess(spec) // a child process of TestLockHolderKilled
		return
	}
	if spec := os.Getenv(fairWaiterEnv); spec != "" {
		runFairWaiterProcess(spec) // a child process of TestFairLockDeadWaiter
		return
	}
	redistest.Main(m)
}

var nameSeq atomic.Uint64

// uniqueName returns a lock name no other test uses, and deletes the keys of
// that lock when the test ends.
func uniqueName(t testing.TB, rdb redis.UniversalClient) string {
	t.Helper()
	base := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name())
	name := fmt.Sprintf("test:%s:%d", base, nameSeq.Add(1))
	t.Cleanup(func() { deleteLockKeys(rdb, name) })
	return name
}

func deleteLockKeys(rdb redis.UniversalClient, name string) {
	ctx := context.Background()
	keys := []string{name, prefixName("redisson_lock_token", name)}
	for _, k := range keys {
		rdb.Del(ctx, k)
	}
	// Latch keys carry the owner in their name.
	var cursor uint64
	pattern := prefixName("redisson_unlock_latch", name) + ":*"
	pattern = strings.NewReplacer("[", "\\[", "]", "\\]", "*", "\\*", "?", "\\?").Replace(pattern[:len(pattern)-1]) + "*"
	for {
		ks, next, err := rdb.Scan(ctx, cursor, pattern, 1000).Result()
		if err != nil {
			return
		}
		if len(ks) > 0 {
			rdb.Del(ctx, ks...)
		}
		if next == 0 {
			return
		}
		cursor = next
	}
}

// newClient returns a Client on rdb, closed when the test ends.
func newClient(t testing.TB, rdb redis.UniversalClient, opts *Options) *Client {
	t.Helper()
	return newTunedClient(t, rdb, opts, defaultTuning)
}

// newTunedClient is newClient with the services tuned by tune.
func newTunedClient(t testing.TB, rdb redis.UniversalClient, opts *Options, tune tuning) *Client {
	t.Helper()
	if opts == nil || opts.Logger == nil {
		// Tests that lose leases on purpose would fill the output with
		// the client's warnings; the ones that check logs pass a Logger.
		o := Options{}
		if opts != nil {
			o = *opts
		}
		o.Logger = slog.New(slog.DiscardHandler)
		opts = &o
	}
	c, err := newTuned(rdb, opts, tune)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sharedRedis returns a go-redis client of the package's shared server.
func sharedRedis(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	return redistest.Shared(t).Client(t, opts...)
}

// testCtx returns a context that ends with the test or after d.
func testCtx(t testing.TB, d time.Duration) context.Context { return redistest.Ctx(t, d) }

// eventually polls cond every 10ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, d, what, cond)
}

// mustTryLock fails the test unless l is acquired.
func mustTryLock(t testing.TB, ctx context.Context, l *Lock, wait, lease time.Duration) {
	t.Helper()
	ok, err := l.TryLock(ctx, wait, lease)
	if err != nil || !ok {
		t.Fatalf("TryLock(%v, %v) = %v, %v; want true, nil", wait, lease, ok, err)
	}
}

// keyState snapshots every key of a lock, to check that a call left Redis
// unchanged.
func keyState(t testing.TB, rdb redis.UniversalClient, name string) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	for _, k := range []string{name, prefixName("redisson_lock_token", name)} {
		typ := rdb.Type(ctx, k).Val()
		fmt.Fprintf(&b, "%s:%s=", k, typ)
		switch typ {
		case "hash":
			fmt.Fprint(&b, rdb.HGetAll(ctx, k).Val())
		case "string":
			fmt.Fprint(&b, rdb.Get(ctx, k).Val())
		}
		b.WriteString(";")
	}
	return b.String()
}

func unlockN(t *testing.T, ctx context.Context, l *Lock, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := l.Unlock(ctx); err != nil {
			t.Fatalf("Unlock %d of %d: %v", i+1, n, err)
		}
	}
}
