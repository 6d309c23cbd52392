package redisson

// Benchmarks of the lock against the one-round-trip floor, under contention,
// and of the watchdog's renewal passes. Every benchmark starts its own
// redis-server (redistest.Start), so numbers are not disturbed by other
// benchmarks' keys or connections and nothing needs deleting afterwards.
//
// Round trips are counted with a go-redis hook (benchRTHook): one per
// ProcessHook call (a command) and one per ProcessPipelineHook call (a
// pipeline Exec). Two things go-redis does are not, or not usefully, counted:
//
//   - Connection set-up (HELLO, CLIENT SETINFO, ...): go-redis runs it through
//     a copy of the client's hooks, so the hook sees it; it is counted apart
//     as "handshake" and left out of round trips.
//   - Pub/sub: SUBSCRIBE, UNSUBSCRIBE and PING on the PubSub connection are not
//     routed through hooks at all. BenchmarkLockContended reads them from the
//     server's INFO commandstats instead and reports them separately.

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var (
	benchContendedDur = flag.Duration("contended.dur", 3*time.Second,
		"wall time of one BenchmarkLockContended run")
	benchContendedClients = flag.Int("contended.clients", 4,
		"Clients (each its own go-redis client) in BenchmarkLockContended")
	benchContendedGoroutines = flag.Int("contended.goroutines", 8,
		"goroutines, spread over the clients, in BenchmarkLockContended")
	benchWatchdogLeases = flag.Int("watchdog.leases", 10000,
		"watchdog leases held by BenchmarkWatchdogRenewal")
	benchWatchdogPasses = flag.Int("watchdog.passes", 3,
		"renewal passes measured by BenchmarkWatchdogRenewal")
)

// ---------------------------------------------------------------------------
// Round-trip counting hook.

// benchRTHook counts what a go-redis client sends. It is safe for concurrent
// use and does not allocate per command.
type benchRTHook struct {
	dials     atomic.Int64
	cmds      atomic.Int64 // single commands (ProcessHook), handshake excluded
	pipes     atomic.Int64 // pipeline Execs (ProcessPipelineHook), handshake excluded
	pipeCmds  atomic.Int64 // commands inside those pipelines
	handshake atomic.Int64 // connection set-up commands and pipelines
	acquires  atomic.Int64 // EVALSHA lock_acquire, alone or pipelined
	releases  atomic.Int64 // EVALSHA lock_release
	renews    atomic.Int64 // EVALSHA lock_renew

	// Optional event log (BenchmarkWatchdogRenewal), on while logOn is set.
	logOn  atomic.Bool
	logMu  sync.Mutex
	events []benchRTEvent
}

type benchRTEvent struct {
	start, end time.Time
	pipeline   bool
	cmds       int // commands in the round trip
	renews     int // lock_renew calls among them
	name       string
}

func newBenchHook(rdb *redis.Client) *benchRTHook {
	h := &benchRTHook{}
	rdb.AddHook(h)
	return h
}

// roundTrips returns commands + pipelines, handshake excluded.
func (h *benchRTHook) roundTrips() int64 { return h.cmds.Load() + h.pipes.Load() }

func benchIsHandshake(name string) bool {
	switch name {
	case "hello", "client", "auth", "select", "readonly":
		return true
	}
	return false
}

// classify counts the library script an EVALSHA command calls and reports
// whether it is lock_renew.
func (h *benchRTHook) classify(cmd redis.Cmder) (renew bool) {
	args := cmd.Args()
	if len(args) < 2 || cmd.Name() != "evalsha" {
		return false
	}
	sha, _ := args[1].(string)
	switch sha {
	case scriptLockAcquire.SHA():
		h.acquires.Add(1)
	case scriptLockRelease.SHA():
		h.releases.Add(1)
	case scriptLockRenew.SHA():
		h.renews.Add(1)
		return true
	}
	return false
}

func (h *benchRTHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		h.dials.Add(1)
		return next(ctx, network, addr)
	}
}

