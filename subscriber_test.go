package redisson

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clientLine is one line of CLIENT LIST, by field.
type clientLine map[string]string

func clientList(t *testing.T, ctx context.Context, rdb redis.UniversalClient) []clientLine {
	t.Helper()
	out, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatalf("CLIENT LIST: %v", err)
	}
	var lines []clientLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := clientLine{}
		for _, kv := range strings.Fields(l) {
			if k, v, ok := strings.Cut(kv, "="); ok {
				f[k] = v
			}
		}
		lines = append(lines, f)
	}
	return lines
}

// subscribedConn returns the id, flags and name of the (one) subscribed
// connection, "" when none.
func subscribedConn(t *testing.T, ctx context.Context, ctl *redis.Client) (id, flags, name string) {
	t.Helper()
	for _, l := range clientList(t, ctx, ctl) {
		if l["sub"] != "0" && l["sub"] != "" && strings.Contains(l["flags"], "P") {
			return l["id"], l["flags"], l["name"]
		}
	}
	return "", "", ""
}

// padNoEvict opens n idle connections to addr marked CLIENT NO-EVICT
// (about 20 KiB of client memory each), closed when the test ends.
func padNoEvict(t *testing.T, addr string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(conn, "*3\r\n$6\r\nCLIENT\r\n$8\r\nNO-EVICT\r\n$2\r\non\r\n"); err != nil {
			t.Fatal(err)
		}
		reply := make([]byte, 5)
		if _, err := io.ReadFull(conn, reply); err != nil || string(reply) != "+OK\r\n" {
			t.Fatalf("CLIENT NO-EVICT on: %q, %v", reply, err)
		}
	}
}

