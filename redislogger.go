package redisson

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// RedisLogger writes go-redis's own log lines to a slog.Logger. go-redis
// logs through one package-wide logger (a failed dial, a bad pub/sub
// connection, a Sentinel switch), which by default prints plain text to
// stderr, in the middle of a service's JSON logs during an outage. Install
// a RedisLogger once, at start-up, before any go-redis client exists:
//
//	redis.SetLogger(redisson.NewRedisLogger(logger))
//
// redis.SetLogger is global: it serves every go-redis client in the process,
// whichever library made it, and go-redis does not guard it against
// concurrent use, so set it before the first client is built. Nothing in
// this package calls it.
//
// Each line becomes one record at level Warn (go-redis prints only its
// errors by default), whose message is the formatted line without its
// trailing newline and whose attribute component is "go-redis"; the
// context go-redis passes reaches the handler. A RedisLogger is safe for
// concurrent use.
type RedisLogger struct {
	log *slog.Logger
}

// NewRedisLogger returns a RedisLogger writing to l (nil: slog.Default()
// at the time of each line).
func NewRedisLogger(l *slog.Logger) *RedisLogger { return &RedisLogger{log: l} }

// Printf logs one go-redis line: the logger interface redis.SetLogger
// takes.
func (r *RedisLogger) Printf(ctx context.Context, format string, v ...any) {
	l := r.log
	if l == nil {
		l = slog.Default()
	}
	if !l.Enabled(ctx, slog.LevelWarn) {
		return
	}
	msg := strings.TrimRight(fmt.Sprintf(format, v...), "\r\n")
	l.LogAttrs(ctx, slog.LevelWarn, msg, slog.String("component", "go-redis"))
}