func (h *benchRTHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		name := cmd.Name()
		if benchIsHandshake(name) {
			h.handshake.Add(1)
			return next(ctx, cmd)
		}
		h.cmds.Add(1)
		renew := h.classify(cmd)
		if !h.logOn.Load() {
			return next(ctx, cmd)
		}
		start := time.Now()
		err := next(ctx, cmd)
		r := 0
		if renew {
			r = 1
		}
		h.log(benchRTEvent{start: start, end: time.Now(), cmds: 1, renews: r, name: name})
		return err
	}
}

func (h *benchRTHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && benchIsHandshake(cmds[0].Name()) {
			h.handshake.Add(1)
			return next(ctx, cmds)
		}
		h.pipes.Add(1)
		h.pipeCmds.Add(int64(len(cmds)))
		renews := 0
		for _, c := range cmds {
			if h.classify(c) {
				renews++
			}
		}
		if !h.logOn.Load() {
			return next(ctx, cmds)
		}
		start := time.Now()
		err := next(ctx, cmds)
		h.log(benchRTEvent{start: start, end: time.Now(), pipeline: true, cmds: len(cmds), renews: renews, name: "pipeline"})
		return err
	}
}

func (h *benchRTHook) log(e benchRTEvent) {
	h.logMu.Lock()
	h.events = append(h.events, e)
	h.logMu.Unlock()
}

// ---------------------------------------------------------------------------
// Helpers.

// benchRedis starts a private server and returns a hooked go-redis client of
// it, plus an unhooked one for inspection (INFO, DBSIZE, ...).
func benchRedis(b *testing.B, opts ...func(*redis.Options)) (*redistest.Server, *redis.Client, *benchRTHook, *redis.Client) {
	b.Helper()
	srv := redistest.Start(b)
	rdb := srv.Client(b, opts...)
	h := newBenchHook(rdb)
	admin := srv.Client(b)
	return srv, rdb, h, admin
}

func benchCtx(b *testing.B) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	return ctx
}

// benchProcessCPU returns the CPU time (user + system, in ns) this process
// has used: the client's share of an operation, without the redis-server
// processes it talks to, and less disturbed than wall time by other work on
// the machine.
func benchProcessCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// benchLockUnlock takes and releases l once, failing b otherwise.
func benchLockUnlock(b *testing.B, ctx context.Context, l *Lock, lease time.Duration) {
	ok, err := l.TryLock(ctx, 0, lease)
	if err != nil || !ok {
		b.Fatalf("TryLock(0, %v) = %v, %v", lease, ok, err)
	}
	if err := l.Unlock(ctx); err != nil {
		b.Fatalf("Unlock: %v", err)
	}
}

func benchLoadTrivial(b *testing.B, ctx context.Context, rdb *redis.Client) string {
	sha, err := rdb.ScriptLoad(ctx, "return 1").Result()
	if err != nil {
		b.Fatalf("SCRIPT LOAD: %v", err)
	}
	return sha
}

func benchPct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func benchMs(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// benchUsecPerCall returns the server's mean time per call of cmd since the
// last CONFIG RESETSTAT (INFO commandstats).
func benchUsecPerCall(b *testing.B, ctx context.Context, admin *redis.Client, cmd string) float64 {
	s, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatalf("INFO commandstats: %v", err)
	}
	for _, line := range strings.Split(s, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":"); ok {
			for _, kv := range strings.Split(rest, ",") {
				if v, ok := strings.CutPrefix(kv, "usec_per_call="); ok {
					x, _ := strconv.ParseFloat(v, 64)
					return x
				}
			}
		}
	}
	return 0
}

// benchCommandStats returns the server's per-command call counts.
func benchCommandStats(b *testing.B, ctx context.Context, admin *redis.Client) map[string]int64 {
	s, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		b.Fatalf("INFO commandstats: %v", err)
	}
	m := make(map[string]int64)
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				m[name] = n
			}
		}
	}
	return m
}

// benchKeyspace returns the number of keys in db 0 and how many of them have
// no expiry.
func benchKeyspace(ctx context.Context, admin *redis.Client) (keys, persistent int64) {
	s, err := admin.Info(ctx, "keyspace").Result()
	if err != nil {
		return -1, -1
	}
	for _, line := range strings.Split(s, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "db0:")
		if !ok {
			continue
		}
		var expires int64
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "keys":
				keys = n
			case "expires":
				expires = n
			}
		}
		return keys, keys - expires
	}
	return 0, 0
}

