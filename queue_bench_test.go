package redisson

// Benchmarks of the queues: round trips of Offer and Poll, the latency of
// a waiting Take, and take throughput beside the plain go-redis floor:
//
//	go test -run '^$' -bench 'Queue' -benchtime 2s .

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func BenchmarkQueueOffer(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		q := GetQueue[string](c, "bench:queue")
		return func() error { return q.Offer(ctx, "element") }
	})
}

func BenchmarkQueuePoll(b *testing.B) {
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		q := GetQueue[string](c, "bench:queue")
		return func() error {
			_, _, err := q.Poll(ctx) // on an empty queue: the same one LPOP
			return err
		}
	})
}

// BenchmarkBlockingQueueTakeLatency: a Take waits on an empty queue; a
// producer on another client offers; the time from sending the Offer to
// Take's return is reported as p50 and p99.
func BenchmarkBlockingQueueTakeLatency(b *testing.B) {
	_, rdb, _, admin := benchRedis(b)
	ctx := benchCtx(b)
	taker, err := New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { taker.Close() })
	producer, err := New(admin, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { producer.Close() })
	tq := GetBlockingQueue[int](taker, "bench:latency")
	pq := GetQueue[int](producer, "bench:latency")
	var lat []time.Duration
	for b.Loop() {
		got := make(chan time.Time, 1)
		go func() {
			if _, err := tq.Take(ctx); err != nil {
				b.Error(err)
			}
			got <- time.Now()
		}()
		// Let the take block in Redis (the dispatcher's BLMOVE).
		for i := 0; i < 200 && blockedClients(ctx, admin) == 0; i++ {
			time.Sleep(100 * time.Microsecond)
		}
		start := time.Now()
		if err := pq.Offer(ctx, 1); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, (<-got).Sub(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// BenchmarkBlockingQueueThroughput: 8 producers and 8 consumers on 2
// clients move b.N elements; "floor" is plain go-redis LPUSH and BRPOP
// on the same two go-redis clients.
func BenchmarkBlockingQueueThroughput(b *testing.B) {
	const producers, consumers = 8, 8
	run := func(b *testing.B, offer func(ctx context.Context, i int, v int) error, take func(ctx context.Context, i int) (bool, error)) {
		ctx := benchCtx(b)
		var left atomic.Int64
		left.Store(int64(b.N))
		var taken atomic.Int64
		b.ResetTimer()
		var wg sync.WaitGroup
		for p := range producers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					if err := offer(ctx, p, p); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		cctx, cancel := context.WithCancel(ctx)
		var cw sync.WaitGroup
		for i := range consumers {
			cw.Add(1)
			go func() {
				defer cw.Done()
				for cctx.Err() == nil {
					ok, err := take(cctx, i)
					if err != nil && cctx.Err() == nil {
						b.Error(err)
						return
					}
					if ok && taken.Add(1) == int64(b.N) {
						cancel()
					}
				}
			}()
		}
		wg.Wait()
		cw.Wait()
		cancel()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "elements/s")
	}
	b.Run("redisson", func(b *testing.B) {
		_, rdb, _, admin := benchRedis(b)
		var clients []*Client
		for _, r := range []*redis.Client{rdb, admin} {
			c, err := New(r, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			clients = append(clients, c)
		}
		run(b, func(ctx context.Context, i, v int) error {
			return GetQueue[int](clients[i%2], "bench:tp").Offer(ctx, v)
		}, func(ctx context.Context, i int) (bool, error) {
			_, ok, err := GetBlockingQueue[int](clients[i%2], "bench:tp").Poll(ctx, 100*time.Millisecond)
			return ok, err
		})
	})
	b.Run("floor", func(b *testing.B) {
		_, rdb, _, admin := benchRedis(b)
		rdbs := []*redis.Client{rdb, admin}
		run(b, func(ctx context.Context, i, v int) error {
			return rdbs[i%2].LPush(ctx, "bench:tp", v).Err()
		}, func(ctx context.Context, i int) (bool, error) {
			_, err := rdbs[i%2].BRPop(ctx, time.Second, "bench:tp").Result()
			if err == redis.Nil {
				return false, nil
			}
			return err == nil, err
		})
	})
}
