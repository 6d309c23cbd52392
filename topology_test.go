package redisson

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// clusterTopologyArgs make failovers and replica discovery fast: a node
// timeout of 1s, and replicas that ping every second.
var clusterTopologyArgs = []string{"--cluster-node-timeout", "1000", "--repl-ping-replica-period", "1"}

// objectKinds are the objects every topology workload runs.
var objectKinds = []string{"lock", "fairlock", "rwlock", "semaphore", "permits", "latch"}

// objectWorkloads starts one workload per object kind named in names, on
// two clients. Each kind uses the names given for it; each name is
// contended by per goroutines on each client. Semaphores get permits
// permits.
func objectWorkloads(t *testing.T, ctx context.Context, clients [2]*Client, names map[string][]string, per int, permits int64) []*topoWorkload {
	t.Helper()
	var ws []*topoWorkload
	for _, kind := range objectKinds {
		ns := names[kind]
		k := len(ns)
		if k == 0 {
			continue
		}
		n := 2 * k * per // goroutine g uses name g%k on client (g/k)%2
		ex := make([]*exclusion, n)
		shared := make([]*exclusion, k)
		for i := range shared {
			shared[i] = &exclusion{}
		}
		for g := range ex {
			ex[g] = shared[g%k]
		}
		side := func(g int) int { return (g / k) % 2 }
		client := func(g int) *Client { return clients[side(g)] }
		var op workloadOp
		switch kind {
		case "lock", "fairlock":
			locks := make([]*Lock, n)
			for g := range locks {
				if kind == "lock" {
					locks[g] = client(g).GetLock(ns[g%k])
				} else {
					locks[g] = client(g).GetFairLock(ns[g%k])
				}
			}
			op = lockOp(locks, ex)
		case "rwlock":
			// Goroutines on the first client write, on the second read.
			locks := make([]*Lock, n)
			for g := range locks {
				rw := client(g).GetReadWriteLock(ns[g%k])
				if side(g) == 0 {
					locks[g] = rw.WriteLock()
				} else {
					locks[g] = rw.ReadLock()
				}
			}
			write, read := lockOp(locks, ex), readOp(locks, ex)
			op = func(ctx context.Context, w *topoWorkload, g int) (bool, error) {
				if side(g) == 0 {
					return write(ctx, w, g)
				}
				return read(ctx, w, g)
			}
		case "semaphore":
			sems := make([]*Semaphore, n)
			for g := range sems {
				sems[g] = client(g).GetSemaphore(ns[g%k])
			}
			for _, s := range sems[:k] {
				if _, err := s.TrySetPermits(ctx, permits); err != nil {
					t.Fatal(err)
				}
			}
			op = semaphoreOp(sems, ex, permits)
		case "permits":
			sems := make([]*PermitExpirableSemaphore, n)
			for g := range sems {
				sems[g] = client(g).GetPermitExpirableSemaphore(ns[g%k])
			}
			for _, s := range sems[:k] {
				if _, err := s.TrySetPermits(ctx, permits); err != nil {
					t.Fatal(err)
				}
			}
			op = permitOp(sems, ex, permits)
		case "latch":
			ops := make([]workloadOp, n)
			for g := range ops {
				base := ns[g%k]
				ops[g] = latchOp(clients[1-side(g)], clients[side(g)], func(i int) string {
					return fmt.Sprintf("%s:%d:%d", base, g, i)
				})
			}
			op = func(ctx context.Context, w *topoWorkload, g int) (bool, error) { return ops[g](ctx, w, g) }
		}
		ws = append(ws, startWorkload(kind, n, op))
	}
	return ws
}

// namesOn returns, for every object kind, one name served by each of the
// given masters. Latch names are prefixes: each latch operation appends to
// them, so they carry a hash tag.
func namesOn(t *testing.T, ctx context.Context, rdb *redis.ClusterClient, prefix string, masters []string) map[string][]string {
	t.Helper()
	names := map[string][]string{}
	for _, kind := range objectKinds {
		for _, m := range masters {
			for i := 0; ; i++ {
				if i == 100000 {
					t.Fatalf("no %s name served by %s among 100000 tried", kind, m)
				}
				var name, key string
				if kind == "latch" {
					name = fmt.Sprintf("{%s:%s:%d}", prefix, kind, i)
				} else {
					name = fmt.Sprintf("%s:%s:%d", prefix, kind, i)
				}
				key = name
				node, err := rdb.MasterForKey(ctx, key)
				if err != nil {
					t.Fatal(err)
				}
				if node.Options().Addr == m {
					names[kind] = append(names[kind], name)
					break
				}
			}
		}
	}
	return names
}

func reportAll(t *testing.T, ws []*topoWorkload) {
	t.Helper()
	for _, w := range ws {
		t.Log(w.report())
	}
}

func checkNoViolations(t *testing.T, ws []*topoWorkload) {
	t.Helper()
	for _, w := range ws {
		if v := w.violations.Load(); v != 0 {
			t.Errorf("%s: %d mutual exclusion violations; want 0", w.name, v)
		}
	}
}

// checkErrorsEnded fails the test when a workload saw an error later than
// limit after the topology change began.
func checkErrorsEnded(t *testing.T, ws []*topoWorkload, limit time.Duration) {
	t.Helper()
	for _, w := range ws {
		if last := w.lastErrorAfterOrigin(); last > limit {
			t.Errorf("%s: last error %v after the change began; want none after %v", w.name, last, limit)
		}
	}
}