// ---------------------------------------------------------------------------
// 1. The one-round-trip floor.

func BenchmarkFloorEvalSha(b *testing.B) {
	_, rdb, h, _ := benchRedis(b)
	ctx := benchCtx(b)
	sha := benchLoadTrivial(b, ctx, rdb)
	if err := rdb.EvalSha(ctx, sha, nil).Err(); err != nil { // dial outside the loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := h.roundTrips()
	for b.Loop() {
		if err := rdb.EvalSha(ctx, sha, nil).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

func BenchmarkFloorPing(b *testing.B) {
	_, rdb, h, _ := benchRedis(b)
	ctx := benchCtx(b)
	if err := rdb.Ping(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := h.roundTrips()
	for b.Loop() {
		if err := rdb.Ping(ctx).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

// ---------------------------------------------------------------------------
// 2. Uncontended lock + unlock.

func BenchmarkLockUncontended(b *testing.B) {
	// The watchdog runs on the same client, but with the default 30 s
	// WatchdogTimeout its first pass (10 s) never comes in a short run.
	run := func(b *testing.B, lease time.Duration, newHandle bool) {
		_, rdb, h, admin := benchRedis(b)
		c := newClient(b, rdb, nil)
		ctx := benchCtx(b)
		name := "bench:uncontended"
		l := c.GetLock(name)
		benchLockUnlock(b, ctx, l, lease) // loads the scripts, dials
		b.ReportAllocs()
		rt0, hs0 := h.roundTrips(), h.handshake.Load()
		cpu0 := benchProcessCPU()
		for b.Loop() {
			if newHandle {
				l = c.GetLock(name)
			}
			ok, err := l.TryLock(ctx, 0, lease)
			if err != nil || !ok {
				b.Fatalf("TryLock = %v, %v", ok, err)
			}
			if err := l.Unlock(ctx); err != nil {
				b.Fatalf("Unlock: %v", err)
			}
		}
		b.ReportMetric(float64(benchProcessCPU()-cpu0)/float64(b.N), "client-cpu-ns/op")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
		if n := h.handshake.Load() - hs0; n > 0 {
			b.Logf("%d connection handshake commands during the loop (not counted)", n)
		}
		// Each full release leaves an unlock latch key for RetryWindow; a new
		// handle per iteration writes a new one each time.
		keys, persistent := benchKeyspace(ctx, admin)
		b.ReportMetric(float64(keys), "keys-left")
		b.ReportMetric(float64(persistent), "persistent-keys-left")
		if holds, _, _ := c.watchdog.stats(); holds != 0 {
			b.Errorf("watchdog still keeps %d holds after the loop", holds)
		}
	}
	b.Run("watchdog", func(b *testing.B) { run(b, 0, false) })
	b.Run("lease", func(b *testing.B) { run(b, 10*time.Second, false) })
	b.Run("new-handle", func(b *testing.B) { run(b, 0, true) })
	// parallel runs lock+unlock in n goroutines (rounded to a multiple of
	// GOMAXPROCS), each on a lock of its own, on one client made with opts.
	parallel := func(b *testing.B, n int, opts *Options) {
		par := max(1, n/runtime.GOMAXPROCS(0))
		_, rdb, h, _ := benchRedis(b)
		c := newClient(b, rdb, opts)
		ctx := benchCtx(b)
		benchLockUnlock(b, ctx, c.GetLock("bench:par:warm"), 0)
		var seq atomic.Int64
		var failed atomic.Value
		b.SetParallelism(par)
		b.ReportAllocs()
		rt0 := h.roundTrips()
		b.ResetTimer()
		cpu0 := benchProcessCPU()
		b.RunParallel(func(pb *testing.PB) {
			l := c.GetLock(fmt.Sprintf("bench:par:%d", seq.Add(1)))
			for pb.Next() {
				ok, err := l.TryLock(ctx, 0, 0)
				if err != nil || !ok {
					failed.CompareAndSwap(nil, fmt.Sprintf("TryLock = %v, %v", ok, err))
					return
				}
				if err := l.Unlock(ctx); err != nil {
					failed.CompareAndSwap(nil, fmt.Sprintf("Unlock: %v", err))
					return
				}
			}
		})
		b.StopTimer()
		cpu := benchProcessCPU() - cpu0
		if f := failed.Load(); f != nil {
			b.Fatal(f)
		}
		b.ReportMetric(float64(cpu)/float64(b.N), "client-cpu-ns/op")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
		b.ReportMetric(float64(seq.Load()), "goroutines")
	}
	// With n a multiple of 2, the goroutine counts of the 2-core target
	// machine.
	b.Run("parallel4", func(b *testing.B) { parallel(b, 4, nil) })
	b.Run("parallel8", func(b *testing.B) { parallel(b, 8, nil) })
	b.Run("parallel32", func(b *testing.B) { parallel(b, 32, nil) })
	b.Run("parallel32-noautopipe", func(b *testing.B) { parallel(b, 32, &Options{DisableAutoPipeline: true}) })
}

// BenchmarkLockVsFloor alternates blocks of benchBlock floor pairs (two
// trivial EVALSHAs) and benchBlock lock+unlock pairs on one client from one
// goroutine, swapping which block goes first every iteration, so that drift
// of the machine hits both. One op is one floor block plus one lock block.
// ratio = total lock+unlock time / total floor-pair time; ratio-median is the
// median of the per-iteration ratios (robust to GC and scheduler hiccups).
// server-us/lock-call and server-us/floor-call are the server's own time per
// EVALSHA (INFO commandstats, measured after the timed loop).
func BenchmarkLockVsFloor(b *testing.B) {
	const benchBlock = 32
	_, rdb, h, admin := benchRedis(b)
	c := newClient(b, rdb, nil)
	ctx := benchCtx(b)
	sha := benchLoadTrivial(b, ctx, rdb)
	l := c.GetLock("bench:vsfloor")
	benchLockUnlock(b, ctx, l, 0)
	floor := func() {
		for range benchBlock {
			if err := rdb.EvalSha(ctx, sha, nil).Err(); err != nil {
				b.Fatal(err)
			}
			if err := rdb.EvalSha(ctx, sha, nil).Err(); err != nil {
				b.Fatal(err)
			}
		}
	}
	lock := func() {
		for range benchBlock {
			ok, err := l.TryLock(ctx, 0, 0)
			if err != nil || !ok {
				b.Fatalf("TryLock = %v, %v", ok, err)
			}
			if err := l.Unlock(ctx); err != nil {
				b.Fatalf("Unlock: %v", err)
			}
		}
	}
	var floorT, lockT time.Duration
	var ratios []float64
	rt0, acq0 := h.roundTrips(), h.acquires.Load()
	i := 0
	for b.Loop() {
		var tf, tl time.Duration
		if i%2 == 0 {
			t0 := time.Now()
			floor()
			t1 := time.Now()
			lock()
			tf, tl = t1.Sub(t0), time.Since(t1)
		} else {
			t0 := time.Now()
			lock()
			t1 := time.Now()
			floor()
			tl, tf = t1.Sub(t0), time.Since(t1)
		}
		i++
		floorT += tf
		lockT += tl
		ratios = append(ratios, float64(tl)/float64(tf))
	}
	pairs := float64(b.N * benchBlock)
	sort.Float64s(ratios)
	b.ReportMetric(float64(floorT.Nanoseconds())/pairs, "floor-pair-ns")
	b.ReportMetric(float64(lockT.Nanoseconds())/pairs, "lock-pair-ns")
	b.ReportMetric(float64(lockT)/float64(floorT), "ratio")
	b.ReportMetric(ratios[len(ratios)/2], "ratio-median")
	b.ReportMetric(pairs/lockT.Seconds(), "lock+unlock/s")
	// Floor pairs are 2 round trips; lock pairs should be too.
	lockRT := float64(h.roundTrips()-rt0) - 2*pairs
	b.ReportMetric(lockRT/pairs, "lock-roundtrips/op")
	if n := h.acquires.Load() - acq0; float64(n) != pairs {
		b.Logf("%d acquire calls for %v acquisitions", n, pairs)
	}

	// Where the difference goes, after the timed loop: the server's own
	// time per EVALSHA (INFO commandstats) for the lock scripts and for the
	// trivial one.
	serverUS := func(f func()) float64 {
		if err := admin.ConfigResetStat(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		for range 1000 / benchBlock {
			f()
		}
		return benchUsecPerCall(b, ctx, admin, "evalsha")
	}
	b.ReportMetric(serverUS(lock), "server-us/lock-call")
	b.ReportMetric(serverUS(floor), "server-us/floor-call")
}

// ---------------------------------------------------------------------------
// 3. One hot lock, 8 goroutines over 4 clients.

type benchAcq struct {
	g                     int           // goroutine
	called, got, released time.Duration // since the run's base: Lock called, Lock returned, just before Unlock
	unlock                time.Duration // Unlock call to return
}

// BenchmarkLockContended: one hot lock, -contended.goroutines goroutines (8)
// spread over -contended.clients Clients (4), each looping Lock (a new handle
// each time, watchdog lease), hold 20 ms, Unlock. It runs for
// -contended.dur of wall time whatever b.N is; its metrics do not depend on
// b.N. ns/op is set to wall time per acquisition.
//
// handoff: from just before the releaser calls Unlock to the next holder's
// Lock returning (-same: the releaser took it again; -other: another
// goroutine did). wait: Lock call to return. reacquire-rate: fraction of
// acquisitions by the goroutine that released last. roundtrips/acq counts
// hooked commands of all clients; pub/sub commands bypass hooks and are
// reported from the server's INFO commandstats as pubsub-cmds/acq
// (SUBSCRIBE, UNSUBSCRIBE, PING); publish/acq counts PUBLISHes run by the
// scripts (no round trip of their own, but one message per subscribed
// client). idle-rtt-p50-ms is the baseline: a trivial EVALSHA sent after 20 ms
// of idleness, as an Unlock is.
func BenchmarkLockContended(b *testing.B) {
	const hold = 20 * time.Millisecond
	clients, goroutines := *benchContendedClients, *benchContendedGoroutines
	b.StopTimer()
	srv := redistest.Start(b)
	admin := srv.Client(b)
	ctx := benchCtx(b)
	var hooks []*benchRTHook
	var cs []*Client
	for range clients {
		rdb := srv.Client(b)
		hooks = append(hooks, newBenchHook(rdb))
		c := newClient(b, rdb, nil)
		cs = append(cs, c)
		benchLockUnlock(b, ctx, c.GetLock("bench:contended:warm"), 0)
	}
	const name = "bench:contended"
	sumHooks := func(f func(h *benchRTHook) int64) (n int64) {
		for _, h := range hooks {
			n += f(h)
		}
		return n
	}
	// Baseline: on this machine a round trip after the 20 ms of idleness a
	// holder sleeps costs far more than a hot one (CPU wake-up); a hand-off
	// needs at least an Unlock and an acquire round trip after idleness.
	sha := benchLoadTrivial(b, ctx, admin)
	var idleRTT []time.Duration
	for range 25 {
		time.Sleep(hold)
		t0 := time.Now()
		if err := admin.EvalSha(ctx, sha, nil).Err(); err != nil {
			b.Fatal(err)
		}
		idleRTT = append(idleRTT, time.Since(t0))
	}
	rt0 := sumHooks((*benchRTHook).roundTrips)
	acqCalls0 := sumHooks(func(h *benchRTHook) int64 { return h.acquires.Load() })
	hs0 := sumHooks(func(h *benchRTHook) int64 { return h.handshake.Load() })
	stats0 := benchCommandStats(b, ctx, admin)

	var (
		mu       sync.Mutex
		log      []benchAcq
		holders  atomic.Int32
		overlaps atomic.Int32
		stop     atomic.Bool
		wg       sync.WaitGroup
	)
	errs := make(chan error, goroutines)
	// Bound every Lock so that a failed Unlock cannot hang the benchmark.
	lockCtx, cancel := context.WithTimeout(ctx, *benchContendedDur+time.Minute)
	defer cancel()
	base := time.Now()
	b.StartTimer()
	for g := range goroutines {
		c := cs[g%clients]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				l := c.GetLock(name)
				called := time.Since(base)
				if err := l.Lock(lockCtx); err != nil {
					errs <- fmt.Errorf("goroutine %d: Lock: %w", g, err)
					return
				}
				got := time.Since(base)
				if holders.Add(1) != 1 {
					overlaps.Add(1)
				}
				time.Sleep(hold)
				holders.Add(-1)
				released := time.Since(base)
				err := l.Unlock(ctx)
				unlock := time.Since(base) - released
				mu.Lock()
				log = append(log, benchAcq{g: g, called: called, got: got, released: released, unlock: unlock})
				mu.Unlock()
				if err != nil {
					errs <- fmt.Errorf("goroutine %d: Unlock: %w", g, err)
					return
				}
			}
		}()
	}
	time.Sleep(*benchContendedDur)
	stop.Store(true)
	wg.Wait()
	wall := time.Since(base)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Error(err)
	}
	if n := overlaps.Load(); n > 0 {
		b.Errorf("mutual exclusion violated %d times", n)
	}
	n := len(log)
	if n < 2 {
		b.Fatalf("only %d acquisitions", n)
	}
	sort.Slice(log, func(i, j int) bool { return log[i].got < log[j].got })
	var handoff, handoffSame, handoffOther, wait, waitSame, unlock []time.Duration
	same := 0
	per := make([]int, goroutines)
	for i, a := range log {
		per[a.g]++
		wait = append(wait, a.got-a.called)
		unlock = append(unlock, a.unlock)
		if i == 0 {
			continue
		}
		prev := log[i-1]
		if a.got < prev.released {
			b.Errorf("acquisition %d (goroutine %d) at %v before the previous holder released at %v",
				i, a.g, a.got, prev.released)
		}
		d := a.got - prev.released
		handoff = append(handoff, d)
		if a.g == prev.g {
			same++
			handoffSame = append(handoffSame, d)
			waitSame = append(waitSame, a.got-a.called)
		} else {
			handoffOther = append(handoffOther, d)
		}
	}
	minPer, maxPer := per[0], per[0]
	for _, k := range per {
		minPer, maxPer = min(minPer, k), max(maxPer, k)
	}
	rts := sumHooks((*benchRTHook).roundTrips) - rt0
	acqCalls := sumHooks(func(h *benchRTHook) int64 { return h.acquires.Load() }) - acqCalls0
	hs := sumHooks(func(h *benchRTHook) int64 { return h.handshake.Load() }) - hs0
	stats1 := benchCommandStats(b, ctx, admin)
	delta := func(cmd string) int64 { return stats1[cmd] - stats0[cmd] }
	pubsubCmds := delta("subscribe") + delta("unsubscribe") + delta("ping")

	fn := float64(n)
	b.ReportMetric(float64(wall.Nanoseconds())/fn, "ns/op")
	b.ReportMetric(fn/wall.Seconds(), "acq/s")
	b.ReportMetric(benchMs(benchPct(handoff, 0.50)), "handoff-p50-ms")
	b.ReportMetric(benchMs(benchPct(handoff, 0.99)), "handoff-p99-ms")
	b.ReportMetric(benchMs(benchPct(handoffSame, 0.50)), "handoff-same-p50-ms")
	b.ReportMetric(benchMs(benchPct(handoffOther, 0.50)), "handoff-other-p50-ms")
	b.ReportMetric(benchMs(benchPct(handoffOther, 0.99)), "handoff-other-p99-ms")
	b.ReportMetric(benchMs(benchPct(wait, 0.50)), "wait-p50-ms")
	b.ReportMetric(benchMs(benchPct(wait, 0.99)), "wait-p99-ms")
	b.ReportMetric(benchMs(benchPct(waitSame, 0.50)), "wait-same-p50-ms")
	b.ReportMetric(benchMs(benchPct(unlock, 0.50)), "unlock-p50-ms")
	b.ReportMetric(float64(rts)/fn, "roundtrips/acq")
	b.ReportMetric(float64(acqCalls)/fn, "acquire-calls/acq")
	b.ReportMetric(float64(pubsubCmds)/fn, "pubsub-cmds/acq")
	b.ReportMetric(float64(delta("publish"))/fn, "publish/acq")
	b.ReportMetric(benchMs(benchPct(idleRTT, 0.50)), "idle-rtt-p50-ms")
	b.ReportMetric(float64(same)/float64(n-1), "reacquire-rate")
	if minPer > 0 {
		b.ReportMetric(float64(maxPer)/float64(minPer), "fairness-max/min")
	} else {
		b.ReportMetric(math.Inf(1), "fairness-max/min")
	}
	b.ReportMetric(float64(minPer), "acq-min")
	b.ReportMetric(float64(maxPer), "acq-max")
	b.Logf("%d acquisitions in %v; per goroutine %v; hooked round trips %d (acquire calls %d, handshake %d not counted); "+
		"server: evalsha %d, publish %d, subscribe %d, unsubscribe %d, ping %d (pub/sub commands bypass go-redis hooks)",
		n, wall.Round(time.Millisecond), per, rts, acqCalls, hs,
		delta("evalsha"), delta("publish"), delta("subscribe"), delta("unsubscribe"), delta("ping"))
}

// ---------------------------------------------------------------------------
// 4. Watchdog renewal of many leases.

// BenchmarkWatchdogRenewal holds -watchdog.leases watchdog leases on one
// client (WatchdogTimeout 3 s: a pass every second) and measures
// -watchdog.passes renewal passes. Like BenchmarkLockContended it ignores b.N.
// probe-*: latency of a PING sent every millisecond on another connection
// during the measurement, which shows how long a pass holds the server up.
func BenchmarkWatchdogRenewal(b *testing.B) {
	const (
		timeout = 3 * time.Second
		period  = timeout / 3
		workers = 4
	)
	leases, passes := *benchWatchdogLeases, *benchWatchdogPasses
	b.StopTimer()
	_, rdb, h, admin := benchRedis(b)
	c := newClient(b, rdb, &Options{WatchdogTimeout: timeout})
	ctx := benchCtx(b)

	locks := make([]*Lock, leases)
	for i := range locks {
		locks[i] = c.GetLock("wd:" + strconv.Itoa(i))
	}
	forAll := func(f func(l *Lock) error) error {
		var wg sync.WaitGroup
		var next atomic.Int64
		errs := make(chan error, workers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= len(locks) {
						return
					}
					if err := f(locks[i]); err != nil {
						errs <- fmt.Errorf("%s: %w", locks[i].Name(), err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	t0 := time.Now()
	err := forAll(func(l *Lock) error {
		ok, err := l.TryLock(ctx, 0, 0)
		if err == nil && !ok {
			err = fmt.Errorf("not acquired")
		}
		return err
	})
	if err != nil {
		b.Fatalf("acquire: %v", err)
	}
	acquireTime := time.Since(t0)
	if holds, _, _ := c.watchdog.stats(); holds != leases {
		b.Fatalf("watchdog keeps %d holds, want %d", holds, leases)
	}

	// Log round trips from now on; a pass already in flight is discarded
	// below as the first, possibly partial, group.
	h.logOn.Store(true)
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	// A probe PINGs the server on its own connection every millisecond
	// meanwhile: the renewal pipeline's scripts run between its commands,
	// and its worst latency shows how long a pass holds the server up.
	var probe []time.Duration
	probeStop, probeDone := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(probeDone)
		for {
			select {
			case <-probeStop:
				return
			case <-time.After(time.Millisecond):
			}
			t0 := time.Now()
			if admin.Ping(ctx).Err() == nil {
				probe = append(probe, time.Since(t0))
			}
		}
	}()
	b.StartTimer()
	type passStat struct {
		d     time.Duration
		calls int
	}
	var seen []passStat
	_, lastD, lastCalls := c.watchdog.stats()
	deadline := time.Now().Add(time.Duration(passes+3) * period)
	for len(seen) < passes+1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		_, d, calls := c.watchdog.stats()
		if d != lastD || calls != lastCalls {
			seen = append(seen, passStat{d, calls})
			lastD, lastCalls = d, calls
		}
	}
	b.StopTimer()
	h.logOn.Store(false)
	close(probeStop)
	<-probeDone
	renewUS := benchUsecPerCall(b, ctx, admin, "evalsha") // only lock_renew ran meanwhile
	if len(seen) < passes+1 {
		b.Fatalf("saw %d renewal passes in %v, want %d", len(seen), time.Duration(passes+3)*period, passes+1)
	}
	seen = seen[1:] // the first may have begun before logging started

	// Group the logged round trips into passes: a gap longer than a third
	// of the period separates two passes.
	h.logMu.Lock()
	events := append([]benchRTEvent(nil), h.events...)
	h.logMu.Unlock()
	var groups [][]benchRTEvent
	for i, e := range events {
		if i == 0 || e.start.Sub(events[i-1].end) > period/3 {
			groups = append(groups, nil)
		}
		groups[len(groups)-1] = append(groups[len(groups)-1], e)
	}
	if len(groups) < 2 {
		b.Fatalf("round trips fell into %d groups, want at least 2", len(groups))
	}
	groups = groups[1:]
	if len(groups) > len(seen) {
		groups = groups[:len(seen)]
	}
	var rt, renewCalls, cmds int
	var passWall time.Duration
	for _, g := range groups {
		rt += len(g)
		for _, e := range g {
			renewCalls += e.renews
			cmds += e.cmds
		}
		passWall += g[len(g)-1].end.Sub(g[0].start)
	}
	var passD, maxD time.Duration
	var calls int
	for _, s := range seen {
		passD += s.d
		maxD = max(maxD, s.d)
		calls += s.calls
	}
	ng, ns := float64(len(groups)), float64(len(seen))
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(float64(rt)/ng, "roundtrips/pass")
	b.ReportMetric(float64(calls)/ns, "calls/pass")
	b.ReportMetric(benchMs(passD)/ns, "pass-ms")
	b.ReportMetric(benchMs(maxD), "pass-max-ms")
	b.ReportMetric(float64(renewCalls)/ng, "renew-calls/pass")
	b.ReportMetric(float64(leases)/acquireTime.Seconds(), "acquire/s")
	b.ReportMetric(renewUS, "server-us/renew-call")
	b.ReportMetric(benchMs(benchPct(probe, 0.50)), "probe-p50-ms")
	b.ReportMetric(benchMs(benchPct(probe, 0.999)), "probe-p999-ms")
	b.ReportMetric(benchMs(benchPct(probe, 1)), "probe-max-ms")
	b.Logf("%d leases acquired in %v by %d goroutines; %d passes measured: %d round trips (%d commands, %d lock_renew calls), "+
		"hook-timed wall %v; watchdog-reported pass durations %v",
		leases, acquireTime.Round(time.Millisecond), workers, len(groups), rt, cmds, renewCalls,
		passWall.Round(time.Microsecond), seen)

	// Sanity: every lease is still held, by its owner, with a refreshed PTTL
	// (more than 3 s after the first acquisitions, an unrenewed lease would
	// be gone).
	if age := time.Since(t0); age <= timeout {
		b.Fatalf("only %v since the acquisitions: cannot tell renewed leases from fresh ones", age)
	}
	pipe := admin.Pipeline()
	held := make([]*redis.BoolCmd, leases)
	pttl := make([]*redis.DurationCmd, leases)
	for i, l := range locks {
		held[i] = pipe.HExists(ctx, l.Name(), l.Owner())
		pttl[i] = pipe.PTTL(ctx, l.Name())
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatalf("checking leases: %v", err)
	}
	var bad int
	minTTL := time.Duration(math.MaxInt64)
	for i, l := range locks {
		ttl := pttl[i].Val()
		minTTL = min(minTTL, ttl)
		if !held[i].Val() || ttl < timeout-period-500*time.Millisecond || l.Err() != nil {
			if bad < 5 {
				b.Errorf("%s: held %v, PTTL %v, Err %v", l.Name(), held[i].Val(), ttl, l.Err())
			}
			bad++
		}
	}
	if bad > 0 {
		b.Errorf("%d of %d leases not held with a refreshed PTTL", bad, leases)
	}
	b.ReportMetric(benchMs(minTTL), "min-pttl-ms")

	if err := forAll(func(l *Lock) error { return l.Unlock(ctx) }); err != nil {
		b.Fatalf("unlock: %v", err)
	}
	if holds, _, _ := c.watchdog.stats(); holds != 0 {
		b.Errorf("watchdog still keeps %d holds after unlocking all", holds)
	}
	// Unlocked locks leave their fencing counter (no expiry) and an unlock
	// latch (expiring after RetryWindow) behind.
	keys, persistent := benchKeyspace(ctx, admin)
	b.ReportMetric(float64(keys), "keys-left")
	b.ReportMetric(float64(persistent), "persistent-keys-left")
}
