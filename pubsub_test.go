package redisson

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func pubsubConns(t testing.TB, rdb *redis.Client) int {
	t.Helper()
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		// A subscribed connection has sub= or ssub= above zero.
		for _, f := range strings.Fields(line) {
			if (strings.HasPrefix(f, "sub=") && f != "sub=0") || (strings.HasPrefix(f, "ssub=") && f != "ssub=0") {
				n++
				break
			}
		}
	}
	return n
}

// 1,000 goroutines waiting on 1,000 different locks share one pub/sub
// connection, and every one of them is woken by its own unlock.
func TestPubSubOneConnectionForManyWaiters(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	holderClient := newClient(t, rdb, nil)
	waiterClient := newClient(t, srv.Client(t), nil)
	ctx := testCtx(t, 2*time.Minute)
	const n = 1000
	names := make([]string, n)
	holders := make([]*Lock, n)
	for i := range names {
		names[i] = "pubsub:many:" + strconv.Itoa(i)
		holders[i] = holderClient.GetLock(names[i])
		mustTryLock(t, ctx, holders[i], 0, time.Minute)
	}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := waiterClient.GetLock(names[i])
			if err := l.Lock(ctx); err != nil {
				errs <- err
				return
			}
			errs <- l.Unlock(ctx)
		}()
	}
	eventually(t, 30*time.Second, "all 1000 channels subscribed", func() bool {
		return waiterClient.pubsub.stats().channels == n
	})
	eventually(t, 30*time.Second, "Redis sees 1000 channels", func() bool {
		return len(rdb.PubSubChannels(ctx, "redisson_lock__channel:*").Val()) == n
	})
	if got := pubsubConns(t, rdb); got != 1 {
		t.Fatalf("%d pub/sub connections for %d waiters; want 1", got, n)
	}
	for _, h := range holders {
		if err := h.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "every channel unsubscribed", func() bool {
		return waiterClient.pubsub.stats().channels == 0 && len(rdb.PubSubChannels(ctx, "redisson_lock__channel:*").Val()) == 0
	})
}

// Waiters survive CLIENT KILL TYPE pubsub: the connection comes back, the
// channels are subscribed again, and an unlock still wakes the waiter long
// before the holder's lease would have run out.
func TestPubSubSurvivesClientKill(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	holder := newClient(t, srv.Client(t), nil).GetLock(name)
	mustTryLock(t, ctx, holder, 0, time.Minute)

	got := make(chan error, 3)
	for i := 0; i < 3; i++ {
		go func() {
			l := c.GetLock(name)
			if err := l.Lock(ctx); err != nil {
				got <- err
				return
			}
			got <- l.Unlock(ctx)
		}()
	}
	channel := prefixName("redisson_lock__channel", name)
	subscribed := func() bool { return rdb.PubSubNumSub(ctx, channel).Val()[channel] == 1 }
	eventually(t, 10*time.Second, "waiters subscribed", subscribed)
	for round := 0; round < 2; round++ {
		if n, err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
			t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1 killed", n, err)
		}
		eventually(t, 15*time.Second, "re-subscribed after CLIENT KILL", subscribed)
	}
	start := time.Now()
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("waiter not woken after the pub/sub connection was killed (holder lease 60s)")
		}
	}
	t.Logf("3 waiters done %v after unlock", time.Since(start))
}

// A lost unlock message only delays a waiter until the holder's lease ends.
func TestPubSubLostMessageBoundedByTTL(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, 30*time.Second)
	name := uniqueName(t, rdb)
	// The holder's lease ends without any unlock message.
	mustTryLock(t, ctx, newClient(t, rdb, nil).GetLock(name), 0, 700*time.Millisecond)
	start := time.Now()
	l := c.GetLock(name)
	ok, err := l.TryLock(ctx, 20*time.Second, 0)
	if err != nil || !ok {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if waited := time.Since(start); waited > 10*time.Second {
		t.Fatalf("waited %v for a 700ms lease", waited)
	}
	l.Unlock(ctx)
}

