package redisson

// Benchmarks of BloomFilter and IdGenerator: round trips per operation
// (benchRTHook, bench_test.go) and allocations. Each starts its own
// redis-server.

import (
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkBloomFilter measures one Add or Contains per op (one script call
// carrying the config check and k = 7 bit positions), and AddAll /
// ContainsAll of 10,000 values per op (10 script calls in one pipeline).
func BenchmarkBloomFilter(b *testing.B) {
	setup := func(b *testing.B) (*BloomFilter[string], *benchRTHook) {
		_, rdb, h, _ := benchRedis(b)
		c := newClient(b, rdb, nil)
		ctx := benchCtx(b)
		f := GetBloomFilter[string](c, "bench:bloom")
		if _, err := f.TryInit(ctx, 1_000_000, 0.01); err != nil {
			b.Fatal(err)
		}
		if _, err := f.AddAll(ctx, []string{"warm", "up"}); err != nil { // loads the script, reads nothing more
			b.Fatal(err)
		}
		if _, err := f.ContainsAll(ctx, []string{"warm", "up"}); err != nil {
			b.Fatal(err)
		}
		return f, h
	}
	single := func(b *testing.B, add bool) {
		f, h := setup(b)
		ctx := benchCtx(b)
		keys := make([]string, 4096)
		for i := range keys {
			keys[i] = "value:" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		rt0 := h.roundTrips()
		i := 0
		for b.Loop() {
			var err error
			if add {
				_, err = f.Add(ctx, keys[i%len(keys)])
			} else {
				_, err = f.Contains(ctx, keys[i%len(keys)])
			}
			if err != nil {
				b.Fatal(err)
			}
			i++
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
	}
	batch := func(b *testing.B, add bool) {
		f, h := setup(b)
		ctx := benchCtx(b)
		const n = 10_000
		values := make([]string, n)
		var seq atomic.Int64
		b.ReportAllocs()
		rt0 := h.roundTrips()
		for b.Loop() {
			base := seq.Add(n)
			for i := range values {
				values[i] = "value:" + strconv.FormatInt(base+int64(i), 10)
			}
			var err error
			if add {
				_, err = f.AddAll(ctx, values)
			} else {
				_, err = f.ContainsAll(ctx, values)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "values/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
	}
	b.Run("Add", func(b *testing.B) { single(b, true) })
	b.Run("Contains", func(b *testing.B) { single(b, false) })
	b.Run("AddAll10k", func(b *testing.B) { batch(b, true) })
	b.Run("ContainsAll10k", func(b *testing.B) { batch(b, false) })
}

// BenchmarkIdGenerator measures NextID with blocks of 1, 100 and 5000
// (Redisson's default): round trips per id fall to 1/allocation.
func BenchmarkIdGenerator(b *testing.B) {
	for _, alloc := range []int64{1, 100, 5000} {
		b.Run("alloc"+strconv.FormatInt(alloc, 10), func(b *testing.B) {
			_, rdb, h, _ := benchRedis(b)
			c := newClient(b, rdb, nil)
			ctx := benchCtx(b)
			g := c.GetIdGenerator("bench:ids")
			if _, err := g.TryInit(ctx, 1, alloc); err != nil {
				b.Fatal(err)
			}
			if _, err := g.NextID(ctx); err != nil { // loads the script
				b.Fatal(err)
			}
			b.ReportAllocs()
			rt0 := h.roundTrips()
			for b.Loop() {
				if _, err := g.NextID(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
			b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
		})
	}
	b.Run("alloc5000-parallel", func(b *testing.B) {
		_, rdb, h, _ := benchRedis(b)
		c := newClient(b, rdb, nil)
		ctx := benchCtx(b)
		g := c.GetIdGenerator("bench:ids")
		if _, err := g.NextID(ctx); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		rt0 := h.roundTrips()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := g.NextID(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
		b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
	})
}
