package redisson

// Benchmarks of LocalCachedMap: local hits against Map.Get's round trip,
// and how long a write on one client stays visible as the old value on
// another. Each starts its own redis-server:
//
//	go test -run '^$' -bench 'LocalCachedMap' -benchmem -cpu 2 .

import (
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLocalCachedMapGet reads one of 1,000 cached keys from 8
// goroutines (RunParallel, parallelism 8/GOMAXPROCS), and the same with
// Map.Get, one round trip each, in the same run.
func BenchmarkLocalCachedMapGet(b *testing.B) {
	_, rdb, _, _ := benchRedis(b)
	ctx := benchCtx(b)
	c, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	const keys = 1000
	names := make([]string, keys)
	m := GetLocalCachedMap[string, string](c, "lcm", LocalCacheOptions{})
	b.Cleanup(func() { m.Close() })
	for i := range names {
		names[i] = "key:" + strconv.Itoa(i)
		if _, err := m.FastPut(ctx, names[i], "value "+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
	}
	waitLive(b, m)
	deadline := time.Now().Add(10 * time.Second)
	for m.CachedSize() < keys {
		if time.Now().After(deadline) {
			b.Fatalf("only %d keys cached", m.CachedSize())
		}
		for _, k := range names {
			if _, _, err := m.Get(ctx, k); err != nil {
				b.Fatal(err)
			}
		}
	}
	parallel := max(1, 8/runtime.GOMAXPROCS(0))
	run := func(b *testing.B, get func(k string) error) {
		b.SetParallelism(parallel)
		b.ReportAllocs()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if err := get(names[i%keys]); err != nil {
					b.Error(err)
					return
				}
				i += 7
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
	}
	b.Run("local hit", func(b *testing.B) {
		run(b, func(k string) error {
			_, ok, err := m.Get(ctx, k)
			if err == nil && !ok {
				b.Fatal("a cached key is missing")
			}
			return err
		})
	})
	plain := GetMap[string, string](c, "lcm")
	b.Run("Map.Get", func(b *testing.B) {
		run(b, func(k string) error { _, _, err := plain.Get(ctx, k); return err })
	})
}

// BenchmarkLocalCachedMapInvalidation measures, for each write on one
// client, the time from the write's return until a reader on another client
// (which had the old value cached, and polls Get) first reads the new
// value: the invalidation's trip through Redis, plus the reader's HGET.
func BenchmarkLocalCachedMapInvalidation(b *testing.B) {
	_, rdb, _, admin := benchRedis(b)
	ctx := benchCtx(b)
	cw, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cw.Close() })
	cr, err := New(admin, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cr.Close() })
	w := GetLocalCachedMap[string, int](cw, "lci", LocalCacheOptions{})
	r := GetLocalCachedMap[string, int](cr, "lci", LocalCacheOptions{})
	b.Cleanup(func() { w.Close(); r.Close() })
	if _, err := w.FastPut(ctx, "k", 0); err != nil {
		b.Fatal(err)
	}
	waitLive(b, r)
	deadline := time.Now().Add(10 * time.Second)
	for r.CachedSize() != 1 {
		if time.Now().After(deadline) {
			b.Fatal("the reader does not cache")
		}
		if _, _, err := r.Get(ctx, "k"); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	i := 0
	for b.Loop() {
		i++
		if _, err := w.FastPut(ctx, "k", i); err != nil {
			b.Fatal(err)
		}
		written := time.Now()
		for {
			v, _, err := r.Get(ctx, "k")
			if err != nil {
				b.Fatal(err)
			}
			if v == i {
				break
			}
			if time.Since(written) > 5*time.Second {
				b.Fatalf("write %d still invisible after 5s", i)
			}
			runtime.Gosched()
		}
		lat = append(lat, time.Since(written))
		// Let the reader cache the new value, as a hot key would be.
		for r.CachedSize() != 1 {
			if _, _, err := r.Get(ctx, "k"); err != nil {
				b.Fatal(err)
			}
		}
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) }
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
}
