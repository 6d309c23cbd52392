package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// startCluster starts n redis-servers in cluster mode and joins them as n
// masters with no replicas (redis-cli --cluster create), waiting until
// every node sees the whole cluster ok. It returns them with one admin
// client each.
func startCluster(ctx context.Context, n int) ([]*server, []*redis.Client, func(), error) {
	srvs, admins, stop, err := servers(n, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-node-timeout", "5000")
	if err != nil {
		return nil, nil, nil, err
	}
	cli := os.Getenv("REDIS_CLI")
	if cli == "" {
		var err error
		if cli, err = exec.LookPath("redis-cli"); err != nil {
			stop()
			return nil, nil, nil, fmt.Errorf("redis-cli not found (install redis-tools, or set REDIS_CLI): %w", err)
		}
	}
	args := []string{"--cluster", "create"}
	for _, s := range srvs {
		args = append(args, s.addr)
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		stop()
		return nil, nil, nil, fmt.Errorf("redis-cli --cluster create: %v: %s", err, out)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		ok := true
		for _, a := range admins {
			info, err := a.ClusterInfo(ctx).Result()
			if err != nil || !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") ||
				!strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", n)) {
				ok = false
				break
			}
		}
		if ok {
			return srvs, admins, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, nil, nil, errors.New("the cluster's nodes did not agree within a minute")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// clusterClient returns a Cluster client of srvs whose node clients (every
// command and pipeline ends on one of them, once) count round trips in h.
func clusterClient(ctx context.Context, srvs []*server, h *rtHook) (*redis.ClusterClient, error) {
	var addrs []string
	for _, s := range srvs {
		addrs = append(addrs, s.addr)
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, PoolSize: 64})
	// Each node client once: a node made while ForEachShard loads the
	// slot map would get the hook from both.
	var hooked sync.Map
	add := func(n *redis.Client) {
		if _, dup := hooked.LoadOrStore(n, true); !dup {
			n.AddHook(h)
		}
	}
	cc.OnNewNode(add)
	if err := cc.ForEachShard(ctx, func(_ context.Context, n *redis.Client) error {
		add(n)
		return nil
	}); err != nil {
		cc.Close()
		return nil, err
	}
	return cc, nil
}

// runCluster: uncontended lock+unlock on a 3-master cluster from 1 and 32
// goroutines, names spread over the masters, one client per library.
func runCluster(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := startCluster(ctx, 3)
	if err != nil {
		return err
	}
	defer stop()
	gs := []int{1, 32}
	var tables []*table
	for _, g := range gs {
		tables = append(tables, throughputTable(
			fmt.Sprintf("Redis Cluster, 3 masters: uncontended lock+unlock, %d goroutine(s) on distinct names, one client", g),
			"Each library on one Cluster client (rueidislock: its own rueidis client on the same seeds). Round trips are counted on the "+
				"go-redis node clients, where each command and pipeline lands once; Redis figures are summed over the three masters; client CPU is this process's getrusage delta. "+
				"The floor is two `EVALSHA` of `return 1` per pair through the Cluster client."))
	}
	libs := []lockLib{
		oursLock(false),
		oursLockWith(false, "DisableAutoPipeline", &redisson.Options{DisableAutoPipeline: true}),
		redislockLib("defaults", 0),
		redsyncLib("defaults", 0, false),
		rueidislockLib(),
		floorLib("2 × EVALSHA", false, false, false),
	}
	for _, t := range tables {
		for _, l := range libs {
			t.row(l.name, l.settings, l.kind)
		}
	}
	s.runRounds(ctx, tables, libs, func(t int, lib lockLib, tag string) (map[string]float64, error) {
		h := &rtHook{}
		cc, err := clusterClient(ctx, srvs, h)
		if err != nil {
			return nil, err
		}
		defer cc.Close()
		defer func() {
			for _, a := range admins {
				_ = a.FlushAll(context.WithoutCancel(ctx)).Err()
			}
		}()
		return s.lockLoopOn(ctx, []redis.UniversalClient{cc}, []*rtHook{h}, admins, lib, gs[t], tag)
	})
	for _, t := range tables {
		s.emit(t)
	}
	return s.clusterWatchdog(ctx, srvs, admins)
}

// clusterWatchdog: one client holds n leases (lease 0, the watchdog keeps
// them) on names spread over the masters; a renewal pass should be one
// pipeline per master.
func (s *suite) clusterWatchdog(ctx context.Context, srvs []*server, admins []*redis.Client) error {
	n, timeout, periods := 100000, 9*time.Second, 1
	if s.short {
		n, timeout, periods = 1000, 600*time.Millisecond, 2
	}
	t := &table{
		title: fmt.Sprintf("Redis Cluster, 3 masters: watchdog renewals of %d leases, one client", n),
		note: "As the single-node watchdog table, on a Cluster client; round trips are counted on the node clients, " +
			"so one pass is at best one pipeline per master (3 per period).",
		cols: []col{
			{key: "rt", head: "round trips/period (min-max)", format: "%.1f", spread: true},
			{key: "srv", head: "Redis cmds/period", format: "%.0f"},
			{key: "cpu", head: "client CPU ms/period (min-max)", format: "%.1f", spread: true},
			{key: "pass", head: "longest pass ms (min-max)", format: "%.0f", spread: true},
			{key: "lost", head: "holds lost", format: "%.0f"},
		},
	}
	r := t.row("redisson Lock", fmt.Sprintf("%d leases, WatchdogTimeout %v", n, timeout), kindOurs)
	h := &rtHook{}
	cc, err := clusterClient(ctx, srvs, h)
	if err != nil {
		return err
	}
	defer cc.Close()
	for _, res := range s.watchdogOn(ctx, cc, h, admins, n, timeout, periods) {
		r.add(res.m, res.err)
	}
	s.emit(t)
	return nil
}
