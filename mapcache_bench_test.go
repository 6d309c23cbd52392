package redisson

import (
	"context"
	"errors"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// BenchmarkMapCachePutWithTTL measures PutWithTTL with a TTL and a max
// idle: one script call, one round trip (reported). Compare
// BenchmarkMapPut.
func BenchmarkMapCachePutWithTTL(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		m := GetMapCache[string, int64](c, "mc")
		keys := make([]string, 1024)
		for i := range keys {
			keys[i] = "k" + strconv.Itoa(i)
		}
		var n int
		return func() error {
			n++
			_, _, err := m.PutWithTTL(ctx, keys[n%len(keys)], int64(n), time.Hour, 10*time.Minute)
			return err
		}
	})
}

// BenchmarkMapCacheGet measures Get of a live entry with a TTL and a max
// idle (the read moves its idle deadline): one round trip. Compare
// BenchmarkMapGet.
func BenchmarkMapCacheGet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		m := GetMapCache[string, int64](c, "mc")
		if _, err := m.FastPutWithTTL(ctx, "k", 42, time.Hour, 10*time.Minute); err != nil {
			b.Fatal(err)
		}
		return func() error {
			_, ok, err := m.Get(ctx, "k")
			if err == nil && !ok {
				err = errors.New("entry missing")
			}
			return err
		}
	})
}

// BenchmarkMapCacheEvict100k measures the eviction of 100,000 expired
// entries by the client's pass, call after call: the longest single call
// (what Redis is blocked for at most, plus a round trip, as this client
// times it), the longest time Redis spent in one call (SLOWLOG), the median
// call, and the total.
func BenchmarkMapCacheEvict100k(b *testing.B) {
	srv := redistest.Start(b) // a server of its own: no other test's load
	rdb := srv.Client(b)
	ctx := testCtx(b, 10*time.Minute)
	const n = 100_000
	var longest, median, total, server time.Duration
	var serverCalls []time.Duration
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		c := mapCacheClient(b, rdb, time.Hour)
		name := "bench:evict:" + strconv.Itoa(i)
		fillExpired(b, ctx, rdb, name, n)
		keys := mapCacheKeys(name)
		pub := c.pubsub.publishArg(ctx)
		c.scripts.run(ctx, scriptMapCacheEvict, keys, pub, 0) // loads the script
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0")
		rdb.ConfigSet(ctx, "slowlog-max-len", "100000")
		rdb.SlowLogReset(ctx)
		b.StartTimer()
		var calls []time.Duration
		start := time.Now()
		for {
			t0 := time.Now()
			r, err := c.scripts.run(ctx, scriptMapCacheEvict, keys, pub, c.mapCaches.batch).Int64Slice()
			calls = append(calls, time.Since(t0))
			if err != nil {
				b.Fatal(err)
			}
			if r[1] == 0 {
				break
			}
		}
		total = time.Since(start)
		b.StopTimer()
		if left := rdb.HLen(ctx, name).Val(); left != 0 {
			b.Fatalf("%d entries left", left)
		}
		sort.Slice(calls, func(i, j int) bool { return calls[i] < calls[j] })
		longest, median = calls[len(calls)-1], calls[len(calls)/2]
		log, err := rdb.SlowLogGet(ctx, 100000).Result()
		if err != nil {
			b.Fatal(err)
		}
		server = 0
		serverCalls = serverCalls[:0]
		for _, e := range log {
			if len(e.Args) > 0 && e.Args[0] == "evalsha" {
				server = max(server, e.Duration)
				serverCalls = append(serverCalls, e.Duration)
			}
		}
		rdb.ConfigSet(ctx, "slowlog-log-slower-than", "10000")
		sort.Slice(serverCalls, func(i, j int) bool { return serverCalls[i] < serverCalls[j] })
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(longest.Microseconds())/1000, "longest-call-ms")
	b.ReportMetric(float64(server.Microseconds())/1000, "longest-server-ms")
	if len(serverCalls) > 0 {
		b.ReportMetric(float64(serverCalls[len(serverCalls)/2].Microseconds())/1000, "median-server-ms")
		b.ReportMetric(float64(serverCalls[len(serverCalls)*99/100].Microseconds())/1000, "p99-server-ms")
	}
	b.ReportMetric(float64(median.Microseconds())/1000, "median-call-ms")
	b.ReportMetric(float64(total.Milliseconds()), "total-ms")
}
