package redisson

// Benchmarks of ReadWriteLock: uncontended read and write lock+unlock, and
// one hot lock shared by 32 readers and 1 writer over 4 clients. Like the
// lock benchmarks (bench_test.go) each starts its own redis-server and counts
// round trips with benchRTHook; rwBenchHook additionally counts the
// read-write lock's script calls.

import (
	"context"
	"flag"
	"fmt"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

var (
	benchRWDur = flag.Duration("rw.dur", 2*time.Second,
		"wall time of one BenchmarkRWLockReaders32Writer1 run")
	benchRWReaders = flag.Int("rw.readers", 32,
		"reader goroutines in BenchmarkRWLockReaders32Writer1")
	benchRWClients = flag.Int("rw.clients", 4,
		"Clients (each its own go-redis client) in BenchmarkRWLockReaders32Writer1")
)

// rwBenchHook counts EVALSHA calls of the read-write lock's scripts, alone
// or pipelined. Safe for concurrent use; no allocation per command.
type rwBenchHook struct {
	readAcq, readRel, writeAcq, writeRel atomic.Int64
}

func (h *rwBenchHook) count(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) < 2 || cmd.Name() != "evalsha" {
		return
	}
	switch sha, _ := args[1].(string); sha {
	case readLock.acquire.SHA():
		h.readAcq.Add(1)
	case readLock.release.SHA():
		h.readRel.Add(1)
	case writeLock.acquire.SHA():
		h.writeAcq.Add(1)
	case writeLock.release.SHA():
		h.writeRel.Add(1)
	}
}

func (h *rwBenchHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(ctx, network, addr)
	}
}

func (h *rwBenchHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h *rwBenchHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.count(c)
		}
		return next(ctx, cmds)
	}
}

// benchRWOnce takes and releases both sides of name once (loads the
// scripts, dials).
func benchRWOnce(b *testing.B, ctx context.Context, c *Client, name string) {
	b.Helper()
	rw := c.GetReadWriteLock(name)
	for _, l := range []*Lock{rw.ReadLock(), rw.WriteLock()} {
		if err := l.Lock(ctx); err != nil {
			b.Fatalf("%s Lock: %v", l.kind.what, err)
		}
		if err := l.Unlock(ctx); err != nil {
			b.Fatalf("%s Unlock: %v", l.kind.what, err)
		}
	}
}

// ---------------------------------------------------------------------------
// Uncontended.

// BenchmarkRWLockUncontended: Lock + Unlock of the read side and of the
// write side, alone on their lock, from one goroutine; read-new-handle takes
// a new GetReadWriteLock handle (a new owner) each time.
func BenchmarkRWLockUncontended(b *testing.B) {
	run := func(b *testing.B, write, newHandle bool) {
		_, rdb, h, admin := benchRedis(b)
		rh := &rwBenchHook{}
		rdb.AddHook(rh)
		c := newClient(b, rdb, nil)
		ctx := benchCtx(b)
		const name = "bench:rw:uncontended"
		benchRWOnce(b, ctx, c, name)
		rw := c.GetReadWriteLock(name)
		side := func() *Lock {
			if write {
				return rw.WriteLock()
			}
			return rw.ReadLock()
		}
		b.ReportAllocs()
		rt0 := h.roundTrips()
		scripts0 := rh.readAcq.Load() + rh.readRel.Load() + rh.writeAcq.Load() + rh.writeRel.Load()
		for b.Loop() {
			if newHandle {
				rw = c.GetReadWriteLock(name)
			}
			l := side()
			if err := l.Lock(ctx); err != nil {
				b.Fatalf("Lock: %v", err)
			}
			if err := l.Unlock(ctx); err != nil {
				b.Fatalf("Unlock: %v", err)
			}
		}
		n := float64(b.N)
		b.ReportMetric(n/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/n, "roundtrips/op")
		scripts := rh.readAcq.Load() + rh.readRel.Load() + rh.writeAcq.Load() + rh.writeRel.Load() - scripts0
		b.ReportMetric(float64(scripts)/n, "script-calls/op")
		keys, persistent := benchKeyspace(ctx, admin)
		b.ReportMetric(float64(keys), "keys-left")
		b.ReportMetric(float64(persistent), "persistent-keys-left")
		if holds, _, _ := c.watchdog.stats(); holds != 0 {
			b.Errorf("watchdog still keeps %d holds after the loop", holds)
		}
	}
	b.Run("read", func(b *testing.B) { run(b, false, false) })
	b.Run("write", func(b *testing.B) { run(b, true, false) })
	b.Run("read-new-handle", func(b *testing.B) { run(b, false, true) })
}

