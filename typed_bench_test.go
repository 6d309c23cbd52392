package redisson

// Benchmarks of the hot calls of the typed objects (Bucket, AtomicLong,
// Map) and of the codecs. Each benchmark starts its own redis-server and
// counts round trips with benchRTHook (bench_test.go); run with -benchmem
// for allocs/op:
//
//	go test -run '^$' -bench 'Bucket|AtomicLong|Map|Codec' -benchmem .

import (
	"context"
	"strconv"
	"testing"
)

// benchTyped runs the call that prepare returns b.N times on a fresh server
// and reports round trips per op. prepare creates the object once (as a
// service would) and writes any keys the call needs.
func benchTyped(b *testing.B, prepare func(ctx context.Context, c *Client) func() error) {
	_, rdb, h, _ := benchRedis(b)
	ctx := benchCtx(b)
	c, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	call := prepare(ctx, c)
	if err := call(); err != nil { // dial and load scripts outside the loop
		b.Fatal(err)
	}
	b.ReportAllocs()
	rt0 := h.roundTrips()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

func BenchmarkBucketGet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		bk := GetBucket[point](c, "b")
		if err := bk.Set(ctx, point{X: 1, Y: 2, Label: "p"}); err != nil {
			b.Fatal(err)
		}
		return func() error { _, _, err := bk.Get(ctx); return err }
	})
}

func BenchmarkBucketSet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		bk := GetBucket[point](c, "b")
		return func() error { return bk.Set(ctx, point{X: 1, Y: 2, Label: "p"}) }
	})
}

func BenchmarkBucketCompareAndSet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		bk := GetBucket[int64](c, "b")
		var n int64
		if err := bk.Set(ctx, 0); err != nil {
			b.Fatal(err)
		}
		return func() error {
			ok, err := bk.CompareAndSet(ctx, n, n+1)
			if !ok && err == nil {
				b.Fatal("CompareAndSet missed")
			}
			n++
			return err
		}
	})
}

func BenchmarkAtomicLongIncrementAndGet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		a := c.GetAtomicLong("a")
		return func() error { _, err := a.IncrementAndGet(ctx); return err }
	})
}

func BenchmarkAtomicLongCompareAndSet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		a := c.GetAtomicLong("a")
		var n int64
		return func() error {
			ok, err := a.CompareAndSet(ctx, n, n+1)
			if !ok && err == nil {
				b.Fatal("CompareAndSet missed")
			}
			n++
			return err
		}
	})
}

func BenchmarkMapGet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		m := GetMap[string, int64](c, "m")
		if _, err := m.FastPut(ctx, "k", 42); err != nil {
			b.Fatal(err)
		}
		return func() error { _, _, err := m.Get(ctx, "k"); return err }
	})
}

func BenchmarkMapPut(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		m := GetMap[string, int64](c, "m")
		var n int64
		return func() error { n++; _, _, err := m.Put(ctx, "k", n); return err }
	})
}

func BenchmarkMapFastPut(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		m := GetMap[string, int64](c, "m")
		var n int64
		return func() error { n++; _, err := m.FastPut(ctx, "k", n); return err }
	})
}

func BenchmarkMapAddAndGet(b *testing.B) {
	for _, codec := range []Codec{MsgpackCodec{}, StringCodec{}} {
		b.Run(codec.Name(), func(b *testing.B) {
			benchTyped(b, func(ctx context.Context, c *Client) func() error {
				m := GetMap[string, int64](c, "m", WithCodec(codec))
				return func() error { _, err := m.AddAndGet(ctx, "k", 1); return err }
			})
		})
	}
}

// BenchmarkMapIterator reads a 10000-entry map, 100 entries per HSCAN; one
// op is one entry.
func BenchmarkMapIterator(b *testing.B) {
	const size = 10000
	_, rdb, h, _ := benchRedis(b)
	ctx := benchCtx(b)
	c, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	m := GetMap[string, int64](c, "m")
	pipe := rdb.Pipeline()
	for i := range int64(size) {
		k, _ := MsgpackCodec{}.Marshal("key" + strconv.FormatInt(i, 10))
		v, _ := MsgpackCodec{}.Marshal(i)
		pipe.HSet(ctx, "m", k, v)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	it := m.Iterator(100)
	b.ReportAllocs()
	b.ResetTimer()
	rt0 := h.roundTrips()
	n := 0
	for n < b.N {
		for range it.All(ctx) {
			if n++; n == b.N {
				break
			}
		}
		if err := it.Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

func BenchmarkCodec(b *testing.B) {
	v := point{X: 1, Y: 2, Label: "p"}
	for _, codec := range []Codec{MsgpackCodec{}, JSONCodec{}} {
		data, err := codec.Marshal(v)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(codec.Name()+"/marshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := codec.Marshal(v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(codec.Name()+"/unmarshal", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var p point
				if err := codec.Unmarshal(data, &p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