// One 3-master, 3-replica cluster for all the topology tests (several
// seconds to start).
func TestClusterTopology(t *testing.T) {
	t.Parallel() // its own cluster; mostly waiting, so it overlaps the other parallel tests
	cl := redistest.StartClusterWith(t, 3, 1, clusterTopologyArgs)
	rdb := cl.Client(t)
	ctx := testCtx(t, 5*time.Minute)
	counter := newLoadCounter() // the two clients' SCRIPT LOADs
	opts := &Options{WatchdogTimeout: 3 * time.Second, Logger: slog.New(counter)}
	clients := [2]*Client{newClient(t, cl.Client(t), opts), newClient(t, cl.Client(t), opts)}
	loads := counter.loads

	// Every object, contended from two clients, with names on every master
	// of a cluster whose masters have replicas: no errors, no violations,
	// every goroutine makes progress.
	t.Run("EveryObjectOnEveryMaster", func(t *testing.T) {
		names := namesOn(t, ctx, rdb, "topo:all", cl.Masters(t))
		ws := objectWorkloads(t, ctx, clients, names, 1, 1)
		now := time.Now()
		for _, w := range ws {
			w.markChanging(now)
			w.markChanged(now)
		}
		waitRecovered(t, 30*time.Second, time.Second, ws...)
		time.Sleep(500 * time.Millisecond)
		stopAndWait(t, time.Minute, ws...)
		reportAll(t, ws)
		checkNoViolations(t, ws)
		for _, w := range ws {
			if w.errs != 0 {
				t.Errorf("%s: %d errors on a stable cluster; want 0", w.name, w.errs)
			}
		}
	})

	// CLUSTER FAILOVER on a replica during the workload, with objects on
	// the master being replaced and on another one: callers see errors for
	// a bounded time at most, the scripts are loaded again on the promoted
	// replica (NOSCRIPT), no double holds, no caller hangs.
	t.Run("ReplicaPromotion", func(t *testing.T) {
		masters := cl.Masters(t)
		victim := masters[0]
		names := namesOn(t, ctx, rdb, "topo:promote", []string{victim, masters[1]})
		ws := objectWorkloads(t, ctx, clients, names, 1, 1)
		time.Sleep(time.Second)
		loadsBefore := loads()
		start := time.Now()
		for _, w := range ws {
			w.markChanging(start)
		}
		promoted := cl.Failover(t, victim)
		done := time.Now()
		for _, w := range ws {
			w.markChanged(done)
		}
		t.Logf("CLUSTER FAILOVER: %s replaced by %s in %v", victim, promoted, done.Sub(start))
		waitRecovered(t, 40*time.Second, 2*time.Second, ws...)
		stopAndWait(t, time.Minute, ws...)
		reportAll(t, ws)
		t.Logf("SCRIPT LOADs after the failover: %d", loads()-loadsBefore)
		checkNoViolations(t, ws)
		checkErrorsEnded(t, ws, done.Sub(start)+10*time.Second)
		// Redis 7.0 stopped replicating SCRIPT LOAD, so a promoted replica
		// starts with no script and the runner reloads them on NOSCRIPT;
		// an older server's replica got every script from its master.
		if loads() == loadsBefore && redistest.ServerMajor(t) >= 7 {
			t.Errorf("no script was loaded on the promoted replica %s; want NOSCRIPT reloads", promoted)
		}
	})

	// A slot moved to another master during the workload (IMPORTING /
	// MIGRATING, keys moved with MIGRATE, SETSLOT NODE), with every object
	// in that slot and the target's scripts flushed first: go-redis follows
	// ASK and MOVED, the script cache retries TRYAGAIN (multi-key scripts
	// mid-migration) and reloads scripts on every master after NOSCRIPT, so
	// no caller sees an error; no double holds, no hangs.
	t.Run("SlotMigration", func(t *testing.T) {
		names := map[string][]string{}
		for _, kind := range objectKinds {
			for i := 0; i < 2; i++ {
				names[kind] = append(names[kind], fmt.Sprintf("{topo:mig}:%s:%d", kind, i))
			}
		}
		slot := cl.SlotOf(t, "{topo:mig}")
		from := cl.SlotOwner(t, slot)
		var to string
		for _, m := range cl.Masters(t) {
			if m != from {
				to = m
				break
			}
		}
		target := redis.NewClient(&redis.Options{Addr: to})
		err := target.ScriptFlush(ctx).Err()
		target.Close()
		if err != nil {
			t.Fatal(err)
		}
		ws := objectWorkloads(t, ctx, clients, names, 1, 1)
		time.Sleep(time.Second)
		start := time.Now()
		for _, w := range ws {
			w.markChanging(start)
		}
		m := cl.BeginSlotMigration(t, slot, to)
		time.Sleep(time.Second) // new keys go to the target meanwhile (ASK)
		m.MoveKeys(t)
		time.Sleep(500 * time.Millisecond)
		moved := m.Finish(t)
		done := time.Now()
		for _, w := range ws {
			w.markChanged(done)
		}
		t.Logf("slot %d moved from %s to %s in %v (%d keys moved with MIGRATE)", slot, from, to, done.Sub(start), moved)
		waitRecovered(t, 40*time.Second, 2*time.Second, ws...)
		stopAndWait(t, time.Minute, ws...)
		reportAll(t, ws)
		checkNoViolations(t, ws)
		for _, w := range ws {
			if w.errs != 0 {
				t.Errorf("%s: %d errors reached callers during the migration; want 0", w.name, w.errs)
			}
		}
	})
}
