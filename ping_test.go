package redisson

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// Ping on a healthy server loads every script (so no call meets NOSCRIPT
// and none of those loads is a reload), and fills Capabilities.
func TestPingLoadsEveryScript(t *testing.T) {
	redistest.RequireServer(t, 7, "SCRIPT LOAD counted apart from the other SCRIPT calls (INFO commandstats per subcommand)")
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c, rec, _ := observedClientOn(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	shas := make([]string, len(allScripts))
	for i, s := range allScripts {
		shas[i] = s.SHA()
	}
	if len(shas) < 90 {
		t.Fatalf("%d scripts registered; want every one of lua/ (97 when written)", len(shas))
	}
	exists, err := rdb.ScriptExists(ctx, shas...).Result()
	if err != nil {
		t.Fatal(err)
	}
	for i, ok := range exists {
		if !ok {
			t.Errorf("script %s not loaded by Ping", allScripts[i].Name())
		}
	}
	if _, ok := c.caps.cached(); !ok {
		t.Error("Capabilities not detected by Ping")
	}
	l := c.GetLock(uniqueName(t, rdb))
	mustTryLock(t, ctx, l, 0, 0)
	if n := commandCalls(t, rdb, "script|load"); n != len(allScripts) {
		t.Errorf("SCRIPT LOAD called %d times; want %d (Ping's, none on NOSCRIPT)", n, len(allScripts))
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	evs := rec.eventsOf(EventScriptReloaded)
	if len(evs) != 1 || evs[0].Name != l.kind.release.Name() {
		t.Errorf("script_reloaded events = %+v; want one, naming %s (after SCRIPT FLUSH), none for Ping's loads", evs, l.kind.release.Name())
	}
}

// Ping fails with the classified sentinel for each way a call would fail.
func TestPingErrors(t *testing.T) {
	authSrv := redistest.Start(t, "--requirepass", "s3cret")
	noScript := redistest.Start(t, "--rename-command", "script", "")
	refused := redis.NewClient(&redis.Options{Addr: closedPort(t), MaxRetries: -1, DialerRetries: 1, PoolSize: 1000})
	t.Cleanup(func() { refused.Close() })
	refusedCluster := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closedPort(t)}, PoolSize: 1000})
	t.Cleanup(func() { refusedCluster.Close() })
	refusedSentinel := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{closedPort(t)},
		MaxRetries: -1, PoolSize: 1000})
	t.Cleanup(func() { refusedSentinel.Close() })
	for _, tc := range []struct {
		name string
		rdb  redis.UniversalClient
		want error
		text string
	}{
		{"wrong password", authSrv.Client(t, func(o *redis.Options) { o.Password = "wrong" }), ErrAuth, ""},
		{"no password", authSrv.Client(t), ErrAuth, ""},
		{"unreachable", refused, ErrUnreachable, refused.Options().Addr},
		{"unreachable cluster", refusedCluster, ErrUnreachable, ""},
		{"unreachable sentinel", refusedSentinel, ErrUnreachable, ""},
		{"no SCRIPT", noScript.Client(t), ErrUnsupported, "SCRIPT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClient(t, tc.rdb, nil)
			err := c.Ping(testCtx(t, 20*time.Second))
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.text) {
				t.Fatalf("Ping = %v; want an error matching %v, saying %q", err, tc.want, tc.text)
			}
			if !strings.HasPrefix(err.Error(), "redisson: ping: ") || strings.Count(err.Error(), "redisson:") != 1 {
				t.Errorf("Ping's error %q is not in the one shape", err)
			}
		})
	}
	c := newClient(t, authSrv.Client(t, func(o *redis.Options) { o.Password = "s3cret" }), nil)
	if err := c.Ping(testCtx(t, 10*time.Second)); err != nil {
		t.Fatalf("Ping with the right password: %v", err)
	}
	c.Close()
	if err := c.Ping(context.Background()); !errors.Is(err, ErrClientClosed) {
		t.Errorf("Ping after Close = %v; want ErrClientClosed", err)
	}
}

// Concurrent callers share one detection, and its result is kept.
func TestCapabilitiesDetectedOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	got := make([]Capabilities, 16)
	errs := make([]error, 16)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = c.Capabilities(ctx)
		}()
	}
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i].Version != got[0].Version {
			t.Fatalf("caller %d: %+v, %v", i, got[i], errs[i])
		}
	}
	if _, err := c.Capabilities(ctx); err != nil {
		t.Fatal(err)
	}
	if n := commandCalls(t, rdb, "info"); n != 1 {
		t.Errorf("INFO called %d times for 17 Capabilities calls; want 1", n)
	}
	info := rdb.Info(ctx, "server").Val()
	caps := got[0]
	if caps.Server != "redis" && caps.Server != "valkey" || caps.Version == "" || !strings.Contains(info, "_version:"+caps.Version) {
		t.Errorf("Capabilities = %+v; want the server and version of INFO server:\n%s", caps, info)
	}
	for _, cmd := range capCommands {
		has := rdb.Do(ctx, "command", "info", cmd).Val().([]any)[0] != nil
		if caps.Has(cmd) != has {
			t.Errorf("Capabilities.Has(%q) = %v; COMMAND INFO says %v", cmd, caps.Has(cmd), has)
		}
	}
	if caps.BLMove != caps.Has("blmove") || caps.ClientNoEvict != caps.Has("client|no-evict") || caps.ShardedPubSub != caps.Has("ssubscribe") {
		t.Errorf("Capabilities' flags disagree with Missing: %+v", caps)
	}
}

