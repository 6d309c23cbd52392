package redisson

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
)

// cmdLog records the commands a go-redis client sends (handshake
// excluded), as MONITOR would print them: name and arguments as text.
type cmdLog struct {
	mu   sync.Mutex
	cmds [][]string
}

func newCmdLog(rdb redis.UniversalClient) *cmdLog {
	l := &cmdLog{}
	rdb.AddHook(l)
	return l
}

func (l *cmdLog) DialHook(next redis.DialHook) redis.DialHook { return next }

func (l *cmdLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !benchIsHandshake(cmd.Name()) {
			l.add(cmd)
		}
		return next(ctx, cmd)
	}
}

func (l *cmdLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if !benchIsHandshake(cmd.Name()) {
				l.add(cmd)
			}
		}
		return next(ctx, cmds)
	}
}

func (l *cmdLog) add(cmd redis.Cmder) {
	args := make([]string, len(cmd.Args()))
	for i, a := range cmd.Args() {
		args[i] = fmt.Sprint(a)
		if b, ok := a.([]byte); ok {
			args[i] = string(b)
		}
	}
	args[0] = strings.ToUpper(args[0])
	l.mu.Lock()
	l.cmds = append(l.cmds, args)
	l.mu.Unlock()
}

// take returns the commands recorded since the last take.
func (l *cmdLog) take() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.cmds
	l.cmds = nil
	return out
}

// monitorQuote quotes a command as the recordings (MONITOR) print it.
func monitorQuote(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('"')
		for j := 0; j < len(a); j++ {
			switch c := a[j]; {
			case c == '"' || c == '\\':
				b.WriteByte('\\')
				b.WriteByte(c)
			case c < 0x20 || c >= 0x7f:
				fmt.Fprintf(&b, "\\x%02x", c)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
	}
	return b.String()
}

// TestJavaDoubleText checks score arguments against Java's
// Double.toString, which Redisson sends (the recording: "1.5", "2.0",
// "-1.0", "0.0").
func TestJavaDoubleText(t *testing.T) {
	var o collection
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{1.5, "1.5"}, {2, "2.0"}, {-1, "-1.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"},
		{5, "5.0"}, {11.5, "11.5"}, {0.1, "0.1"}, {0.001, "0.001"}, {0.0001, "1.0E-4"},
		{1234567, "1234567.0"}, {1e7, "1.0E7"}, {1.5e300, "1.5E300"}, {-2.5e-10, "-2.5E-10"},
		{math.MaxFloat64, "1.7976931348623157E308"}, {math.Inf(1), "+inf"}, {math.Inf(-1), "-inf"},
	} {
		if got, err := o.scoreArg(tc.f); err != nil || got != tc.want {
			t.Errorf("scoreArg(%v) = %q, %v; want %q", tc.f, got, err, tc.want)
		}
	}
}

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
