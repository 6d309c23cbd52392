package redistest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	clusterTimeout = 30 * time.Second // wait for cluster_state:ok / routing
	clusterSlots   = 16384
)

// Cluster is a Redis Cluster made of Servers started with --cluster-enabled
// yes, --cluster-config-file <dir>/nodes-<port>.conf and
// --cluster-node-timeout 2000. Its methods are safe for concurrent use.
type Cluster struct {
	masters, replicas int
	servers           []*Server
}

// StartCluster starts masters*(1+replicasPerMaster) servers, joins them with
// "redis-cli --cluster create ... --cluster-replicas R --cluster-yes" and
// waits (up to 30 s) until every node reports cluster_state:ok with all
// 16384 slots assigned and every replica's link to its master is up. The
// servers are stopped by tb.Cleanup. redis-cli requires masters >= 3.
func StartCluster(tb testing.TB, masters, replicasPerMaster int) *Cluster {
	tb.Helper()
	return StartClusterWith(tb, masters, replicasPerMaster, nil)
}

// StartClusterWith is StartCluster with extraArgs appended to every node's
// command line; they override the defaults, for example
// "--cluster-node-timeout", "1000" for failovers in about 2 s, or
// "--repl-ping-replica-period", "1" so that replicas show up in CLUSTER
// SLOTS sooner.
func StartClusterWith(tb testing.TB, masters, replicasPerMaster int, extraArgs []string) *Cluster {
	tb.Helper()
	bin, cli := ServerPath(tb)
	c, err := startClusterWith(bin, cli, tb.TempDir(), masters, replicasPerMaster, extraArgs)
	if c != nil {
		tb.Cleanup(c.Stop)
	}
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return c
}

// startCluster is StartCluster without testing.TB; the caller stops the
// returned cluster (non-nil whenever servers were started, even on error).
func startCluster(bin, cli, root string, masters, replicas int) (*Cluster, error) {
	return startClusterWith(bin, cli, root, masters, replicas, nil)
}

// startClusterWith tries twice: on a loaded machine the nodes have been seen
// not to agree within redis-cli's wait ("Waiting for the cluster to join"
// for a minute); a second try, on fresh nodes, is not a retry of what a test
// checks but of its set-up.
func startClusterWith(bin, cli, root string, masters, replicas int, extraArgs []string) (*Cluster, error) {
	c, err := startClusterOnce(bin, cli, root, masters, replicas, extraArgs)
	if err == nil || c == nil || len(c.servers) == 0 {
		return c, err
	}
	c.Stop()
	c2, err2 := startClusterOnce(bin, cli, filepath.Join(root, "again"), masters, replicas, extraArgs)
	if err2 != nil {
		return c2, fmt.Errorf("%w\n(a first try failed too: %v)", err2, err)
	}
	return c2, nil
}

func startClusterOnce(bin, cli, root string, masters, replicas int, extraArgs []string) (*Cluster, error) {
	if masters < 3 {
		return nil, fmt.Errorf("StartCluster: need at least 3 masters for redis-cli --cluster create, got %d", masters)
	}
	if replicas < 0 {
		return nil, fmt.Errorf("StartCluster: negative replicasPerMaster %d", replicas)
	}
	c := &Cluster{masters: masters, replicas: replicas}
	for i := 0; i < masters*(1+replicas); i++ {
		dir := filepath.Join(root, fmt.Sprintf("node%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return c, err
		}
		s, err := newServer(bin, dir, func(port int) []string {
			return append([]string{
				"--cluster-enabled", "yes",
				"--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", port)),
				"--cluster-node-timeout", "2000",
			}, extraArgs...)
		})
		if err != nil {
			return c, err
		}
		c.servers = append(c.servers, s)
	}

	args := append([]string{"--cluster", "create"}, c.Addrs()...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput()
	if err != nil {
		return c, fmt.Errorf("%s %s: %v\n%s", cli, strings.Join(args, " "), err, tailLines(string(out), 40))
	}
	if err := c.waitHealthy(clusterTimeout); err != nil {
		return c, fmt.Errorf("%w\nredis-cli output:\n%s", err, tailLines(string(out), 40))
	}
	return c, nil
}

// Addrs returns the addresses of all nodes ("127.0.0.1:port"), in start
// order. redis-cli makes the first `masters` of them the initial masters.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.Addr()
	}
	return addrs
}

