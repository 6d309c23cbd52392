package redisson

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkClusterLockUncontended runs lock+unlock in 4 or 32 goroutines, each
// on a lock of its own (names spread over the masters), on one client of a
// 3-master cluster, with the per-master auto-pipeline and without it.
// Round trips are counted on the node clients, where every command and
// pipeline ends up once (a lone call passes the Cluster client's hooks
// first, a batch only the node's).
//
//	go test -run '^$' -bench ClusterLockUncontended -benchtime 5s .
func BenchmarkClusterLockUncontended(b *testing.B) {
	cl := redistest.StartCluster(b, 3, 0)
	run := func(b *testing.B, goroutines int, opts *Options) {
		rdb := cl.Client(b)
		h := &benchRTHook{}
		ctx := benchCtx(b)
		var hooked sync.Map // each node client once
		add := func(n *redis.Client) {
			if _, dup := hooked.LoadOrStore(n, true); !dup {
				n.AddHook(h)
			}
		}
		rdb.OnNewNode(add)
		if err := rdb.ForEachShard(ctx, func(_ context.Context, n *redis.Client) error {
			add(n)
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		c := newClient(b, rdb, opts)
		for i := range 64 { // loads the scripts and dials every master
			benchLockUnlock(b, ctx, c.GetLock(fmt.Sprintf("bench:cl:warm:%d", i)), 0)
		}
		var seq atomic.Int64
		var failed atomic.Value
		b.SetParallelism(max(1, goroutines/runtime.GOMAXPROCS(0)))
		b.ReportAllocs()
		rt0 := h.roundTrips()
		b.ResetTimer()
		cpu0 := benchProcessCPU()
		b.RunParallel(func(pb *testing.PB) {
			l := c.GetLock(fmt.Sprintf("bench:cl:%d", seq.Add(1)))
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
		if f := failed.Load(); f != nil {
			b.Fatal(f)
		}
		b.ReportMetric(float64(benchProcessCPU()-cpu0)/float64(b.N), "client-cpu-ns/op")
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
	}
	b.Run("parallel4", func(b *testing.B) { run(b, 4, nil) })
	b.Run("parallel4-noautopipe", func(b *testing.B) { run(b, 4, &Options{DisableAutoPipeline: true}) })
	b.Run("parallel32", func(b *testing.B) { run(b, 32, nil) })
	b.Run("parallel32-noautopipe", func(b *testing.B) { run(b, 32, &Options{DisableAutoPipeline: true}) })
}

// BenchmarkClusterBatch10000 is BenchmarkBatch10000's batch of 10,000 calls
// (Bucket sets and gets, Map puts, AtomicLong additions with their call
// markers) on one client of a 3-master cluster, its 300 keys spread over
// the masters. Round trips are counted on the node clients: one pipeline
// per master is 3.
//
//	go test -run '^$' -bench ClusterBatch10000 -benchmem -count 5 .
func BenchmarkClusterBatch10000(b *testing.B) {
	cl := redistest.StartCluster(b, 3, 0)
	rdb := cl.Client(b)
	h := &benchRTHook{}
	ctx := benchCtx(b)
	var hooked sync.Map // each node client once
	add := func(n *redis.Client) {
		if _, dup := hooked.LoadOrStore(n, true); !dup {
			n.AddHook(h)
		}
	}
	rdb.OnNewNode(add)
	if err := rdb.ForEachShard(ctx, func(_ context.Context, n *redis.Client) error {
		add(n)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	c := newClient(b, rdb, nil)
	run := func() error {
		batch := c.CreateBatch()
		buckets := make([]*BatchBucket[string], 100)
		maps := make([]*BatchMap[string, int64], 100)
		longs := make([]*BatchAtomicLong, 100)
		for i := range 100 {
			buckets[i] = GetBatchBucket[string](batch, benchBatchKey("cb", i))
			maps[i] = GetBatchMap[string, int64](batch, benchBatchKey("cm", i))
			longs[i] = batch.GetAtomicLong(benchBatchKey("cal", i))
		}
		for i := 0; i < benchBatchCalls; i++ {
			switch i % 4 {
			case 0:
				buckets[i%100].Set("value")
			case 1:
				buckets[i%100].Get()
			case 2:
				maps[i%100].FastPut("k", int64(i))
			case 3:
				longs[i%100].AddAndGet(1)
			}
		}
		return batch.Execute(ctx)
	}
	if err := run(); err != nil { // dial and load the scripts outside the loop
		b.Fatal(err)
	}
	benchBatchLoop(b, h, run)
}