// ---------------------------------------------------------------------------
// 32 readers, 1 writer.

// BenchmarkRWLockReaders32Writer1: one hot read-write lock; -rw.readers (32)
// reader goroutines and one writer goroutine spread over -rw.clients (4)
// Clients, for -rw.dur of wall time whatever b.N is. Readers loop Lock of
// the read side of a new GetReadWriteLock handle (watchdog lease), a few
// microseconds of work, Unlock; the writer loops Lock of the write side, 1 ms
// of work, Unlock. Every hold checks the exclusion invariant.
//
// Waits are Lock call to return. reads/s and writes/s count the holds
// acquired within -rw.dur (the writer's last Lock may only return once the
// readers have stopped: it is counted in write-wait but not in writes/s;
// Redisson's read-write lock gives writers no priority over readers).
// roundtrips/op counts hooked commands of all clients per hold; pub/sub
// commands bypass hooks and are reported from INFO commandstats
// (pubsub-cmds/op), as are the PUBLISHes run by the scripts (publish/op).
func BenchmarkRWLockReaders32Writer1(b *testing.B) {
	const writerHold = time.Millisecond
	nReaders, nClients, dur := *benchRWReaders, *benchRWClients, *benchRWDur
	b.StopTimer()
	srv := redistest.Start(b)
	admin := srv.Client(b)
	ctx := benchCtx(b)
	var (
		hooks   []*benchRTHook
		rwHooks []*rwBenchHook
		cs      []*Client
	)
	for range nClients {
		rdb := srv.Client(b)
		hooks = append(hooks, newBenchHook(rdb))
		rh := &rwBenchHook{}
		rdb.AddHook(rh)
		rwHooks = append(rwHooks, rh)
		c := newClient(b, rdb, nil)
		cs = append(cs, c)
		benchRWOnce(b, ctx, c, "bench:rw:warm")
	}
	const name = "bench:rw:hot"
	sum := func(f func(i int) int64) (n int64) {
		for i := range nClients {
			n += f(i)
		}
		return n
	}
	rts := func() int64 { return sum(func(i int) int64 { return hooks[i].roundTrips() }) }
	hss := func() int64 { return sum(func(i int) int64 { return hooks[i].handshake.Load() }) }
	rAcq := func() int64 { return sum(func(i int) int64 { return rwHooks[i].readAcq.Load() }) }
	wAcq := func() int64 { return sum(func(i int) int64 { return rwHooks[i].writeAcq.Load() }) }
	rt0, hs0, rAcq0, wAcq0 := rts(), hss(), rAcq(), wAcq()
	stats0 := benchCommandStats(b, ctx, admin)

	var (
		readersIn, writersIn  atomic.Int64
		maxReaders            atomic.Int64
		violations            atomic.Int64
		stop                  atomic.Bool
		wg                    sync.WaitGroup
		mu                    sync.Mutex
		readWaits, writeWaits []time.Duration
		reads, writes         int // acquired within dur
		lateWrites            int
	)
	errs := make(chan error, nReaders+1)
	lockCtx, cancel := context.WithTimeout(ctx, dur+time.Minute)
	defer cancel()
	base := time.Now()
	end := base.Add(dur)
	var sink atomic.Int64
	b.StartTimer()
	for g := range nReaders {
		c := cs[g%nClients]
		wg.Add(1)
		go func() {
			defer wg.Done()
			var waits []time.Duration
			n := 0
			defer func() {
				mu.Lock()
				readWaits = append(readWaits, waits...)
				reads += n
				mu.Unlock()
			}()
			for !stop.Load() {
				l := c.GetReadWriteLock(name).ReadLock()
				t0 := time.Now()
				if err := l.Lock(lockCtx); err != nil {
					errs <- fmt.Errorf("reader %d: Lock: %w", g, err)
					return
				}
				got := time.Now()
				waits = append(waits, got.Sub(t0))
				if got.Before(end) {
					n++
				}
				in := readersIn.Add(1)
				if writersIn.Load() != 0 {
					violations.Add(1)
				}
				for m := maxReaders.Load(); in > m && !maxReaders.CompareAndSwap(m, in); m = maxReaders.Load() {
				}
				x := int64(0) // a few microseconds of work
				for i := range 2000 {
					x += int64(i ^ g)
				}
				sink.Add(x)
				readersIn.Add(-1)
				if err := l.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("reader %d: Unlock: %w", g, err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := cs[nReaders%nClients]
		for !stop.Load() {
			l := c.GetReadWriteLock(name).WriteLock()
			t0 := time.Now()
			if err := l.Lock(lockCtx); err != nil {
				errs <- fmt.Errorf("writer: Lock: %w", err)
				return
			}
			got := time.Now()
			mu.Lock()
			writeWaits = append(writeWaits, got.Sub(t0))
			if got.Before(end) {
				writes++
			} else {
				lateWrites++
			}
			mu.Unlock()
			if writersIn.Add(1) != 1 || readersIn.Load() != 0 {
				violations.Add(1)
			}
			time.Sleep(writerHold)
			writersIn.Add(-1)
			if err := l.Unlock(ctx); err != nil {
				errs <- fmt.Errorf("writer: Unlock: %w", err)
				return
			}
		}
	}()
	time.Sleep(dur)
	stop.Store(true)
	wg.Wait()
	wall := time.Since(base)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Error(err)
	}
	if n := violations.Load(); n > 0 {
		b.Errorf("exclusion violated %d times", n)
	}
	if len(readWaits) == 0 {
		b.Fatal("no read acquisitions")
	}
	holds := len(readWaits) + len(writeWaits)
	rt := rts() - rt0
	stats1 := benchCommandStats(b, ctx, admin)
	delta := func(cmd string) int64 { return stats1[cmd] - stats0[cmd] }
	pubsubCmds := delta("subscribe") + delta("unsubscribe") + delta("ping")
	sort.Slice(writeWaits, func(i, j int) bool { return writeWaits[i] < writeWaits[j] })

	fh := float64(holds)
	b.ReportMetric(float64(wall.Nanoseconds())/fh, "ns/op")
	b.ReportMetric(float64(reads)/dur.Seconds(), "reads/s")
	b.ReportMetric(float64(writes)/dur.Seconds(), "writes/s")
	b.ReportMetric(float64(writes), "writes")
	b.ReportMetric(benchMs(benchPct(writeWaits, 0.50)), "write-wait-p50-ms")
	b.ReportMetric(benchMs(benchPct(writeWaits, 0.99)), "write-wait-p99-ms")
	b.ReportMetric(benchMs(benchPct(writeWaits, 1)), "write-wait-max-ms")
	b.ReportMetric(benchMs(benchPct(readWaits, 0.50)), "read-wait-p50-ms")
	b.ReportMetric(benchMs(benchPct(readWaits, 0.99)), "read-wait-p99-ms")
	b.ReportMetric(float64(rt)/fh, "roundtrips/op")
	b.ReportMetric(float64(rAcq()-rAcq0)/float64(len(readWaits)), "read-acquire-calls/read")
	if len(writeWaits) > 0 {
		b.ReportMetric(float64(wAcq()-wAcq0)/float64(len(writeWaits)), "write-acquire-calls/write")
	}
	b.ReportMetric(float64(pubsubCmds)/fh, "pubsub-cmds/op")
	b.ReportMetric(float64(delta("publish"))/fh, "publish/op")
	b.ReportMetric(float64(maxReaders.Load()), "max-concurrent-readers")
	b.Logf("%d reads and %d writes (%d after the %v window) in %v over %d clients; hooked round trips %d "+
		"(handshake %d not counted); server: evalsha %d, publish %d, subscribe %d, unsubscribe %d, ping %d; "+
		"longest writer waits %v",
		len(readWaits), len(writeWaits), lateWrites, dur, wall.Round(time.Millisecond), nClients, rt, hss()-hs0,
		delta("evalsha"), delta("publish"), delta("subscribe"), delta("unsubscribe"), delta("ping"),
		rwBenchTail(writeWaits, 10))
}

// rwBenchTail returns the last n of the sorted ds, rounded to the
// millisecond, for logs.
func rwBenchTail(ds []time.Duration, n int) []time.Duration {
	var out []time.Duration
	for _, d := range ds[max(0, len(ds)-n):] {
		out = append(out, d.Round(time.Millisecond))
	}
	return out
}
