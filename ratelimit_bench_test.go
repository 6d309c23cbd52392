package redisson

// Benchmarks of the RateLimiter: decisions per second from 1 and 32
// goroutines, round trips per decision (benchRTHook, bench_test.go), the
// cost of a decision as the live log grows, and the Redis memory a limiter
// takes. Each benchmark starts its own redis-server.

import (
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchRateDecide runs TryAcquire(1) b.N times over limiters, one goroutine
// or par per GOMAXPROCS, and reports decisions/s, the share granted and
// round trips per decision.
func benchRateDecide(b *testing.B, h *benchRTHook, limiters []*RateLimiter, par int) {
	ctx := benchCtx(b)
	var granted, failed atomic.Int64
	var seq atomic.Int64
	rt0 := h.roundTrips()
	b.ReportAllocs()
	b.ResetTimer()
	if par == 0 {
		i := 0
		for b.Loop() {
			ok, err := limiters[i%len(limiters)].TryAcquire(ctx, 1)
			if err != nil {
				b.Fatal(err)
			}
			if ok {
				granted.Add(1)
			}
			i++
		}
	} else {
		b.SetParallelism(par)
		b.RunParallel(func(pb *testing.PB) {
			i := int(seq.Add(1)) * 7919
			for pb.Next() {
				ok, err := limiters[i%len(limiters)].TryAcquire(ctx, 1)
				if err != nil {
					failed.Add(1)
					return
				}
				if ok {
					granted.Add(1)
				}
				i++
			}
		})
	}
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d goroutines failed", failed.Load())
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
	b.ReportMetric(float64(granted.Load())/float64(b.N), "granted/op")
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

func benchRateLimiters(b *testing.B, c *Client, n int, rate int64, interval time.Duration) []*RateLimiter {
	ctx := benchCtx(b)
	ls := make([]*RateLimiter, n)
	for i := range ls {
		ls[i] = c.GetRateLimiter("bench:rate:" + strconv.Itoa(i))
		if err := ls[i].SetRate(ctx, Overall, rate, interval); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := ls[0].TryAcquire(ctx, 1); err != nil { // loads the script, dials
		b.Fatal(err)
	}
	return ls
}

// BenchmarkRateLimiterTryAcquire: "per-key" is one limiter per caller key
// (10,000 limiters of 10 per second, as for per-user limits: few live
// entries each); "hot" is one limiter of 100 per 100ms that every call
// contends for (most calls refused, up to 100 live entries).
func BenchmarkRateLimiterTryAcquire(b *testing.B) {
	// 16 × GOMAXPROCS goroutines: 32 on the 2-core target machine.
	par32 := max(1, 32/runtime.GOMAXPROCS(0))
	for _, tc := range []struct {
		name     string
		keys     int
		rate     int64
		interval time.Duration
		par      int
	}{
		{"per-key/g1", 10000, 10, time.Second, 0},
		{"per-key/g32", 10000, 10, time.Second, par32},
		{"hot/g1", 1, 100, 100 * time.Millisecond, 0},
		{"hot/g32", 1, 100, 100 * time.Millisecond, par32},
	} {
		b.Run(tc.name, func(b *testing.B) {
			_, rdb, h, _ := benchRedis(b, func(o *redis.Options) { o.PoolSize = 64 })
			c := newClient(b, rdb, nil)
			benchRateDecide(b, h, benchRateLimiters(b, c, tc.keys, tc.rate, tc.interval), tc.par)
		})
	}
}

// BenchmarkRateLimiterLiveLog: the cost of one (refused) decision on a
// limiter whose window holds live entries: the script reads the whole live
// log to recompute the count.
func BenchmarkRateLimiterLiveLog(b *testing.B) {
	for _, live := range []int{10, 100, 1000, 10000} {
		b.Run(fmt.Sprintf("entries=%d", live), func(b *testing.B) {
			_, rdb, h, _ := benchRedis(b)
			c := newClient(b, rdb, nil)
			ctx := benchCtx(b)
			r := benchRateLimiters(b, c, 1, int64(live), time.Hour)[0]
			for range live - 1 {
				if ok, err := r.TryAcquire(ctx, 1); err != nil || !ok {
					b.Fatalf("fill: %v, %v", ok, err)
				}
			}
			benchRateDecide(b, h, []*RateLimiter{r}, 0)
		})
	}
}

// BenchmarkRateLimiterMemory reports MEMORY USAGE of a limiter's keys:
// idle (the config hash only) and with a full window of 1-permit grants.
func BenchmarkRateLimiterMemory(b *testing.B) {
	for _, live := range []int{0, 1, 10, 100, 1000} {
		b.Run(fmt.Sprintf("entries=%d", live), func(b *testing.B) {
			_, rdb, _, admin := benchRedis(b)
			c := newClient(b, rdb, nil)
			ctx := benchCtx(b)
			var bytes int64
			for b.Loop() {
				r := c.GetRateLimiter("bench:mem")
				if err := r.SetRate(ctx, Overall, int64(max(live, 1)), time.Hour); err != nil {
					b.Fatal(err)
				}
				for range live {
					if ok, err := r.TryAcquire(ctx, 1); err != nil || !ok {
						b.Fatalf("fill: %v, %v", ok, err)
					}
				}
				bytes = 0
				for _, k := range r.keys {
					n, err := admin.MemoryUsage(ctx, k, 0).Result()
					if err != nil && err != redis.Nil {
						b.Fatal(err)
					}
					bytes += n
				}
			}
			b.ReportMetric(float64(bytes), "bytes/limiter")
		})
	}
}
