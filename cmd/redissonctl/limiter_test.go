package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// runIn runs the command in process.
func runIn(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return result{code: code, stdout: out.String(), stderr: errb.String()}
}

// limiterName returns a unique limiter name whose identity keys are
// deleted at the end.
func limiterName(t *testing.T, rdb redis.UniversalClient, keys ...string) string {
	n := name(t, rdb)
	t.Cleanup(func() {
		for _, k := range keys {
			rdb.Del(context.Background(), n+":{"+k+"}")
		}
	})
	return n
}

func TestInspectAndResetLimiter(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()
	cl := newClient(t, rdb)
	fwName := limiterName(t, rdb, "10.0.0.1", "none")
	gcraName := limiterName(t, rdb, "user-7")
	fw := cl.GetFixedWindowLimiter(fwName, 10, time.Hour)
	gcra := cl.GetGCRALimiter(gcraName, 1, time.Minute, 5)
	if d, err := fw.Allow(ctx, "10.0.0.1", 4); err != nil || !d.Allowed {
		t.Fatal(d, err)
	}
	if d, err := gcra.Allow(ctx, "user-7", 5); err != nil || !d.Allowed {
		t.Fatal(d, err)
	}

	// list names both entries with their kind.
	r := runIn(t, "", addr, "-json", "list", "ctl:*")
	r.want(t, exitOK, "list")
	found := map[string]redisson.ObjectInfo{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var o redisson.ObjectInfo
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("list -json line %q: %v", line, err)
		}
		found[o.Key] = o
	}
	if o := found[fwName+":{10.0.0.1}"]; o.Kind != redisson.KindFixedWindowLimiter || o.Name != fwName || o.Identity != "10.0.0.1" {
		t.Errorf("list: fixed window entry = %+v", o)
	}
	if o := found[gcraName+":{user-7}"]; o.Kind != redisson.KindGCRALimiter || o.Name != gcraName || o.Identity != "user-7" {
		t.Errorf("list: gcra entry = %+v", o)
	}
	r = runIn(t, "", addr, "list", fwName+"*")
	if !hasRow(r.stdout, fwName+":{10.0.0.1}", "fixedwindow-limiter") {
		t.Errorf("list text lacks the fixed window row:\n%s", r.stdout)
	}

	// inspect without a configuration: the raw state.
	r = runIn(t, "", addr, "inspect", "limiter", fwName, "10.0.0.1")
	r.want(t, exitOK, "inspect limiter")
	for _, s := range []string{"fixedwindow-limiter", "used in window", "4", "full allowance in"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("inspect limiter lacks %q:\n%s", s, r.stdout)
		}
	}
	// with one: Peek's remaining, and nothing spent.
	for range 2 {
		r = runIn(t, "", addr, "-json", "-limit", "10", "-window", "1h", "inspect", "limiter", fwName, "10.0.0.1")
		r.want(t, exitOK, "inspect limiter -limit")
		var v limiterView
		if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if v.Used != 4 || v.Peek == nil || v.Peek.Remaining != 6 || !v.Peek.Allowed {
			t.Fatalf("inspect -limit = %+v (peek %+v); want 4 used, 6 remaining", v, v.Peek)
		}
	}
	r = runIn(t, "", addr, "-limit", "1", "-window", "1m", "-burst", "5", "inspect", "limiter", gcraName, "user-7")
	r.want(t, exitOK, "inspect gcra")
	if !strings.Contains(r.stdout, "gcra-limiter") || !strings.Contains(r.stdout, "0 of 5") || !strings.Contains(r.stdout, "next permit") {
		t.Errorf("inspect gcra lacks its kind or 0 of 5 remaining:\n%s", r.stdout)
	}
	runIn(t, "", addr, "inspect", "limiter", fwName, "none").want(t, exitNotFound, "inspect of an identity without state")

	// reset: refused without confirmation, done with -yes or y.
	r = runIn(t, "n\n", addr, "reset", "limiter", gcraName, "user-7")
	r.want(t, exitRefused, "reset answered n")
	if d, err := gcra.Peek(ctx, "user-7"); err != nil || d.Remaining != 0 {
		t.Fatalf("after a refused reset Peek = %+v, %v; want still spent", d, err)
	}
	runIn(t, "", addr, "-yes", "reset", "limiter", gcraName, "user-7").want(t, exitOK, "reset -yes")
	if d, err := gcra.Allow(ctx, "user-7", 5); err != nil || !d.Allowed {
		t.Errorf("Allow(full burst) after reset = %+v, %v; want allowed", d, err)
	}
	runIn(t, "y\n", addr, "reset", "limiter", fwName, "10.0.0.1").want(t, exitOK, "reset answered y")
	if d, err := fw.Peek(ctx, "10.0.0.1"); err != nil || d.Remaining != 10 {
		t.Errorf("after reset Peek = %+v, %v; want 10", d, err)
	}
	runIn(t, "", addr, "-yes", "reset", "limiter", fwName, "10.0.0.1").want(t, exitNotFound, "reset of no state")

	// bad input, one line each, Redis unchanged.
	rdb.Set(ctx, fwName+":{none}", "text", time.Hour)
	for _, args := range [][]string{
		{addr, "inspect", "limiter", fwName},
		{addr, "inspect", "limiter", fwName, ""},
		{addr, "reset", "limiter", "", "k"},
		{addr, "reset", "lock", fwName},
		{addr, "-limit", "5", "inspect", "limiter", fwName, "k"},
		{addr, "-burst", "5", "inspect", "limiter", fwName, "k"},
		{addr, "-yes", "reset", "limiter", fwName, "none"}, // a string that is no limiter's
		{addr, "inspect", "limiter", fwName, "none"},
	} {
		r := runIn(t, "", args...)
		r.want(t, exitUsage, strings.Join(args, " "))
		r.oneLineError(t, strings.Join(args, " "))
	}
	if got := rdb.Get(ctx, fwName+":{none}").Val(); got != "text" {
		t.Errorf("the string became %q", got)
	}
}

