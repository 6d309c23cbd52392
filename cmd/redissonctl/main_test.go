package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestMain(m *testing.M) { redistest.Main(m) }

var seq atomic.Uint64

// result is one run of the binary.
type result struct {
	code           int
	stdout, stderr string
}

// ctl is the binary, built once per TestCommand.
type ctl struct{ bin string }

func (c ctl) run(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(c.bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	return r
}

// want fails the test unless r exited with code.
func (r result) want(t *testing.T, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d; want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.stdout, r.stderr)
	}
}

// oneLineError checks r failed with one line on stderr, no stack trace.
func (r result) oneLineError(t *testing.T, what string) {
	t.Helper()
	lines := strings.Split(strings.TrimRight(r.stderr, "\n"), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "redissonctl: ") || strings.Contains(r.stderr, "goroutine") {
		t.Errorf("%s: stderr %q; want one line \"redissonctl: ...\"", what, r.stderr)
	}
}

// name returns a unique object name, whose keys are deleted at the end.
func name(t *testing.T, rdb redis.UniversalClient) string {
	n := fmt.Sprintf("ctl:%s:%d", strings.ReplaceAll(t.Name(), "/", "."), seq.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		rdb.Del(ctx, n, "redisson_lock_token:{"+n+"}", "redisson_lock_queue:{"+n+"}", "redisson_lock_timeout:{"+n+"}",
			"redisson_lock_alive:{"+n+"}")
	})
	return n
}

