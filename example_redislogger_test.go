package redisson_test

import (
	"context"
	"log/slog"
	"os"

	"github.com/goredisson/redisson"
)

// go-redis's own log lines (dial failures, pool and pub/sub reconnects)
// become slog records, so a service's JSON log stays JSON during an outage.
// Install it once at start-up: redis.SetLogger(redisson.NewRedisLogger(logger)).
func ExampleNewRedisLogger() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	logger := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	bridge := redisson.NewRedisLogger(logger)
	// What go-redis calls when a dial fails:
	bridge.Printf(context.Background(), "redis: failed to dial after %d attempts: %s\n", 5, "connection refused")
	// Output:
	// {"level":"WARN","msg":"redis: failed to dial after 5 attempts: connection refused","component":"go-redis"}
}
