package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	sentinelMasterName = "mymaster"
	sentinelCount      = 3
	sentinelTimeout    = 30 * time.Second // wait for sentinels to agree / fail over
)

// SentinelOptions configures StartSentinel. The zero value gives the
// defaults documented on each field.
type SentinelOptions struct {
	// DownAfter is "sentinel down-after-milliseconds". Default 1s.
	DownAfter time.Duration
	// FailoverTimeout is "sentinel failover-timeout". Default 5s.
	FailoverTimeout time.Duration
	// MinReplicasToWrite, when > 0, sets min-replicas-to-write on both data
	// nodes (see SetMinReplicas). Default 0: off.
	MinReplicasToWrite int
	// MinReplicasMaxLag is min-replicas-max-lag, rounded up to whole
	// seconds. Default 1s when MinReplicasToWrite > 0.
	MinReplicasMaxLag time.Duration
}

// Sentinel is a Redis Sentinel deployment: one master, one replica and
// three sentinels monitoring the master as "mymaster" with quorum 2, all
// started from redis-server on loopback ports, each in its own directory
// with its own writable config. Its methods are safe for concurrent use.
type Sentinel struct {
	data            []*Server // the initial master, then the replica
	sentinels       []*Server
	failoverTimeout time.Duration
}

// StartSentinel starts the deployment (nil opts: defaults) and waits until
// every sentinel sees the master, the replica (linked) and the two other
// sentinels, so that a failover can be started at once. Everything is
// stopped by tb.Cleanup. A redis-server without sentinel mode fails the test
// with the log of the sentinel that could not start.
func StartSentinel(tb testing.TB, opts *SentinelOptions) *Sentinel {
	tb.Helper()
	bin, _ := ServerPath(tb)
	var o SentinelOptions
	if opts != nil {
		o = *opts
	}
	s, err := startSentinel(bin, tb.TempDir(), o)
	if s != nil {
		tb.Cleanup(s.Stop)
	}
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return s
}

func startSentinel(bin, root string, o SentinelOptions) (*Sentinel, error) {
	if o.DownAfter <= 0 {
		o.DownAfter = time.Second
	}
	if o.FailoverTimeout <= 0 {
		o.FailoverTimeout = 5 * time.Second
	}
	s := &Sentinel{failoverTimeout: o.FailoverTimeout}
	var masterPort int
	for i, role := range []string{"master", "replica"} {
		dir := filepath.Join(root, role)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return s, err
		}
		var extra []string
		if i == 1 {
			extra = []string{"--replicaof", "127.0.0.1", strconv.Itoa(masterPort)}
		}
		extra = append(extra, "--repl-ping-replica-period", "1")
		srv, err := newServer(bin, dir, func(int) []string { return extra })
		if err != nil {
			return s, err
		}
		s.data = append(s.data, srv)
		masterPort = s.data[0].Port()
	}
	if o.MinReplicasToWrite > 0 {
		if err := s.setMinReplicas(o.MinReplicasToWrite, o.MinReplicasMaxLag); err != nil {
			return s, err
		}
	}
	conf := fmt.Sprintf("sentinel resolve-hostnames no\n"+
		"sentinel monitor %[1]s 127.0.0.1 %[2]d 2\n"+
		"sentinel down-after-milliseconds %[1]s %[3]d\n"+
		"sentinel failover-timeout %[1]s %[4]d\n"+
		"sentinel parallel-syncs %[1]s 1\n",
		sentinelMasterName, masterPort, o.DownAfter.Milliseconds(), o.FailoverTimeout.Milliseconds())
	for i := 0; i < sentinelCount; i++ {
		dir := filepath.Join(root, fmt.Sprintf("sentinel%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return s, err
		}
		path := filepath.Join(dir, "sentinel.conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			return s, err
		}
		srv, err := launchNew(&Server{
			bin:     bin,
			dir:     dir,
			logPath: filepath.Join(dir, "redis-server.log"),
			conf:    path,
			extra:   func(int) []string { return []string{"--sentinel"} },
		})
		if err != nil {
			return s, fmt.Errorf("start sentinel (redis-server %s --sentinel; a redis-server built "+
				"without sentinel mode cannot run it: install the distribution's redis-server or "+
				"redis-sentinel package, version 6.2 or newer): %w", path, err)
		}
		s.sentinels = append(s.sentinels, srv)
	}
	return s, s.waitReady(sentinelTimeout)
}

// MasterName returns the name the sentinels monitor the master under.
func (s *Sentinel) MasterName() string { return sentinelMasterName }

// SentinelAddrs returns the addresses of the three sentinels.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.sentinels))
	for i, srv := range s.sentinels {
		addrs[i] = srv.Addr()
	}
	return addrs
}

// Servers returns the two data nodes, the initial master first. Which of
// them is the master now is told by MasterAddr.
func (s *Sentinel) Servers() []*Server { return append([]*Server(nil), s.data...) }

// Sentinels returns the three sentinel processes.
func (s *Sentinel) Sentinels() []*Server { return append([]*Server(nil), s.sentinels...) }