// After a server restart, the presence check replaces the
// connection at most a few times and then leaves it alone.
func TestPubSubHealthCheckSettlesAfterRestart(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 50 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := "test:presence:" + t.Name()
	topic := GetTopic[string](c, name)
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	srv.Restart(t)
	eventually(t, 15*time.Second, "re-subscribed", func() bool { return rdb.PubSubNumSub(ctx, name).Val()[name] == 1 })
	time.Sleep(2 * time.Second)
	before := c.pubsub.stats().replaced
	time.Sleep(3 * time.Second)
	if n := c.pubsub.stats().replaced - before; n != 0 {
		t.Fatalf("%d replacements of a healthy connection", n)
	}
	t.Logf("replacements over the restart: %d", before)
	if _, err := topic.Publish(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("message not delivered after restart")
	}
}

// A Topic and the object waiters of a client share one channel entry per
// channel name. A topic listening to a lock's channel (to monitor unlocks,
// say), or a topic subscription still lingering there, may create the
// entry first; the lock's local waiters must still hear the unlock, and not
// wait out their whole wait.
func TestPubSubTopicOnLockChannelKeepsLockWaitersWoken(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	c := newClient(t, rdb, nil)
	holder := newClient(t, rdb, nil)
	name := "test:topic-lock:" + t.Name()
	monitor, err := GetTopic[string](c, prefixName("redisson_lock__channel", name), WithCodec(StringCodec{})).
		Subscribe(ctx, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer monitor.Close()
	hl := holder.GetLock(name)
	mustTryLock(t, ctx, hl, 0, time.Minute)
	go func() {
		time.Sleep(500 * time.Millisecond)
		_ = hl.Unlock(ctx)
	}()
	start := time.Now()
	ok, err := c.GetLock(name).TryLock(ctx, 8*time.Second, time.Minute)
	if err != nil || !ok {
		t.Fatalf("TryLock after the holder unlocked: %v, %v (after %v)", ok, err, time.Since(start))
	}
	if took := time.Since(start); took > 4*time.Second {
		t.Fatalf("waiter woke %v after a release at 500ms", took)
	}
}

// A pub/sub connection that goes silent (no RST) is noticed by the
// health check and replaced, so that waiters still hear unlocks. Only the
// pub/sub connection goes through the proxy.
func TestPubSubSilentConnectionReplacedByHealthCheck(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, direct)
	holder := newClient(t, direct, nil).GetLock(name)
	mustTryLock(t, ctx, holder, 0, time.Minute)

	var armed atomic.Bool // the next dial goes through the proxy; CLIENT SETNAME viaproxy
	rw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if !armed.CompareAndSwap(true, false) {
			return d.DialContext(ctx, network, addr)
		}
		conn, err := d.DialContext(ctx, network, proxy.Addr())
		if err != nil {
			return nil, err
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err = conn.Write([]byte("*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$8\r\nviaproxy\r\n")); err == nil {
			_, err = io.ReadFull(conn, make([]byte, 5)) // +OK\r\n
		}
		conn.SetDeadline(time.Time{})
		if err != nil {
			conn.Close()
		}
		return conn, err
	}})
	t.Cleanup(func() { rw.Close() })
	if err := rw.Ping(ctx).Err(); err != nil { // a direct command connection, idle in the pool
		t.Fatal(err)
	}
	armed.Store(true)
	c := newClient(t, rw, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	got := make(chan error, 1)
	w := c.GetLock(name)
	go func() { got <- w.Lock(ctx) }()
	eventually(t, 10*time.Second, "waiter subscribed through the proxy", func() bool {
		for _, line := range strings.Split(direct.ClientList(ctx).Val(), "\n") {
			if strings.Contains(line, " name=viaproxy ") && !strings.Contains(line, " sub=0 ") {
				return true
			}
		}
		return false
	})
	proxy.Partition(true)
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := rw.Ping(pctx).Err(); err != nil {
		t.Fatalf("commands go through the proxy too: %v", err)
	}
	time.Sleep(time.Second) // about 5 health-check intervals
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not woken 5s after the unlock (holder's lease 60s): the silent pub/sub connection was not replaced")
	}
	unlockN(t, ctx, w, 1)
}
