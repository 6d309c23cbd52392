package redisson

// Benchmarks of the keyed limiters: decisions per second from 1 and 32
// goroutines, round trips per decision (benchRTHook), and Redis memory per
// tracked identity (MEMORY USAGE of the identity's key, and the growth of
// INFO used_memory). Each benchmark starts its own redis-server.
//
//	go test -run '^$' -bench 'KeyedLimiter' -benchtime 2s .

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// benchLimiters builds each keyed limiter with a limit no benchmark reaches
// (every decision is an allowed write, the costlier path).
var benchLimiters = []struct {
	kind string
	make func(c *Client, name string) KeyedLimiter
}{
	{"fixedwindow", func(c *Client, name string) KeyedLimiter {
		return c.GetFixedWindowLimiter(name, 1<<40, time.Hour)
	}},
	{"gcra", func(c *Client, name string) KeyedLimiter {
		return c.GetGCRALimiter(name, 1_000_000, time.Second, 1<<20)
	}},
}

const benchIdentities = 1000

func BenchmarkKeyedLimiter(b *testing.B) {
	for _, bl := range benchLimiters {
		for _, goroutines := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", bl.kind, goroutines), func(b *testing.B) {
				_, rdb, h, admin := benchRedis(b, func(o *redis.Options) { o.PoolSize = goroutines + 4 })
				ctx := benchCtx(b)
				c := newClient(b, rdb, nil)
				l := bl.make(c, "bench")
				keys := make([]string, benchIdentities)
				for i := range keys {
					keys[i] = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256)
				}
				if _, err := l.Allow(ctx, keys[0], 1); err != nil { // load the script, dial
					b.Fatal(err)
				}
				b.ReportAllocs()
				rt0 := h.roundTrips()
				admin.ConfigResetStat(ctx)
				var next, rejected atomic.Int64
				var failed atomic.Value
				b.ResetTimer()
				var wg sync.WaitGroup
				for range goroutines {
					wg.Go(func() {
						for {
							i := next.Add(1)
							if i > int64(b.N) {
								return
							}
							d, err := l.Allow(ctx, keys[i%benchIdentities], 1)
							if err != nil {
								failed.Store(err)
								return
							}
							if !d.Allowed {
								rejected.Add(1)
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				if err := failed.Load(); err != nil {
					b.Fatal(err)
				}
				if rejected.Load() > 0 {
					b.Fatalf("%d decisions rejected; the benchmark measures allowed ones", rejected.Load())
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
				b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
				var cmds int64
				for name, n := range benchCommandStats(b, ctx, admin) {
					if name != "config|resetstat" && name != "info" {
						cmds += n
					}
				}
				b.ReportMetric(float64(cmds)/float64(b.N), "redis-cmds/op")
			})
		}
	}
}

// BenchmarkKeyedLimiterMemory tracks b.N identities (at least 1000) and
// reports the Redis memory each costs.
func BenchmarkKeyedLimiterMemory(b *testing.B) {
	for _, bl := range benchLimiters {
		b.Run(bl.kind, func(b *testing.B) {
			_, rdb, _, admin := benchRedis(b)
			ctx := benchCtx(b)
			c := newClient(b, rdb, nil)
			// Identities that stay tracked for the whole benchmark: a one-hour
			// window, or a GCRA rate of one per hour.
			var l KeyedLimiter = c.GetFixedWindowLimiter("bench", 1000, time.Hour)
			if bl.kind == "gcra" {
				l = c.GetGCRALimiter("bench", 1, time.Hour, 1000)
			}
			if _, err := l.Allow(ctx, "warm-up", 1); err != nil {
				b.Fatal(err)
			}
			before := usedMemory(b, ctx, admin)
			n := max(b.N, benchIdentities)
			b.ResetTimer()
			for i := range n {
				if _, err := l.Allow(ctx, "user:"+strconv.Itoa(i), 1); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			after := usedMemory(b, ctx, admin)
			var usage int64
			const sample = 100
			for i := range sample {
				u, err := admin.MemoryUsage(ctx, identityKey("bench", "user:"+strconv.Itoa(i*n/sample))).Result()
				if err != nil {
					b.Fatal(err)
				}
				usage += u
			}
			b.ReportMetric(float64(usage)/sample, "memory-usage-B/identity")
			b.ReportMetric(float64(after-before)/float64(n), "used_memory-B/identity")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// usedMemory returns INFO memory's used_memory.
func usedMemory(b *testing.B, ctx context.Context, rdb *redis.Client) int64 {
	b.Helper()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
	}
	b.Fatal("no used_memory in INFO memory")
	return 0
}

// BenchmarkKeyedLimiterLocalQuota measures local-quota mode on one hot
// identity (a limit no benchmark reaches, chunks of 1000): decisions per
// second and round trips per decision.
//
//	go test -run '^$' -bench 'KeyedLimiterLocalQuota' -benchtime 2s .
func BenchmarkKeyedLimiterLocalQuota(b *testing.B) {
	q := LocalQuota{Chunk: 1000}
	kinds := []struct {
		kind string
		make func(c *Client) *LocalQuotaLimiter
	}{
		{"fixedwindow", func(c *Client) *LocalQuotaLimiter {
			return c.GetFixedWindowLimiter("bench", 1<<40, time.Hour).WithLocalQuota(q)
		}},
		{"gcra", func(c *Client) *LocalQuotaLimiter {
			return c.GetGCRALimiter("bench", 1_000_000, time.Second, 1<<30).WithLocalQuota(q)
		}},
	}
	for _, k := range kinds {
		for _, goroutines := range []int{1, 32} {
			b.Run(fmt.Sprintf("%s/goroutines=%d", k.kind, goroutines), func(b *testing.B) {
				_, rdb, h, _ := benchRedis(b)
				ctx := benchCtx(b)
				l := k.make(newClient(b, rdb, nil))
				if _, err := l.Allow(ctx, "hot", 1); err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				rt0 := h.roundTrips()
				var rejected atomic.Int64
				var failed atomic.Value
				b.SetParallelism((goroutines + 1) / 2) // GOMAXPROCS is 2 here
				b.ResetTimer()
				if goroutines == 1 {
					for range b.N {
						d, err := l.Allow(ctx, "hot", 1)
						if err != nil {
							b.Fatal(err)
						}
						if !d.Allowed {
							rejected.Add(1)
						}
					}
				} else {
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							d, err := l.Allow(ctx, "hot", 1)
							if err != nil {
								failed.Store(err)
								return
							}
							if !d.Allowed {
								rejected.Add(1)
							}
						}
					})
				}
				b.StopTimer()
				if err := failed.Load(); err != nil {
					b.Fatal(err)
				}
				if rejected.Load() > 0 {
					b.Fatalf("%d decisions rejected; the benchmark measures allowed ones", rejected.Load())
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "decisions/s")
				b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
			})
		}
	}
}