// The library's pub/sub connection is marked CLIENT NO-EVICT: when
// maxmemory-clients makes Redis evict every client it may, the connection
// a waiter listens on stays (same id, no replacement), and the waiter
// wakes on the unlock.
func TestPubSubConnNoEvict(t *testing.T) {
	redistest.RequireServer(t, 7, "CLIENT NO-EVICT")
	srv := redistest.Start(t)
	ctx := testCtx(t, time.Minute)
	// The test's own connection must survive the evictions it causes.
	ctl := srv.Client(t, func(o *redis.Options) {
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.Do(ctx, "client", "no-evict", "on").Err() }
	})
	// The user's OnConnect runs on the pub/sub connection too, first.
	rdb := srv.Client(t, func(o *redis.Options) {
		o.OnConnect = func(ctx context.Context, cn *redis.Conn) error { return cn.ClientSetName(ctx, "user-hook").Err() }
	})
	c := newClient(t, rdb, nil)
	holder := newClient(t, srv.Client(t), nil)
	name := uniqueName(t, ctl)
	channel := prefixName("redisson_lock__channel", name)
	held := holder.GetLock(name)
	mustTryLock(t, ctx, held, 0, time.Minute)
	got := make(chan error, 1)
	go func() {
		ok, err := c.GetLock(name).TryLock(ctx, 50*time.Second, time.Minute)
		if err == nil && !ok {
			err = context.DeadlineExceeded
		}
		got <- err
	}()
	var id, flags, connName string
	eventually(t, 10*time.Second, "the waiter's subscription", func() bool {
		id, flags, connName = subscribedConn(t, ctx, ctl)
		return id != "" && c.pubsub.engine.Waiters(objectChannel{name: channel}.engine()) == 1
	})
	if !strings.Contains(flags, "e") || connName != "user-hook" {
		t.Fatalf("pub/sub connection %s flags %q, name %q; want e (no-evict), and the name the user's OnConnect set", id, flags, connName)
	}
	// Redis never lowers the limit below 128 KiB, and evicts the largest
	// clients first: with more than that held by connections that cannot
	// be evicted, it evicts every one that can, the pub/sub connection
	// included unless it is marked.
	padNoEvict(t, srv.Addr(), 12) // before the limit: a new connection may be evicted before it is marked
	if err := ctl.ConfigSet(ctx, "maxmemory-clients", "128kb").Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the other clients evicted", func() bool {
		_ = srv.Client(t).Ping(ctx).Err() // a command, after which Redis evicts
		stats, _ := ctl.InfoMap(ctx, "stats").Result()
		return stats["Stats"]["evicted_clients"] != "0" && len(clientList(t, ctx, ctl)) <= 14
	})
	if err := ctl.ConfigSet(ctx, "maxmemory-clients", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if now, _, _ := subscribedConn(t, ctx, ctl); now != id {
		t.Fatalf("pub/sub connection %s after the evictions; want %s kept", now, id)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("waiter: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("waiter did not wake")
	}
	if s := c.Stats(); s.PubSubReplaced != 0 {
		t.Errorf("Stats.PubSubReplaced = %d; want 0, the connection was never lost", s.PubSubReplaced)
	}
}

// On Cluster the clone's OnConnect runs on every node's connections: the
// sharded (or plain) connection a waiter listens on is marked no-evict on
// its node.
func TestPubSubConnNoEvictCluster(t *testing.T) {
	redistest.RequireServer(t, 7, "CLIENT NO-EVICT")
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	held := c.GetLock(name)
	mustTryLock(t, ctx, held, 0, time.Minute)
	got := make(chan error, 1)
	go func() {
		_, err := c.GetLock(name).TryLock(ctx, 50*time.Second, time.Minute)
		got <- err
	}()
	node, err := rdb.MasterForKey(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	var flags string
	eventually(t, 20*time.Second, "the waiter's subscription", func() bool {
		for _, l := range clientList(t, ctx, node) {
			if (l["sub"] != "0" || l["ssub"] != "0") && strings.Contains(l["flags"], "P") {
				flags = l["flags"]
				return true
			}
		}
		return false
	})
	if !strings.Contains(flags, "e") {
		t.Errorf("pub/sub connection flags %q on %s; want e (no-evict)", flags, node.Options().Addr)
	}
	if err := held.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

// The clone's options are the user's once go-redis has filled them in
// again: a "none" (-1) the user chose stays none, and the user's OnConnect
// runs before ours (TestPubSubConnNoEvict). A Sentinel failover client is
// not cloned.
func TestSubscriberCloneKeepsOptions(t *testing.T) {
	em := &emitter{}
	user := redis.NewClient(&redis.Options{Addr: closedPort(t), ReadTimeout: -1, WriteTimeout: -2, MaxRetries: -1,
		MinRetryBackoff: -1, MaxRetryBackoff: -1, DialTimeout: 2 * time.Second, PoolSize: 7})
	defer user.Close()
	s := newSubscriber(user, topologyOf(user), em)
	defer s.close()
	clone, ok := s.rdb.(*redis.Client)
	if !ok || !s.owned || clone == user {
		t.Fatalf("subscriber of a *redis.Client: %T owned %v; want a clone", s.rdb, s.owned)
	}
	u, c := user.Options(), clone.Options()
	if u.ReadTimeout != c.ReadTimeout || u.WriteTimeout != c.WriteTimeout || u.MaxRetries != c.MaxRetries ||
		u.MinRetryBackoff != c.MinRetryBackoff || u.MaxRetryBackoff != c.MaxRetryBackoff ||
		u.DialTimeout != c.DialTimeout || u.PoolSize != c.PoolSize || u.Addr != c.Addr {
		t.Errorf("clone options %+v; want the user's %+v", c, u)
	}

	cu := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{closedPort(t)}, ReadTimeout: -1, MaxRedirects: -1})
	defer cu.Close()
	cs := newSubscriber(cu, topologyOf(cu), em)
	defer cs.close()
	if cs.cluster == nil || cs.cluster == cu || !cs.owned {
		t.Fatalf("subscriber of a ClusterClient: %v owned %v; want a clone", cs.cluster, cs.owned)
	}
	if a, b := cu.Options(), cs.cluster.Options(); a.ReadTimeout != b.ReadTimeout || a.MaxRedirects != b.MaxRedirects || a.WriteTimeout != b.WriteTimeout {
		t.Errorf("cluster clone options %+v; want the user's %+v", b, a)
	}

	fo := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "m", SentinelAddrs: []string{closedPort(t)}})
	defer fo.Close()
	if fs := newSubscriber(fo, topologyOf(fo), em); fs.owned || fs.rdb != fo {
		t.Errorf("subscriber of a failover client is a clone; want the user's client")
	}
}

// A user whose ACL refuses CLIENT NO-EVICT: the pub/sub connection works
// unmarked, and the refusal is one no_evict_refused event matching ErrAuth
// (NOPERM), however many connections are refused.
func TestPubSubNoEvictRefusedByACL(t *testing.T) {
	redistest.RequireServer(t, 7, "CLIENT NO-EVICT")
	srv := redistest.Start(t)
	ctx := testCtx(t, 30*time.Second)
	admin := srv.Client(t)
	if err := admin.Do(ctx, "acl", "setuser", "app", "on", ">pw", "~*", "&*", "+@all", "-client|no-evict").Err(); err != nil {
		t.Fatal(err)
	}
	rdb := srv.Client(t, func(o *redis.Options) { o.Username, o.Password = "app", "pw" })
	c, rec, _ := observedClientOn(t, rdb, nil)
	topic := GetTopic[string](c, uniqueName(t, admin))
	sub, err := topic.Subscribe(ctx, func(string) {})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	if n, err := topic.Publish(ctx, "x"); err != nil || n != 1 {
		t.Fatalf("Publish = %d, %v; want 1 subscription reached", n, err)
	}
	// Another connection of the engine's client: refused again, not
	// reported again.
	if err := c.sub.rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	evs := rec.eventsOf(EventNoEvictRefused)
	if len(evs) != 1 || !errors.Is(evs[0].Err, ErrAuth) {
		t.Fatalf("no_evict_refused events = %+v; want one matching ErrAuth", evs)
	}
}
