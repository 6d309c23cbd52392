package redisson

// Benchmarks of List, Set and SortedSet: one round trip per simple call,
// counted by benchRTHook (bench_test.go). Each starts its own redis-server:
//
//	go test -run '^$' -bench 'List|Set[A-Z]|SortedSet' -benchmem .

import (
	"context"
	"strconv"
	"testing"
)

// fillCollection writes size elements with add, 1000 per call.
func fillCollection(b *testing.B, size int, add func(vs []int64) error) {
	b.Helper()
	var chunk []int64
	for i := range int64(size) {
		if chunk = append(chunk, i); len(chunk) == 1000 || int(i) == size-1 {
			if err := add(chunk); err != nil {
				b.Fatal(err)
			}
			chunk = chunk[:0]
		}
	}
}

func BenchmarkListAdd(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		l := GetList[string](c, "l")
		return func() error { _, err := l.Add(ctx, "element"); return err }
	})
}

func BenchmarkListGet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		l := GetList[int64](c, "l")
		fillCollection(b, 100, func(vs []int64) error { _, err := l.AddAll(ctx, vs...); return err })
		return func() error { _, err := l.Get(ctx, 50); return err }
	})
}

func BenchmarkListSet(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		l := GetList[int64](c, "l")
		fillCollection(b, 100, func(vs []int64) error { _, err := l.AddAll(ctx, vs...); return err })
		return func() error { _, err := l.Set(ctx, 50, 7); return err }
	})
}

// BenchmarkListInsertRemoveAt inserts and removes at index 10 of a
// 1000-element list: one op is both calls (two round trips).
func BenchmarkListInsertRemoveAt(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		l := GetList[int64](c, "l")
		fillCollection(b, 1000, func(vs []int64) error { _, err := l.AddAll(ctx, vs...); return err })
		return func() error {
			if err := l.Insert(ctx, 10, -1); err != nil {
				return err
			}
			_, err := l.RemoveAt(ctx, 10)
			return err
		}
	})
}

func BenchmarkSetAdd(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		s := GetSet[string](c, "s")
		var n int
		return func() error { n++; _, err := s.Add(ctx, "m"+strconv.Itoa(n%1000)); return err }
	})
}

func BenchmarkSetContains(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		s := GetSet[int64](c, "s")
		fillCollection(b, 1000, func(vs []int64) error { _, err := s.AddAll(ctx, vs...); return err })
		return func() error { _, err := s.Contains(ctx, 500); return err }
	})
}

// BenchmarkSetUnionStore stores the union of two 100-member sets that
// share 50 (0..99 and 50..149).
func BenchmarkSetUnionStore(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		x, y, dest := GetSet[int64](c, "{s}:x"), GetSet[int64](c, "{s}:y"), GetSet[int64](c, "{s}:dest")
		fillCollection(b, 100, func(vs []int64) error { _, err := x.AddAll(ctx, vs...); return err })
		fillCollection(b, 150, func(vs []int64) error { _, err := y.AddAll(ctx, vs[min(len(vs), 50):]...); return err })
		return func() error { _, err := x.UnionStore(ctx, dest, y); return err }
	})
}

func BenchmarkSortedSetAdd(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		z := GetSortedSet[string](c, "z")
		var n int
		return func() error { n++; _, err := z.Add(ctx, float64(n), "m"+strconv.Itoa(n%1000)); return err }
	})
}

func BenchmarkSortedSetAddScore(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		z := GetSortedSet[string](c, "z")
		return func() error { _, err := z.AddScore(ctx, "m", 1.5); return err }
	})
}

// BenchmarkSortedSetRangeByScore reads 10 members of a 1000-member set.
func BenchmarkSortedSetRangeByScore(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		z := GetSortedSet[int64](c, "z")
		fillCollection(b, 1000, func(vs []int64) error {
			es := make([]ScoredEntry[int64], len(vs))
			for i, v := range vs {
				es[i] = ScoredEntry[int64]{v, float64(v)}
			}
			_, err := z.AddAll(ctx, es...)
			return err
		})
		r := ScoreRange{Min: 100, Max: 200, MaxExclusive: true}
		return func() error { _, err := z.RangeByScore(ctx, r, RangeOptions{Offset: 5, Count: 10}); return err }
	})
}

// BenchmarkSortedSetPollFirstAdd polls the lowest member and adds it back:
// one op is both calls (two round trips).
func BenchmarkSortedSetPollFirstAdd(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		z := GetSortedSet[int64](c, "z")
		for i := range int64(100) {
			if _, err := z.Add(ctx, float64(i), i); err != nil {
				b.Fatal(err)
			}
		}
		return func() error {
			es, err := z.PollFirst(ctx, 1)
			if err != nil || len(es) != 1 {
				b.Fatalf("PollFirst = %v, %v", es, err)
			}
			_, err = z.Add(ctx, es[0].Score+1, es[0].Value)
			return err
		}
	})
}

// benchCollectionIterator ranges over a 10000-element collection, 100
// per page; one op is one element.
func benchCollectionIterator(b *testing.B, fill func(ctx context.Context, c *Client) func(yield func() bool) error) {
	_, rdb, h, _ := benchRedis(b)
	ctx := benchCtx(b)
	c, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	each := fill(ctx, c)
	b.ReportAllocs()
	b.ResetTimer()
	rt0 := h.roundTrips()
	n := 0
	for n < b.N {
		if err := each(func() bool { n++; return n < b.N }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(h.roundTrips()-rt0)/float64(b.N), "roundtrips/op")
}

func BenchmarkListIterator(b *testing.B) {
	benchCollectionIterator(b, func(ctx context.Context, c *Client) func(func() bool) error {
		l := GetList[int64](c, "l")
		fillCollection(b, 10000, func(vs []int64) error { _, err := l.AddAll(ctx, vs...); return err })
		it := l.Iterator(100)
		return func(yield func() bool) error {
			for range it.All(ctx) {
				if !yield() {
					break
				}
			}
			return it.Err()
		}
	})
}

func BenchmarkSetIterator(b *testing.B) {
	benchCollectionIterator(b, func(ctx context.Context, c *Client) func(func() bool) error {
		s := GetSet[int64](c, "s")
		fillCollection(b, 10000, func(vs []int64) error { _, err := s.AddAll(ctx, vs...); return err })
		it := s.Iterator(100)
		return func(yield func() bool) error {
			for range it.All(ctx) {
				if !yield() {
					break
				}
			}
			return it.Err()
		}
	})
}

func BenchmarkSortedSetIterator(b *testing.B) {
	benchCollectionIterator(b, func(ctx context.Context, c *Client) func(func() bool) error {
		z := GetSortedSet[int64](c, "z")
		fillCollection(b, 10000, func(vs []int64) error {
			es := make([]ScoredEntry[int64], len(vs))
			for i, v := range vs {
				es[i] = ScoredEntry[int64]{v, float64(v)}
			}
			_, err := z.AddAll(ctx, es...)
			return err
		})
		it := z.Iterator(100)
		return func(yield func() bool) error {
			for range it.All(ctx) {
				if !yield() {
					break
				}
			}
			return it.Err()
		}
	})
}
