package redisson

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// go-redis resends a command whose reply was lost. One TryLock or Unlock
// must change the hold count by exactly one all the same.
func TestLockIdempotentAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, direct)
	l := c.GetLock(name)
	field := l.Owner()
	count := func() string { return direct.HGet(ctx, name, field).Val() }

	if err := viaProxy.Ping(ctx).Err(); err != nil { // connection ready and idle
		t.Fatal(err)
	}
	c.scripts.run(ctx, scriptLockAcquire, []string{"warm:{x}", "warm:{x}:t", "warm:{x}:c"}, 1, "w", 0, "", "")
	c.scripts.run(ctx, scriptLockRelease, []string{"warm:{x}", "warm:{x}:c", "warm:{x}:l"}, "w", 1, 1, 1000, "publish")

	steps := []struct {
		do   func() error
		want string
	}{
		{func() error { _, err := l.TryLock(ctx, 0, 0); return err }, "1"},
		{func() error { _, err := l.TryLock(holdCtx(t, ctx, l), 0, 0); return err }, "2"}, // re-entry
		{func() error { return l.Unlock(ctx) }, "1"},
		{func() error { return l.Unlock(ctx) }, ""},
	}
	for i, st := range steps {
		dropped := proxy.Dropped()
		proxy.DropNextReply()
		if err := st.do(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if proxy.Dropped() != dropped+1 {
			t.Fatalf("step %d: no reply was dropped", i)
		}
		if got := count(); got != st.want {
			t.Fatalf("step %d: hold count %q after one call with a lost reply; want %q", i, got, st.want)
		}
	}
	if n, _ := direct.Exists(ctx, name).Result(); n != 0 {
		t.Fatal("lock still exists after the last Unlock")
	}
	// The retried full release did not fail and published once: a waiter on
	// another client is not affected, and the lock is free.
	mustTryLock(t, ctx, newClient(t, direct, nil).GetLock(name), 0, 0)
}

// Without go-redis retries a lost acquire reply is an error; the hold it
// may have taken is undone before the call returns.
func TestLockLostReplyWithoutRetryLeavesNothing(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: -1})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, direct)
	l := c.GetLock(name)
	if err := viaProxy.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c.scripts.run(ctx, scriptLockAcquire, []string{"warm:{x}", "warm:{x}:t", "warm:{x}:c"}, 1, "w", 0, "", "")
	c.scripts.run(ctx, scriptLockRelease, []string{"warm:{x}", "warm:{x}:c", "warm:{x}:l"}, "w", 1, 1, 1000, "publish")
	proxy.DropNextReply()
	if ok, err := l.TryLock(ctx, 0, 0); err == nil {
		t.Fatalf("TryLock with a lost reply and no retries = %v, nil; want an error", ok)
	}
	if n, _ := direct.Exists(ctx, name).Result(); n != 0 {
		t.Fatalf("acquire with a lost reply left a hold: %v", direct.HGetAll(ctx, name).Val())
	}
	if n, _, _ := c.watchdog.stats(); n != 0 {
		t.Fatal("watchdog keeps a lease for a failed acquire")
	}
}

const holderEnv = "REDISSON_TEST_HOLDER"

// runHolderProcess takes the lock named in spec ("addr|name") with a
// watchdog lease, says HELD, and waits to be killed.
func runHolderProcess(spec string) {
	addr, name, _ := strings.Cut(spec, "|")
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	c, err := New(rdb, &Options{WatchdogTimeout: time.Second})
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	if err := c.GetLock(name).Lock(context.Background()); err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	fmt.Println("HELD")
	time.Sleep(time.Hour)
}

