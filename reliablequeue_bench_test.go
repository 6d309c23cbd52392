package redisson

import (
	"context"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rqCommandCalls returns the total of calls in INFO commandstats (inside
// scripts included) and the EVALSHA calls (script calls, each one round
// trip or part of one).
func rqCommandCalls(b *testing.B, rdb *redis.Client) (total, evalsha int64) {
	for name, n := range benchCommandStats(b, context.Background(), rdb) {
		if name != "info" {
			total += n
		}
		if name == "evalsha" {
			evalsha = n
		}
	}
	return total, evalsha
}

// Enqueue and process no-op jobs: 4 producer goroutines enqueue b.N jobs
// while one worker (Concurrency 16) handles them. Reports jobs/s and the
// Redis commands per job (INFO commandstats, inside scripts included).
func BenchmarkReliableQueueEnqueueProcess(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	c := newClient(b, rdb, nil)
	q := GetReliableQueue[int](c, "bench")
	var handled atomic.Int64
	all := make(chan struct{})
	n := int64(b.N)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	before, evBefore := rqCommandCalls(b, rdb)
	b.ResetTimer()
	start := time.Now()
	go func() {
		done <- q.Process(ctx, func(context.Context, *Job[int]) error {
			if handled.Add(1) == n {
				close(all)
			}
			return nil
		}, WorkerOptions{Concurrency: 16, Prefetch: 16})
	}()
	var wg sync.WaitGroup
	for p := range 4 {
		wg.Go(func() {
			for i := p; i < b.N; i += 4 {
				if _, _, err := q.Enqueue(context.Background(), i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	<-all
	elapsed := time.Since(start)
	b.StopTimer()
	cancel()
	<-done
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "jobs/s")
	after, evAfter := rqCommandCalls(b, rdb)
	b.ReportMetric(float64(after-before)/float64(b.N), "cmds/job")
	b.ReportMetric(float64(evAfter-evBefore)/float64(b.N), "scripts/job")
}

// Pickup latency on an idle queue: from the call to Enqueue to the
// handler's start, one job at a time. Reports the median and p99.
func BenchmarkReliableQueuePickupLatency(b *testing.B) {
	srv := redistest.Start(b)
	c := newClient(b, srv.Client(b), nil)
	q := GetReliableQueue[int64](c, "bench")
	started := make(chan time.Duration, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Process(ctx, func(_ context.Context, j *Job[int64]) error {
			started <- time.Since(time.Unix(0, j.Value))
			return nil
		}, WorkerOptions{Concurrency: 1})
	}()
	lat := make([]time.Duration, 0, b.N)
	time.Sleep(100 * time.Millisecond) // the worker is blocked in XREADGROUP
	b.ResetTimer()
	for range b.N {
		if _, _, err := q.Enqueue(context.Background(), time.Now().UnixNano()); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, <-started)
	}
	b.StopTimer()
	cancel()
	<-done
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
}

// Redelivery after a worker's loss: a worker holding a job is cut off from
// Redis (a proxy partition, as a dead process looks to Redis); the time
// until another worker receives the job, with a 1s lease.
func BenchmarkReliableQueueRedelivery(b *testing.B) {
	srv := redistest.Start(b)
	direct := srv.Client(b)
	const lease = time.Second
	live := GetReliableQueue[int](newClient(b, direct, &Options{WatchdogTimeout: lease}), "bench")
	received := make(chan time.Time, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go live.Process(ctx, func(context.Context, *Job[int]) error { received <- time.Now(); return nil }, WorkerOptions{Concurrency: 1})
	var total, worst time.Duration
	for i := range b.N {
		proxy := redistest.NewProxy(b, srv.Addr())
		viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr()})
		dying := newClient(b, viaProxy, &Options{WatchdogTimeout: lease})
		dq := GetReliableQueue[int](dying, "bench:"+strconv.Itoa(i))
		lq := GetReliableQueue[int](newClient(b, direct, &Options{WatchdogTimeout: lease}), dq.name)
		running := make(chan struct{})
		dctx, dcancel := context.WithCancel(context.Background())
		go dq.Process(dctx, func(hctx context.Context, _ *Job[int]) error { close(running); <-hctx.Done(); return nil }, WorkerOptions{Concurrency: 1})
		lq.Enqueue(context.Background(), i)
		<-running
		time.Sleep(lease / 2)
		proxy.Partition(true)
		cut := time.Now()
		got := make(chan time.Time, 1)
		lctx, lcancel := context.WithCancel(context.Background())
		go lq.Process(lctx, func(context.Context, *Job[int]) error { got <- time.Now(); return nil }, WorkerOptions{Concurrency: 1})
		d := (<-got).Sub(cut)
		total += d
		worst = max(worst, d)
		lcancel()
		dcancel()
		proxy.Partition(false)
		proxy.Close()
		dying.Close()
		viaProxy.Close()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/redelivery")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}