func newClient(t *testing.T, rdb redis.UniversalClient) *redisson.Client {
	c, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestCommand builds redissonctl once and runs it against real servers.
func TestCommand(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "redissonctl")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	c := ctl{bin: bin}
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()

	t.Run("Help", func(t *testing.T) {
		r := c.run(t, "", "-h")
		r.want(t, exitOK, "-h")
		for _, s := range []string{"inspect KIND NAME", "list [PATTERN]", "force-unlock", "watch", "-tls-ca", "REDISCLI_AUTH",
			"0  ok", "1  error talking to Redis", "2  bad usage", "3  not found", "4  force-unlock, reset, requeue or purge refused", "--help"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("-h does not mention %q:\n%s", s, r.stdout)
			}
		}
	})

	t.Run("InspectScheduler", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		t.Cleanup(func() {
			rdb.Del(ctx, "redisson_scheduler:{"+n+"}", "redisson_scheduler_state:{"+n+"}")
		})
		r := c.run(t, "", addr, "inspect", "scheduler", n)
		r.want(t, exitNotFound, "inspect scheduler, no jobs")
		if err := cl.GetScheduler(n).Add(ctx, redisson.JobSpec{Name: "rollup", Every: time.Hour}); err != nil {
			t.Fatal(err)
		}
		r = c.run(t, "", addr, "inspect", "scheduler", n)
		r.want(t, exitOK, "inspect scheduler")
		for _, s := range []string{"scheduler", n, "rollup", "every 1h0m0s", "next"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("text output lacks %q:\n%s", s, r.stdout)
			}
		}
	})

	t.Run("InspectElection", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		t.Cleanup(func() { rdb.Del(ctx, "redisson_election:{"+n+"}") })
		r := c.run(t, "", addr, "inspect", "election", n)
		r.want(t, exitNotFound, "inspect election, nobody campaigned")
		if !strings.Contains(r.stdout, "none") {
			t.Errorf("text output lacks the missing leader:\n%s", r.stdout)
		}
		lead, err := cl.GetElection(n).Campaign(ctx, "host-7")
		if err != nil {
			t.Fatal(err)
		}
		defer lead.Resign(ctx)
		r = c.run(t, "", addr, "inspect", "election", n)
		r.want(t, exitOK, "inspect election")
		for _, s := range []string{"election", n, "host-7", strconv.FormatInt(lead.Term(), 10), "held", cl.ID()} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("text output lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run(t, "", addr, "-json", "inspect", "election", n)
		r.want(t, exitOK, "inspect election -json")
		var info struct {
			Leader *redisson.Leader
			Lock   redisson.LockInfo
		}
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if info.Leader == nil || *info.Leader != (redisson.Leader{Value: "host-7", Term: lead.Term()}) || !info.Lock.Held {
			t.Errorf("-json = %+v; want leader host-7, term %d, lock held", info, lead.Term())
		}
	})

	t.Run("InspectGoLock", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		l := cl.GetLock(n)
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Unlock(ctx)
		r := c.run(t, "", addr, "inspect", "lock", n)
		r.want(t, exitOK, "inspect lock")
		for _, s := range []string{"lock", n, "held", l.Owner(), cl.ID(), strconv.FormatInt(l.Token(), 10), "OWNER"} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("text output lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run(t, "", "inspect", "lock", n, addr, "-json")
		r.want(t, exitOK, "inspect lock -json")
		var info redisson.LockInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if !info.Held || len(info.Owners) != 1 || info.Owners[0].ClientID != cl.ID() || info.Owners[0].Holds != 1 ||
			info.Owners[0].Field != l.Owner() || info.Token != l.Token() || info.Lease <= 0 || info.Lease > 30*time.Second {
			t.Errorf("-json = %+v; want the Go holder %s with a lease up to 30s and token %d", info, l.Owner(), l.Token())
		}
	})

	t.Run("InspectRedissonLock", func(t *testing.T) {
		ctx := context.Background()
		n := name(t, rdb)
		javaID, thread := uuid.NewString(), int64(7321)
		field := javaID + ":" + strconv.FormatInt(thread, 10)
		rdb.HSet(ctx, n, field, 3) // as Java's RLock writes a thread re-entered thrice
		rdb.PExpire(ctx, n, 25*time.Second)
		rdb.Set(ctx, "redisson_lock_token:{"+n+"}", 42, 0)
		r := c.run(t, "", addr, "inspect", "lock", n)
		r.want(t, exitOK, "inspect lock")
		if !strings.Contains(r.stdout, field) || !strings.Contains(r.stdout, "42") {
			t.Errorf("text output lacks the Java owner or token:\n%s", r.stdout)
		}
		r = c.run(t, "", addr, "-json", "inspect", "lock", n)
		r.want(t, exitOK, "inspect lock -json")
		var info redisson.LockInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if len(info.Owners) != 1 || info.Owners[0].ClientID != javaID || info.Owners[0].Thread != thread ||
			info.Owners[0].Holds != 3 || info.Token != 42 || info.Lease <= 0 || info.Lease > 25*time.Second {
			t.Errorf("-json = %+v; want Java owner %s with 3 holds, token 42", info, field)
		}
	})

	t.Run("List", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		l := cl.GetLock(n)
		if ok, err := l.TryLock(ctx, 0, time.Minute); err != nil || !ok {
			t.Fatal(ok, err)
		}
		defer l.Unlock(ctx)
		if _, _, err := redisson.GetMap[string, string](cl, n+":map").Put(ctx, "k", "v"); err != nil {
			t.Fatal(err)
		}
		defer rdb.Del(ctx, n+":map")
		mc, timeouts := n+":mc", "redisson__timeout__set:{"+n+":mc}"
		if _, _, err := redisson.GetMapCache[string, string](cl, mc).PutWithTTL(ctx, "k", "v", time.Hour, 0); err != nil {
			t.Fatal(err)
		}
		defer rdb.Del(ctx, mc, timeouts)
		bq, capacity := n+":bq", "redisson_bqs:{"+n+":bq}"
		if _, err := redisson.GetBoundedBlockingQueue[string](cl, bq).TrySetCapacity(ctx, 3); err != nil {
			t.Fatal(err)
		}
		defer rdb.Del(ctx, capacity)
		r := c.run(t, "", addr, "list", "*"+n+"*")
		r.want(t, exitOK, "list")
		if !hasRow(r.stdout, n, "lock") || !hasRow(r.stdout, n+":map", "map") || !hasRow(r.stdout, "redisson_lock_token:{"+n+"}", "lock-token") {
			t.Errorf("list lacks the lock, its token or the map:\n%s", r.stdout)
		}
		if !hasRow(r.stdout, mc, "mapcache") || !hasRow(r.stdout, timeouts, "mapcache-expiry") || !hasRow(r.stdout, capacity, "queue-capacity") {
			t.Errorf("list lacks the map cache, its expiry zset or the queue's capacity:\n%s", r.stdout)
		}
		r = c.run(t, "", addr, "-json", "list", "*"+n+"*")
		r.want(t, exitOK, "list -json")
		kinds := map[string]redisson.ObjectKind{}
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var o redisson.ObjectInfo
			if err := json.Unmarshal([]byte(line), &o); err != nil {
				t.Fatalf("list -json line %q: %v", line, err)
			}
			kinds[o.Key] = o.Kind
		}
		if kinds[n] != redisson.KindLock || kinds[n+":map"] != redisson.KindMap || kinds[mc] != redisson.KindMapCache ||
			kinds[capacity] != redisson.KindQueueCapacity {
			t.Errorf("list -json kinds = %v", kinds)
		}
	})

	t.Run("InspectQueue", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		capacity, dead := "redisson_bqs:{"+n+"}", uuid.NewString()
		inflight := "redisson_bqueue_inflight:{" + n + "}:" + dead
		defer rdb.Del(ctx, capacity, inflight)
		q := redisson.GetBoundedBlockingQueue[string](cl, n)
		if _, err := q.TrySetCapacity(ctx, 5); err != nil {
			t.Fatal(err)
		}
		if ok, err := q.Offer(ctx, "job-1"); err != nil || !ok {
			t.Fatal(ok, err)
		}
		rdb.RPush(ctx, inflight, "x") // left by a client that died before its settle
		rdb.Decr(ctx, capacity)
		r := c.run(t, "", addr, "inspect", "queue", n)
		r.want(t, exitOK, "inspect queue")
		for _, s := range []string{n, `"job-1"`, "3 free of 5", dead} {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("text output lacks %q:\n%s", s, r.stdout)
			}
		}
		r = c.run(t, "", addr, "-json", "inspect", "queue", n)
		r.want(t, exitOK, "inspect queue -json")
		var info redisson.QueueInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if info.Length != 1 || info.Head != "job-1" || info.Free != 3 || info.Capacity != 5 || info.InFlight[dead] != 1 {
			t.Errorf("-json = %+v; want 1 waiting, head job-1, 3 free of 5, 1 in flight on %s", info, dead)
		}
		c.run(t, "", addr, "inspect", "queue", n+":none").want(t, exitNotFound, "inspect queue of no queue")
	})

	t.Run("InspectMapCache", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		n := name(t, rdb)
		timeouts := "redisson__timeout__set:{" + n + "}"
		defer rdb.Del(ctx, timeouts)
		if _, _, err := redisson.GetMapCache[string, string](cl, n).PutWithTTL(ctx, "session", "alice", time.Hour, 0); err != nil {
			t.Fatal(err)
		}
		r := c.run(t, "", addr, "inspect", "mapcache", n)
		r.want(t, exitOK, "inspect mapcache")
		if !strings.Contains(r.stdout, `"session"`) || !strings.Contains(r.stdout, `"alice"`) || !strings.Contains(r.stdout, "IDLE LEFT") {
			t.Errorf("text output lacks the entry:\n%s", r.stdout)
		}
		r = c.run(t, "", addr, "-json", "inspect", "mapcache", n)
		r.want(t, exitOK, "inspect mapcache -json")
		var info redisson.MapCacheInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
			t.Fatalf("-json: %v\n%s", err, r.stdout)
		}
		if info.Size != 1 || len(info.Entries) != 1 || info.Entries[0].Value != "alice" || info.Entries[0].TTL <= 0 || info.Entries[0].TTL > time.Hour {
			t.Errorf("-json = %+v; want one entry alice with up to 1h left", info)
		}
	})

	t.Run("ListCluster", func(t *testing.T) {
		ctx := context.Background()
		cluster := redistest.SharedCluster(t)
		crdb := cluster.Client(t)
		cl := newClient(t, crdb)
		base := fmt.Sprintf("ctl:listcluster:%d:", seq.Add(1))
		var names []string
		for i := range 12 {
			n := base + strconv.Itoa(i)
			names = append(names, n)
			if _, _, err := redisson.GetMap[string, string](cl, n).Put(ctx, "k", "v"); err != nil {
				t.Fatal(err)
			}
			defer crdb.Del(ctx, n)
		}
		r := c.run(t, "", "-cluster", strings.Join(cluster.Addrs(), ","), "list", base+"*")
		r.want(t, exitOK, "list on cluster")
		nodes := map[string]bool{}
		for _, n := range names {
			row := rowOf(r.stdout, n)
			if len(row) != 6 || row[1] != "map" {
				t.Errorf("row of %s = %v; want KEY KIND NAME TYPE TTL NODE, kind map\n%s", n, row, r.stdout)
				continue
			}
			nodes[row[5]] = true
		}
		if len(nodes) != 3 {
			t.Errorf("maps found on nodes %v; want all 3 masters", nodes)
		}
	})

	t.Run("ForceUnlockWakesWaiter", func(t *testing.T) {
		ctx := context.Background()
		n := name(t, rdb)
		holder := newClient(t, rdb).GetLock(n)
		if err := holder.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		waiter := newClient(t, rdb).GetLock(n)
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		got := make(chan error, 1)
		go func() { got <- waiter.Lock(wctx) }()
		cl := newClient(t, rdb)
		deadline := time.Now().Add(10 * time.Second)
		for { // the waiter subscribed: it waits on the channel, not a lease
			info, err := cl.InspectLock(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			if info.Subscribers >= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the waiter never subscribed")
			}
			time.Sleep(20 * time.Millisecond)
		}
		r := c.run(t, "", addr, "force-unlock", "-yes", "lock", n)
		r.want(t, exitOK, "force-unlock -yes")
		if !strings.Contains(r.stdout, "force-unlocked") || !strings.Contains(r.stdout, holder.Owner()) {
			t.Errorf("force-unlock output %q; want it to name the holder %s", r.stdout, holder.Owner())
		}
		select {
		case err := <-got:
			if err != nil {
				t.Fatalf("waiter: %v", err)
			}
		case <-time.After(20 * time.Second): // the holder's lease is 30s: only the message wakes it sooner
			t.Fatal("the waiter did not wake after force-unlock")
		}
		if ok, err := waiter.IsHeld(ctx); err != nil || !ok {
			t.Errorf("waiter IsHeld = %v, %v; want true", ok, err)
		}
		waiter.Unlock(ctx)
	})

	t.Run("ForceUnlockRefused", func(t *testing.T) {
		ctx := context.Background()
		n := name(t, rdb)
		l := newClient(t, rdb).GetLock(n)
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Unlock(ctx)
		for _, stdin := range []string{"n\n", ""} {
			r := c.run(t, stdin, addr, "force-unlock", "lock", n)
			r.want(t, exitRefused, fmt.Sprintf("force-unlock with %q on stdin", stdin))
			if !strings.Contains(r.stderr, "[y/N]") || !strings.Contains(r.stderr, "refused") {
				t.Errorf("stderr %q; want the question and the refusal", r.stderr)
			}
		}
		if ok, err := l.IsHeld(ctx); err != nil || !ok {
			t.Errorf("after refusals IsHeld = %v, %v; want still held", ok, err)
		}
		r := c.run(t, "y\n", addr, "force-unlock", "lock", n)
		r.want(t, exitOK, "force-unlock answered y")
		r = c.run(t, "", addr, "-yes", "force-unlock", "lock", n)
		r.want(t, exitNotFound, "force-unlock of a free lock")
	})

	t.Run("ForceUnlockFairAndReadWrite", func(t *testing.T) {
		ctx := context.Background()
		cl := newClient(t, rdb)
		fair := name(t, rdb)
		if err := cl.GetFairLock(fair).Lock(ctx); err != nil {
			t.Fatal(err)
		}
		rw := name(t, rdb)
		if err := cl.GetReadWriteLock(rw).ReadLock().Lock(ctx); err != nil {
			t.Fatal(err)
		}
		w := name(t, rdb)
		if err := cl.GetReadWriteLock(w).WriteLock().Lock(ctx); err != nil {
			t.Fatal(err)
		}
		for kind, n := range map[string]string{"fairlock": fair, "rwlock": rw, "rwlock ": w} {
			kind = strings.TrimSpace(kind)
			c.run(t, "", addr, "-yes", "force-unlock", kind, n).want(t, exitOK, "force-unlock "+kind+" "+n)
			if got := rdb.Exists(ctx, n).Val(); got != 0 {
				t.Errorf("%s %s still exists after force-unlock", kind, n)
			}
			c.run(t, "", addr, "inspect", kind, n).want(t, exitNotFound, "inspect after force-unlock")
		}
	})

	t.Run("SentinelAndPassword", func(t *testing.T) {
		ctx := context.Background()
		s := redistest.StartSentinel(t, nil)
		srdb := s.Client(t)
		n := name(t, srdb)
		l := newClient(t, srdb).GetLock(n)
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Unlock(ctx)
		r := c.run(t, "", "-sentinel", strings.Join(s.SentinelAddrs(), ","), "-master", s.MasterName(), "-json", "inspect", "lock", n)
		r.want(t, exitOK, "inspect through Sentinel")
		var info redisson.LockInfo
		if err := json.Unmarshal([]byte(r.stdout), &info); err != nil || len(info.Owners) != 1 || info.Owners[0].Field != l.Owner() {
			t.Errorf("through Sentinel: %+v, %v; want the holder %s", info, err, l.Owner())
		}
		c.run(t, "", "-sentinel", s.SentinelAddrs()[0], "inspect", "lock", n).want(t, exitUsage, "-sentinel without -master")

		secured := redistest.Start(t)
		if _, err := secured.Do(ctx, "ACL", "SETUSER", "ops", "on", ">s3cret", "~*", "&*", "+@all"); err != nil {
			t.Fatal(err)
		}
		sa := "-redis=" + secured.Addr()
		c.run(t, "", sa, "-user", "ops", "-a", "wrong", "inspect", "lock", n).want(t, exitRedis, "a wrong password")
		c.run(t, "", sa, "-user", "ops", "-a", "s3cret", "inspect", "lock", n).want(t, exitNotFound, "-a")
		c.run(t, "", sa, "-user", "ops", "-password", "s3cret", "inspect", "lock", n).want(t, exitNotFound, "-password")
		cmd := exec.Command(c.bin, sa, "-user", "ops", "inspect", "lock", n)
		cmd.Env = append(cmd.Environ(), "REDISCLI_AUTH=s3cret")
		if err := cmd.Run(); err == nil || cmd.ProcessState.ExitCode() != exitNotFound {
			t.Errorf("REDISCLI_AUTH: %v; want exit %d (authenticated, lock not held)", err, exitNotFound)
		}
	})

	t.Run("Watch", func(t *testing.T) {
		ctx := context.Background()
		n := name(t, rdb)
		l := newClient(t, rdb).GetFairLock(n)
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Unlock(ctx)
		r := c.run(t, "", addr, "watch", "-count", "2", "-interval", "100ms", "fairlock", n)
		r.want(t, exitOK, "watch -count 2")
		if got := strings.Count(r.stdout, "redissonctl watch fairlock"); got != 2 {
			t.Errorf("watch -count 2 printed %d frames; want 2\n%s", got, r.stdout)
		}
		if strings.Count(r.stdout, l.Owner()) != 2 || !strings.Contains(r.stdout, "(refresh 2)") {
			t.Errorf("frames lack the holder %s:\n%s", l.Owner(), r.stdout)
		}
	})

	t.Run("BadInput", func(t *testing.T) {
		ctx := context.Background()
		n := name(t, rdb)
		rdb.Set(ctx, n, "a string", 0)
		for _, tc := range []struct {
			args []string
			code int
		}{
			{[]string{addr}, exitUsage},
			{[]string{addr, "frobnicate"}, exitUsage},
			{[]string{addr, "inspect", "widget", n}, exitUsage},
			{[]string{addr, "inspect", "lock"}, exitUsage},
			{[]string{addr, "inspect", "lock", ""}, exitUsage},
			{[]string{addr, "force-unlock", "semaphore", n}, exitUsage},
			{[]string{addr, "-codec", "xml", "inspect", "bucket", n}, exitUsage},
			{[]string{addr, "-nosuchflag"}, exitUsage},
			{[]string{addr, "-tls-ca", "/nonexistent/ca.pem", "inspect", "lock", n}, exitUsage},
			{[]string{"-cluster", "127.0.0.1:1", "-db", "2", "inspect", "lock", n}, exitUsage},
			{[]string{addr, "-count", "-1", "watch", "lock", n}, exitUsage},
			{[]string{addr, "list", "a*", "b*"}, exitUsage},
			{[]string{addr, "inspect", "lock", n}, exitUsage}, // a string, not a lock hash
			{[]string{addr, "inspect", "map", n}, exitUsage},
			{[]string{addr, "inspect", "lock", n + ":free"}, exitNotFound},
			{[]string{addr, "inspect", "semaphore", n + ":none"}, exitNotFound},
			{[]string{"-redis", "127.0.0.1:1", "-timeout", "2s", "inspect", "lock", n}, exitRedis},
		} {
			r := c.run(t, "", tc.args...)
			r.want(t, tc.code, strings.Join(tc.args, " "))
			r.oneLineError(t, strings.Join(tc.args, " "))
		}
		if got := rdb.Get(ctx, n).Val(); got != "a string" {
			t.Errorf("the string became %q", got)
		}
	})
}

// rowOf returns the fields of the table row whose first column is key.
func rowOf(out, key string) []string {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == key {
			return f
		}
	}
	return nil
}

// hasRow reports whether the table has a row for key of kind.
func hasRow(out, key, kind string) bool {
	row := rowOf(out, key)
	return len(row) >= 2 && row[1] == kind
}