// Values print as JSON, not Go's map syntax; -raw shows the stored bytes.
func TestInspectQueueJSONValues(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()
	cl := newClient(t, rdb)
	n := name(t, rdb)
	q := redisson.GetQueue[map[string]any](cl, n)
	if err := q.Offer(ctx, map[string]any{"a": 1, "b": []any{"x", true}}); err != nil {
		t.Fatal(err)
	}
	r := runIn(t, "", addr, "inspect", "queue", n)
	r.want(t, exitOK, "inspect queue")
	if !strings.Contains(r.stdout, `{"a":1,"b":["x",true]}`) || strings.Contains(r.stdout, "map[") {
		t.Errorf("head not printed as JSON:\n%s", r.stdout)
	}
	r = runIn(t, "", addr, "-raw", "inspect", "queue", n)
	r.want(t, exitOK, "inspect queue -raw")
	if !strings.Contains(r.stdout, `"\x82\xa1a\x01`) {
		t.Errorf("-raw head not the quoted msgpack bytes:\n%s", r.stdout)
	}
	b := n + ":bin"
	defer rdb.Del(ctx, b)
	rdb.Set(ctx, b, string([]byte{0xff, 0x00, 0xfe}), 0)
	r = runIn(t, "", addr, "-codec", "bytes", "inspect", "bucket", b)
	r.want(t, exitOK, "inspect bucket of bytes")
	if !strings.Contains(r.stdout, `{"base64":"/wD+"}`) {
		t.Errorf("non-UTF-8 bytes not shown as base64:\n%s", r.stdout)
	}
}