// A holder process killed with SIGKILL frees the lock within the watchdog
// timeout, and a waiter then acquires it.
func TestLockHolderKilled(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holderEnv+"="+redistest.Shared(t).Addr()+"|"+name)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "HELD" {
		t.Fatalf("holder process said %q", line)
	}
	// Renewed while alive: still held after two watchdog timeouts.
	time.Sleep(2 * time.Second)
	if n, _ := rdb.Exists(ctx, name).Result(); n != 1 {
		t.Fatal("holder's lock not kept alive by its watchdog")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	w := newClient(t, rdb, nil).GetLock(name)
	ok, err := w.TryLock(ctx, 20*time.Second, 0)
	if err != nil || !ok {
		t.Fatalf("waiter TryLock after holder was killed = %v, %v", ok, err)
	}
	// The lease was at most 1s when the holder died; allow a wide margin.
	if waited := time.Since(killed); waited > 5*time.Second {
		t.Fatalf("lock freed %v after SIGKILL; want within the 1s watchdog timeout (+margin)", waited)
	}
	w.Unlock(ctx)
}

// A server restart with no persistence loses every lock: holders are told,
// waiters acquire, nothing hangs.
func TestLockServerRestart(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: 300 * time.Millisecond, PubSubHealthCheck: 100 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	holder := c.GetLock(name)
	mustTryLock(t, ctx, holder, 0, 0)
	srv.Restart(t)
	select {
	case <-holder.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("holder not told that its lock vanished with the restart")
	}
	if err := holder.Err(); !errors.Is(err, ErrLeaseLost) {
		t.Fatalf("holder Err = %v; want ErrLeaseLost", err)
	}
	w := c.GetLock(name)
	mustTryLock(t, ctx, w, 5*time.Second, 0)
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A holder partitioned from Redis learns that its lease is lost before
// another owner can acquire, even though go-redis keeps the stuck renewal
// waiting for its own timeouts; afterwards the same handle acquires afresh
// (new fencing token, full lease) rather than mistaking its stale field in
// Redis for its own hold.
func TestLockPartitionedHolderToldFirst(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr()}) // go-redis defaults: 3s timeouts, 3 retries
	t.Cleanup(func() { viaProxy.Close() })
	const timeout = 600 * time.Millisecond
	c := newClient(t, viaProxy, &Options{WatchdogTimeout: timeout})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, direct)
	l := c.GetLock(name)
	mustTryLock(t, ctx, l, 0, 0)
	oldToken, oldOwner := l.Token(), l.Owner()
	toldAt := make(chan time.Time, 1)
	go func() { <-l.Done(); toldAt <- time.Now() }()

	proxy.Partition(true)
	other := newClient(t, direct, nil).GetLock(name)
	ok, err := other.TryLock(ctx, 10*time.Second, 0)
	if err != nil || !ok {
		t.Fatalf("other owner TryLock = %v, %v", ok, err)
	}
	acquired := time.Now()
	select {
	case <-l.Done():
	default:
		t.Fatal("another owner acquired while the partitioned holder still believed it held the lock")
	}
	if !errors.Is(l.Err(), ErrLeaseLost) {
		t.Fatalf("Err = %v; want ErrLeaseLost", l.Err())
	}
	t.Logf("holder told %v before the other owner acquired", acquired.Sub(<-toldAt))
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	proxy.Partition(false)
	proxy.CloseAll() // drop the stuck connections
	mustTryLock(t, ctx, l, 5*time.Second, 10*time.Second)
	if l.Token() <= oldToken+1 {
		t.Fatalf("token %d after re-acquiring; want above %d (the other owner's)", l.Token(), oldToken+1)
	}
	if l.Owner() == oldOwner {
		t.Fatal("handle kept its owner field after losing its hold")
	}
	if d, _ := l.RemainingLease(ctx); d < 5*time.Second {
		t.Fatalf("RemainingLease %v after TryLock with a 10s lease", d)
	}
	if err := l.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Waiting on a lock key without expiry (written by something else) polls
// now and then, not in a busy loop.
func TestLockNoExpiryHolderNoBusyLoop(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	rdb.HSet(ctx, name, "someone:1", 1)
	rdb.ConfigResetStat(ctx)
	ok, err := c.GetLock(name).TryLock(ctx, time.Second, 0)
	if ok || err != nil {
		t.Fatalf("TryLock = %v, %v; want false, nil", ok, err)
	}
	if n := commandCalls(t, rdb, "evalsha"); n > 10 {
		t.Fatalf("%d acquire attempts in a 1s wait; want a few", n)
	}
}
