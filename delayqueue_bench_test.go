package redisson

// Lateness of the delayed queue: 10,000 values are scheduled (offered in
// batches of 10 due at once, 2 ms apart) to come due over 2 s, on a queue
// that 1 or 3 clients run, and a consumer pops the destination (BLPOP, then
// LPOP of up to 1000). A value's lateness is the time it was popped less
// the time its offer was sent plus its delay: what a user offering at t
// with delay d sees, the consumer's pop included. Each run of the loop is
// one whole schedule (about 3.5 s); the percentiles are over all values of
// all runs. stall-p99-ms and stall-max-ms are how late a 1 ms sleep of
// the benchmark's own process woke meanwhile: the machine's stalls, which
// delay every timer of the process alike. Each benchmark starts its own
// redis-server.
//
//	go test -run '^$' -bench 'DelayedQueueLateness' -benchtime 3x .

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func BenchmarkDelayedQueueLateness(b *testing.B) {
	for _, movers := range []int{1, 3} {
		b.Run(fmt.Sprintf("movers=%d", movers), func(b *testing.B) {
			_, rdb, _, admin := benchRedis(b)
			ctx := benchCtx(b)
			var qs []*DelayedQueue[int64]
			var cs []*Client
			for range movers {
				c := newClient(b, rdb, nil)
				cs = append(cs, c)
				q := GetDelayedQueue[int64](c, "bench")
				if err := q.Start(ctx); err != nil {
					b.Fatal(err)
				}
				qs = append(qs, q)
			}
			const n, batch, spread, lead = 10000, 10, 2 * time.Second, time.Second
			var late []time.Duration
			// A canary measures how late this process's own timers fire (a
			// 1 ms sleep's overshoot): the machine's stalls, which delay
			// every mover alike.
			canaryStop, canaryDone := make(chan struct{}), make(chan []time.Duration)
			go func() {
				var over []time.Duration
				for {
					select {
					case <-canaryStop:
						canaryDone <- over
						return
					default:
					}
					t0 := time.Now()
					time.Sleep(time.Millisecond)
					over = append(over, time.Since(t0)-time.Millisecond)
				}
			}()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				for i := 0; i < n; i += batch {
					sent := time.Now()
					due := start.Add(lead + spread*time.Duration(i)/n)
					delay := due.Sub(sent)
					vs := make([]int64, batch)
					for j := range vs {
						vs[j] = sent.Add(delay).UnixMicro()
					}
					if err := qs[0].OfferAll(ctx, vs, delay); err != nil {
						b.Fatal(err)
					}
				}
				for got := 0; got < n; {
					first, err := admin.BLPop(ctx, 10*time.Second, "bench").Result()
					if err != nil {
						b.Fatalf("BLPOP after %d values: %v", got, err)
					}
					rest, err := admin.LPopCount(ctx, "bench", 1000).Result()
					if err != nil && !errors.Is(err, redis.Nil) {
						b.Fatal(err)
					}
					at := time.Now()
					for _, raw := range append(rest, first[1]) {
						due, err := decodeValue[int64](qs[0].Codec(), "", []byte(raw))
						if err != nil {
							b.Fatal(err)
						}
						late = append(late, at.Sub(time.UnixMicro(due)))
						got++
					}
				}
			}
			b.StopTimer()
			close(canaryStop)
			over := <-canaryDone
			slices.Sort(over)
			slices.Sort(late)
			ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
			b.ReportMetric(ms(late[0]), "min-ms")
			b.ReportMetric(ms(benchPct(late, 0.50)), "p50-ms")
			b.ReportMetric(ms(benchPct(late, 0.99)), "p99-ms")
			b.ReportMetric(ms(late[len(late)-1]), "max-ms")
			b.ReportMetric(ms(benchPct(over, 0.99)), "stall-p99-ms")
			b.ReportMetric(ms(over[len(over)-1]), "stall-max-ms")
			var calls, failed int
			for _, c := range cs {
				st := c.delayq.stats()
				calls, failed = calls+st.calls, failed+st.failed
			}
			b.ReportMetric(float64(calls)/float64(b.N*n), "calls/element")
			b.ReportMetric(float64(failed), "failed-calls")
		})
	}
}