// A plain lock's waiters: the clients subscribed, said as such.
func TestInspectLockWaitingClients(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	n := name(t, rdb)
	holder := newClient(t, rdb).GetLock(n)
	if err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer holder.Unlock(ctx)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	waiters := newClient(t, rdb) // two goroutines, one client: one subscription
	for range 2 {
		go waiters.GetLock(n).Lock(wctx)
	}
	cl := newClient(t, rdb)
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := cl.InspectLock(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if info.Subscribers >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the waiters never subscribed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := runIn(t, "", "-redis="+srv.Addr(), "inspect", "lock", n)
	r.want(t, exitOK, "inspect lock")
	if !strings.Contains(r.stdout, "waiting clients  1 ") || !strings.Contains(r.stdout, "redisson_lock__channel:{"+n+"}") {
		t.Errorf("inspect lock does not say 1 waiting client on the channel:\n%s", r.stdout)
	}
}

// redis-cli's connection flags: -h, -p, -a, -n, -u (which wins), and
// --help; -h alone still prints the help.
func TestRedisCLIFlags(t *testing.T) {
	ctx := context.Background()
	secured := redistest.Start(t)
	if _, err := secured.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all"); err != nil {
		t.Fatal(err)
	}
	if _, err := secured.Do(ctx, "CONFIG", "SET", "requirepass", "topsecret"); err != nil {
		t.Fatal(err)
	}
	host, port, _ := strings.Cut(secured.Addr(), ":")
	rdb := redis.NewClient(&redis.Options{Addr: secured.Addr(), Password: "topsecret", DB: 3})
	defer rdb.Close()
	lock := newClient(t, rdb).GetLock("flags-lock")
	if err := lock.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer lock.Unlock(ctx)
	inspect := []string{"-json", "inspect", "lock", "flags-lock"}
	held := func(args ...string) result { return runIn(t, "", append(args, inspect...)...) }
	for _, tc := range []struct {
		what string
		args []string
		code int
	}{
		{"-h -p -a -n", []string{"-h", host, "-p", port, "-a", "topsecret", "-n", "3"}, exitOK},
		{"-h -p -a -db", []string{"-h", host, "-p", port, "-a", "topsecret", "-db", "3"}, exitOK},
		{"-n 0: another database", []string{"-h", host, "-p", port, "-a", "topsecret"}, exitNotFound},
		{"wrong -a", []string{"-h", host, "-p", port, "-a", "nope", "-n", "3"}, exitRedis},
		{"-p of no server", []string{"-h", host, "-p", "1", "-a", "topsecret", "-timeout", "2s"}, exitRedis},
		{"-u", []string{"-u", "redis://:topsecret@" + secured.Addr() + "/3"}, exitOK},
		{"-u password without colon", []string{"-u", "redis://topsecret@" + secured.Addr() + "/3"}, exitOK},
		{"-u user:password", []string{"-u", "redis://ops:s3cret@" + secured.Addr() + "/3"}, exitOK},
		{"-u overrides -h -p -a -n", []string{"-h", "nowhere.invalid", "-p", "1", "-a", "nope", "-n", "5",
			"-u", "redis://:topsecret@" + secured.Addr() + "/3"}, exitOK},
		{"-u before -h still wins", []string{"-u", "redis://:topsecret@" + secured.Addr() + "/3", "-h", "nowhere.invalid"}, exitOK},
		{"-u overrides -redis", []string{"-redis", "127.0.0.1:1", "-u", "redis://:topsecret@" + secured.Addr() + "/3"}, exitOK},
		{"-redis still works", []string{"-redis", secured.Addr(), "-a", "topsecret", "-n", "3"}, exitOK},
		{"-u bad scheme", []string{"-u", "http://" + secured.Addr()}, exitUsage},
		{"-u bad db", []string{"-u", "redis://" + secured.Addr() + "/x"}, exitUsage},
		{"-redis with -h", []string{"-redis", secured.Addr(), "-h", host}, exitUsage},
		{"-h with -cluster", []string{"-h", host, "-cluster", secured.Addr()}, exitUsage},
		{"-p out of range", []string{"-p", "70000"}, exitUsage},
	} {
		r := held(tc.args...)
		r.want(t, tc.code, tc.what)
		if tc.code == exitOK {
			var info redisson.LockInfo
			if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || len(info.Owners) != 1 || info.Owners[0].Field != lock.Owner() {
				t.Errorf("%s: %+v, %v; want the holder %s", tc.what, info, err, lock.Owner())
			}
		} else {
			r.oneLineError(t, tc.what)
		}
	}
	for _, help := range [][]string{{"--help"}, {"-help"}, {"-h"}, {"inspect", "lock", "x", "-h"}} {
		r := runIn(t, "", help...)
		r.want(t, exitOK, strings.Join(help, " "))
		if !strings.Contains(r.stdout, "usage: redissonctl") || !strings.Contains(r.stdout, "-u URI") {
			t.Errorf("%v: no help:\n%s", help, r.stdout)
		}
	}
}