// Stop stops the sentinels, then the data nodes. Stopping twice is harmless.
func (s *Sentinel) Stop() {
	for _, srv := range s.sentinels {
		srv.Stop()
	}
	for _, srv := range s.data {
		srv.Stop()
	}
}

// Client returns a go-redis failover client (redis.NewFailoverClient, a
// *redis.Client) for the deployment, with opts applied (MasterName and
// SentinelAddrs are preset). It waits until the client can PING the master.
// The client is closed by tb.Cleanup.
func (s *Sentinel) Client(tb testing.TB, opts ...func(*redis.FailoverOptions)) *redis.Client {
	tb.Helper()
	o := &redis.FailoverOptions{MasterName: sentinelMasterName, SentinelAddrs: s.SentinelAddrs()}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewFailoverClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	deadline := time.Now().Add(sentinelTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return c
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: failover client for %v cannot PING the master after %v: %v",
				s.SentinelAddrs(), sentinelTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MasterAddr returns the master address the sentinels report, failing when
// they do not all agree.
func (s *Sentinel) MasterAddr(ctx context.Context) (string, error) {
	var addr string
	for _, srv := range s.sentinels {
		a, err := masterAddrOf(ctx, srv)
		if err != nil {
			return "", err
		}
		if addr != "" && a != addr {
			return "", fmt.Errorf("sentinels disagree on the master: %s and %s", addr, a)
		}
		addr = a
	}
	return addr, nil
}

func masterAddrOf(ctx context.Context, sentinel *Server) (string, error) {
	v, err := sentinel.Do(ctx, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", sentinelMasterName)
	if err != nil {
		return "", fmt.Errorf("sentinel %s: %w", sentinel.Addr(), err)
	}
	hp, ok := v.([]any)
	if !ok || len(hp) != 2 {
		return "", fmt.Errorf("sentinel %s: GET-MASTER-ADDR-BY-NAME replied %v", sentinel.Addr(), v)
	}
	return fmt.Sprintf("%v:%v", hp[0], hp[1]), nil
}

// server returns the data node listening on addr, or nil.
func (s *Sentinel) server(addr string) *Server {
	for _, srv := range s.data {
		if srv.Addr() == addr {
			return srv
		}
	}
	return nil
}

// SetMinReplicas sets min-replicas-to-write n and min-replicas-max-lag
// maxLag (rounded up to whole seconds; 0 means 1s) on both data nodes with
// CONFIG SET, so that it holds whichever is master. n == 0 turns it off.
// With one replica and n == 1, a master that lost its replica refuses
// writes with NOREPLICAS, and so does a just promoted master until the old
// one has rejoined as its replica.
func (s *Sentinel) SetMinReplicas(tb testing.TB, n int, maxLag time.Duration) {
	tb.Helper()
	if err := s.setMinReplicas(n, maxLag); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
}

func (s *Sentinel) setMinReplicas(n int, maxLag time.Duration) error {
	lag := int64((maxLag + time.Second - 1) / time.Second)
	if lag <= 0 {
		lag = 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, srv := range s.data {
		// One parameter per CONFIG SET: servers before Redis 7.0 take one.
		for _, kv := range [][2]string{{"min-replicas-to-write", strconv.Itoa(n)}, {"min-replicas-max-lag", strconv.FormatInt(lag, 10)}} {
			if _, err := srv.Do(ctx, "CONFIG", "SET", kv[0], kv[1]); err != nil {
				return fmt.Errorf("CONFIG SET %s on %s: %w", kv[0], srv.Addr(), err)
			}
		}
	}
	return nil
}

// WaitReady waits up to timeout until every sentinel agrees on the master,
// sees it up, sees the replica up and linked and sees the two other
// sentinels; and the master has the replica connected. It fails the test
// with per-sentinel details otherwise.
func (s *Sentinel) WaitReady(tb testing.TB, timeout time.Duration) {
	tb.Helper()
	if err := s.waitReady(timeout); err != nil {
		tb.Fatalf("redistest: %v", err)
	}
}

func (s *Sentinel) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		problems := s.problems()
		if len(problems) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sentinel deployment not ready after %v:\n  %s%s", timeout, strings.Join(problems, "\n  "), s.logs())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// problems describes what keeps the deployment from being ready, if anything.
func (s *Sentinel) problems() []string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	master, err := s.MasterAddr(ctx)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if m := s.server(master); m == nil {
		problems = append(problems, fmt.Sprintf("sentinels report master %s, not a data node", master))
	} else if repl, err := infoMap(ctx, master, "INFO", "replication"); err != nil {
		problems = append(problems, fmt.Sprintf("master %s: %v", master, err))
	} else if repl["role"] != "master" || repl["connected_slaves"] != "1" {
		problems = append(problems, fmt.Sprintf("master %s: role:%s connected_slaves:%s",
			master, repl["role"], repl["connected_slaves"]))
	}
	for _, srv := range s.sentinels {
		if p := sentinelProblem(ctx, srv); p != "" {
			problems = append(problems, srv.Addr()+": "+p)
		}
	}
	return problems
}

// sentinelProblem checks one sentinel's view: master up, two other
// sentinels, exactly one replica, up and linked.
func sentinelProblem(ctx context.Context, sentinel *Server) string {
	v, err := sentinel.Do(ctx, "SENTINEL", "MASTER", sentinelMasterName)
	if err != nil {
		return err.Error()
	}
	m := pairs(v)
	if strings.Contains(m["flags"], "down") || strings.Contains(m["flags"], "failover") {
		return "master flags " + m["flags"]
	}
	if m["num-other-sentinels"] != strconv.Itoa(sentinelCount-1) || m["num-slaves"] != "1" {
		return fmt.Sprintf("sees %s other sentinels and %s replicas", m["num-other-sentinels"], m["num-slaves"])
	}
	v, err = sentinel.Do(ctx, "SENTINEL", "REPLICAS", sentinelMasterName)
	if err != nil {
		return err.Error()
	}
	list, _ := v.([]any)
	for _, r := range list {
		rm := pairs(r)
		if strings.Contains(rm["flags"], "down") || strings.Contains(rm["flags"], "disconnected") ||
			rm["master-link-status"] != "ok" {
			return fmt.Sprintf("replica %s:%s flags %s master-link-status %s",
				rm["ip"], rm["port"], rm["flags"], rm["master-link-status"])
		}
	}
	return ""
}

// pairs turns a flat [k1 v1 k2 v2 ...] reply into a map.
func pairs(v any) map[string]string {
	m := map[string]string{}
	list, _ := v.([]any)
	for i := 0; i+1 < len(list); i += 2 {
		m[fmt.Sprint(list[i])] = fmt.Sprint(list[i+1])
	}
	return m
}

// logs returns the tail of every process's log.
func (s *Sentinel) logs() string {
	var b strings.Builder
	for _, srv := range append(s.Servers(), s.sentinels...) {
		fmt.Fprintf(&b, "\n--- log of %s:\n%s", srv.Addr(), tailLines(srv.Log(), 15))
	}
	return b.String()
}

// requestFailover sends SENTINEL FAILOVER, retrying NOGOODSLAVE (the
// sentinel's view of the replica is stale) and INPROG (a failover runs) for
// up to 30 s, unless the sentinel already reports a master other than old.
func (s *Sentinel) requestFailover(ctx context.Context, old string) error {
	start := time.Now()
	for {
		if addr, err := masterAddrOf(ctx, s.sentinels[0]); err == nil && addr != old {
			return nil // an earlier request has promoted the replica
		}
		_, err := s.sentinels[0].Do(ctx, "SENTINEL", "FAILOVER", sentinelMasterName)
		if err == nil {
			return nil
		}
		if time.Since(start) > sentinelTimeout {
			return fmt.Errorf("SENTINEL FAILOVER %s: %w", sentinelMasterName, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// FailoverResult describes a failover made by Sentinel.Failover.
type FailoverResult struct {
	OldMaster, NewMaster string
	// Promoted is how long it took from SENTINEL FAILOVER until every
	// sentinel reported NewMaster; Writable until a SET on NewMaster
	// succeeded.
	Promoted, Writable time.Duration
}

// Failover waits until the deployment is ready (see WaitReady), sends
// SENTINEL FAILOVER to a sentinel and waits until every sentinel reports the
// replica as the new master and a SET on it succeeds (up to 30 s each). It
// does not wait for the old master to rejoin as a replica: the sentinels
// reconfigure it some seconds later, and the next Failover waits for that.
func (s *Sentinel) Failover(tb testing.TB) FailoverResult {
	tb.Helper()
	r, err := s.failover()
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	return r
}

func (s *Sentinel) failover() (FailoverResult, error) {
	var r FailoverResult
	if err := s.waitReady(sentinelTimeout); err != nil {
		return r, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*sentinelTimeout)
	defer cancel()
	var err error
	if r.OldMaster, err = s.MasterAddr(ctx); err != nil {
		return r, err
	}
	start := time.Now()
	// A sentinel that cannot finish a failover within failover-timeout
	// aborts it (a busy machine); ask again then.
	var last string
	for r.NewMaster == "" {
		if err := s.requestFailover(ctx, r.OldMaster); err != nil {
			return r, err
		}
		asked := time.Now()
		for time.Since(asked) < 2*s.failoverTimeout {
			addr, err := s.MasterAddr(ctx)
			if err == nil && addr != r.OldMaster {
				r.NewMaster, r.Promoted = addr, time.Since(start)
				break
			}
			last = fmt.Sprintf("%s, %v", addr, err)
			time.Sleep(20 * time.Millisecond)
		}
		if r.NewMaster == "" && time.Since(start) > 2*sentinelTimeout {
			return r, fmt.Errorf("no new master %v after SENTINEL FAILOVER (last: %s)%s", time.Since(start), last, s.logs())
		}
	}
	for {
		_, err := do(ctx, r.NewMaster, "SET", "redistest:failover:probe", r.NewMaster, "PX", "60000")
		if err == nil {
			r.Writable = time.Since(start)
			return r, nil
		}
		if time.Since(start) > 2*sentinelTimeout {
			return r, fmt.Errorf("new master %s not writable after %v: %w%s", r.NewMaster, 2*sentinelTimeout, err, s.logs())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
