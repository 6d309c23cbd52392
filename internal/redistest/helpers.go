package redistest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// CommandCalls returns how many calls of cmd the server behind rdb has
// counted, from INFO commandstats.
func CommandCalls(t testing.TB, rdb *redis.Client, cmd string) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := commandCalls(info, cmd); ok {
		return n
	}
	// Servers before Redis 7.0 count a command's subcommands as the
	// command ("script", not "script|load"): count those there.
	if parent, _, ok := strings.Cut(cmd, "|"); ok && !strings.Contains(info, "|") {
		n, _ := commandCalls(info, parent)
		return n
	}
	return 0
}

// commandCalls reads the calls of cmd from an INFO commandstats reply, and
// whether it has a line for cmd.
func commandCalls(info, cmd string) (int, bool) {
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_"+cmd+":") {
			continue
		}
		for _, kv := range strings.Split(strings.TrimPrefix(line, "cmdstat_"+cmd+":"), ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.Atoi(strings.TrimSpace(v))
				return n, true
			}
		}
	}
	return 0, false
}

// Ctx returns a context that ends with the test or after d.
func Ctx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Eventually polls cond every 10ms until it holds, and fails the test when
// d passes first, saying what it waited for.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// expireAtScript returns a key's expiry as Unix ms on the server clock, the
// way PEXPIRETIME (Redis 7.0) does, from TIME and PTTL read in one script
// (within a millisecond of each other), and -1 or -2 as PTTL gives them.
var expireAtScript = redis.NewScript(`
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then return ttl end
local t = redis.call('time')
return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl`)

// ExpireAt returns the Unix ms at which key expires on the server (-1: no
// expiry, -2: no key), and whether the value is exact: PEXPIRETIME where
// the server has it, else TIME plus PTTL, which can read up to 1 ms early.
func ExpireAt(ctx context.Context, rdb redis.Cmdable, key string) (ms int64, exact bool, err error) {
	if d, err := rdb.PExpireTime(ctx, key).Result(); err == nil {
		if d < 0 { // go-redis keeps -1 and -2 as they came
			return int64(d), true, nil
		}
		return int64(d / time.Millisecond), true, nil
	} else if !strings.Contains(strings.ToLower(err.Error()), "unknown command") {
		return 0, false, err
	}
	ms, err = expireAtScript.Run(ctx, rdb, []string{key}).Int64()
	return ms, false, err
}