// A server lacking the commands of a feature: Capabilities says so, and a
// call that needs them fails at once with ErrUnsupported naming the
// command, not with a script error or a wait that cannot end.
func TestUnsupportedFeatures(t *testing.T) {
	args := []string{"--rename-command", "blmove", ""}
	if redistest.ServerMajor(t) >= 7 { // older servers lack them already
		args = append(args, "--rename-command", "ssubscribe", "", "--rename-command", "spublish", "")
	}
	srv := redistest.Start(t, args...)
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.BLMove || caps.ShardedPubSub || !slices.Contains(caps.Missing, "BLMOVE") || !slices.Contains(caps.Missing, "SSUBSCRIBE") {
		t.Fatalf("Capabilities = %+v; want BLMOVE, SSUBSCRIBE and SPUBLISH missing", caps)
	}
	check := func(what string, err error, cmd string) {
		t.Helper()
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), cmd) {
			t.Errorf("%s = %v; want ErrUnsupported naming %s", what, err, cmd)
		}
	}
	q := GetBlockingQueue[string](c, uniqueName(t, rdb))
	_, err = q.Take(ctx)
	check("BlockingQueue.Take", err, "BLMOVE")
	_, _, err = q.Poll(ctx, 5*time.Second)
	check("BlockingQueue.Poll", err, "BLMOVE")
	topic := GetShardedTopic[string](c, uniqueName(t, rdb))
	start := time.Now()
	_, err = topic.Subscribe(ctx, func(string) {})
	check("ShardedTopic.Subscribe", err, "SSUBSCRIBE")
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("ShardedTopic.Subscribe took %v to fail; want it at once, not after the subscribe timeout", d)
	}
	_, err = topic.Publish(ctx, "x")
	check("ShardedTopic.Publish", err, "SPUBLISH")
}

// PubSubSharded forced on a Cluster whose masters lack SSUBSCRIBE: a
// waiting call fails at once with ErrUnsupported naming it, rather than
// waiting for a subscription Redis cannot confirm; Capabilities (every
// master's) says so.
func TestForcedShardedUnsupportedCluster(t *testing.T) {
	var args []string
	if redistest.ServerMajor(t) >= 7 { // older servers lack them already
		args = []string{"--rename-command", "ssubscribe", "", "--rename-command", "spublish", ""}
	}
	cl := redistest.StartClusterWith(t, 3, 0, args)
	rdb := cl.Client(t)
	c := newClient(t, rdb, &Options{PubSubMode: PubSubSharded})
	ctx := testCtx(t, time.Minute)
	caps, err := c.Capabilities(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if caps.ShardedPubSub || !slices.Contains(caps.Missing, "SSUBSCRIBE") {
		t.Fatalf("Capabilities = %+v; want SSUBSCRIBE missing", caps)
	}
	name := uniqueName(t, rdb)
	mustTryLock(t, ctx, c.GetLock(name), 0, time.Minute)
	start := time.Now()
	_, err = c.GetLock(name).TryLock(ctx, 30*time.Second, time.Minute)
	if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "SSUBSCRIBE") || !strings.Contains(err.Error(), name) {
		t.Fatalf("TryLock with a wait = %v; want ErrUnsupported naming SSUBSCRIBE and the lock", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("TryLock took %v to fail; want it at once", d)
	}
	// The plain mode needs no SSUBSCRIBE: the same cluster serves it.
	plain := newClient(t, cl.Client(t), &Options{PubSubMode: PubSubPlain})
	other := uniqueName(t, rdb)
	mustTryLock(t, ctx, plain.GetLock(other), 0, time.Minute)
	if ok, err := plain.GetLock(other).TryLock(ctx, 200*time.Millisecond, time.Minute); ok || err != nil {
		t.Fatalf("plain TryLock on a held lock = %v, %v; want false, nil", ok, err)
	}
}

// A server without COMMAND (a proxy that renames it away) passes Ping once
// the scripts load; Capabilities reports the refusal, naming COMMAND.
func TestPingWithoutCommandInfo(t *testing.T) {
	srv := redistest.Start(t, "--rename-command", "command", "")
	c := newClient(t, srv.Client(t), nil)
	ctx := testCtx(t, 20*time.Second)
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping = %v; want nil", err)
	}
	if _, err := c.Capabilities(ctx); !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "COMMAND") {
		t.Errorf("Capabilities = %v; want ErrUnsupported naming COMMAND", err)
	}
}