// Servers returns the node servers, in the order of Addrs. The slice is a
// copy; the Servers are shared.
func (c *Cluster) Servers() []*Server { return append([]*Server(nil), c.servers...) }

// Stop stops every node. Stopping twice is harmless.
func (c *Cluster) Stop() {
	for _, s := range c.servers {
		s.Stop()
	}
}

// WaitHealthy waits up to timeout until every running node reports
// cluster_state:ok with all slots assigned and all replicas are linked,
// failing the test with per-node details otherwise. Use it after
// restarting, killing or failing over nodes.
func (c *Cluster) WaitHealthy(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	if err := c.waitHealthy(timeout); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
}

// Client returns a go-redis cluster client seeded with Addrs, with opts
// applied. Before returning it waits (up to 30 s) until the client can PING
// every master and SET/DEL probe keys spread over many slots. The client is
// closed by tb.Cleanup.
func (c *Cluster) Client(tb testing.TB, opts ...func(*redis.ClusterOptions)) *redis.ClusterClient {
	tb.Helper()
	o := &redis.ClusterOptions{Addrs: c.Addrs()}
	for _, f := range opts {
		f(o)
	}
	cc := redis.NewClusterClient(o)
	tb.Cleanup(func() { _ = cc.Close() })
	deadline := time.Now().Add(clusterTimeout)
	for {
		err := probeCluster(cc)
		if err == nil {
			return cc
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: cluster client for %v cannot route after %v: %v", c.Addrs(), clusterTimeout, err)
		}
		cc.ReloadState(context.Background())
		time.Sleep(100 * time.Millisecond)
	}
}

var probeSeq atomic.Int64

// probeCluster checks that cc reaches every master and can write keys in 64
// different slots.
func probeCluster(cc *redis.ClusterClient) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	})
	if err != nil {
		return fmt.Errorf("PING masters: %w", err)
	}
	n := probeSeq.Add(1)
	keys := make([]string, 64)
	for i := range keys {
		keys[i] = fmt.Sprintf("redistest:probe:%d:{%d}", n, i)
	}
	_, err = cc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Set(ctx, k, "1", time.Minute)
		}
		for _, k := range keys {
			p.Del(ctx, k)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("SET/DEL probe keys: %w", err)
	}
	return nil
}

// waitHealthy polls all running nodes until the cluster is healthy.
func (c *Cluster) waitHealthy(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		problems := c.problems()
		if len(problems) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var b strings.Builder
			fmt.Fprintf(&b, "cluster %v not healthy after %v:\n  %s", c.Addrs(), timeout, strings.Join(problems, "\n  "))
			for _, s := range c.servers {
				fmt.Fprintf(&b, "\n--- log of %s:\n%s", s.Addr(), tailLines(s.Log(), 15))
			}
			return fmt.Errorf("%s", b.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// problems returns a description of what is not yet healthy, if anything.
func (c *Cluster) problems() []string {
	var problems []string
	want := strconv.Itoa(len(c.servers))
	slots := strconv.Itoa(clusterSlots)
	for _, s := range c.servers {
		if !s.Running() {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		info, err := infoMap(ctx, s.Addr(), "CLUSTER", "INFO")
		var repl map[string]string
		if err == nil {
			repl, err = infoMap(ctx, s.Addr(), "INFO", "replication")
		}
		cancel()
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", s.Addr(), err))
			continue
		}
		if info["cluster_state"] != "ok" || info["cluster_slots_assigned"] != slots ||
			info["cluster_slots_ok"] != slots || info["cluster_known_nodes"] != want {
			problems = append(problems, fmt.Sprintf("%s: cluster_state:%s slots_assigned:%s slots_ok:%s known_nodes:%s (want %s)",
				s.Addr(), info["cluster_state"], info["cluster_slots_assigned"], info["cluster_slots_ok"],
				info["cluster_known_nodes"], want))
		}
		if repl["role"] == "slave" && repl["master_link_status"] != "up" {
			problems = append(problems, fmt.Sprintf("%s: replica of %s:%s, master_link_status:%s",
				s.Addr(), repl["master_host"], repl["master_port"], repl["master_link_status"]))
		}
	}
	return problems
}
