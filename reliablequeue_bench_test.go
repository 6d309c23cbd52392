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

// rqRenewHook counts the round trips that carry rq_renew calls (alone or
// pipelined) and the rq_renew calls in them.
type rqRenewHook struct{ trips, calls atomic.Int64 }

func (h *rqRenewHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *rqRenewHook) count(cmds ...redis.Cmder) {
	n := int64(0)
	for _, c := range cmds {
		if args := c.Args(); len(args) > 1 && c.Name() == "evalsha" && args[1] == scriptRQRenew.SHA() {
			n++
		}
	}
	if n > 0 {
		h.trips.Add(1)
		h.calls.Add(n)
	}
}

func (h *rqRenewHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { h.count(cmd); return next(ctx, cmd) }
}

func (h *rqRenewHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { h.count(cmds...); return next(ctx, cmds) }
}

// Lease renewal of 10,000 jobs in flight: one worker of Concurrency 10,000
// holds 10,000 jobs in handlers that wait, while the watchdog (timeout 3s,
// a pass every 1s) renews their leases for b.N periods. Reports the round
// trips carrying renewals per period (the claim: one), the rq_renew calls
// per period (100 jobs each), every round trip the client made per period,
// and the last pass's duration; then releases the handlers, which must all
// succeed with their lease kept.
func BenchmarkReliableQueueRenewal10000(b *testing.B) {
	const jobs, timeout = 10_000, 3 * time.Second
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	all, renew := newBenchHook(rdb), &rqRenewHook{}
	rdb.AddHook(renew)
	c := newClient(b, rdb, &Options{WatchdogTimeout: timeout})
	q := GetReliableQueue[int](c, "bench")
	var wg sync.WaitGroup
	for p := range 16 {
		wg.Go(func() {
			for i := p; i < jobs; i += 16 {
				if _, _, err := q.Enqueue(context.Background(), i); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	var started, lost, ok atomic.Int64
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Process(ctx, func(hctx context.Context, _ *Job[int]) error {
			started.Add(1)
			select {
			case <-release:
				ok.Add(1)
				return nil
			case <-hctx.Done():
				lost.Add(1)
				return hctx.Err()
			}
		}, WorkerOptions{Concurrency: jobs})
	}()
	for deadline := time.Now().Add(2 * time.Minute); started.Load() < jobs; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d jobs in flight after 2 minutes", started.Load(), jobs)
		}
	}
	period := timeout / 3
	time.Sleep(period) // a first whole pass with every job
	t0, c0, a0 := renew.trips.Load(), renew.calls.Load(), all.roundTrips()
	b.ResetTimer()
	time.Sleep(time.Duration(b.N) * period)
	b.StopTimer()
	t1, c1, a1 := renew.trips.Load(), renew.calls.Load(), all.roundTrips()
	_, pass, _ := c.watchdog.stats()
	close(release)
	for deadline := time.Now().Add(time.Minute); ok.Load()+lost.Load() < jobs; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d handlers returned a minute after their release", ok.Load()+lost.Load(), jobs)
		}
	}
	cancel()
	<-done
	if lost.Load() > 0 {
		b.Fatalf("%d of %d jobs lost their lease while renewed", lost.Load(), jobs)
	}
	n := float64(b.N)
	b.ReportMetric(float64(t1-t0)/n, "renew-roundtrips/period")
	b.ReportMetric(float64(c1-c0)/n, "renew-calls/period")
	b.ReportMetric(float64(a1-a0)/n, "all-roundtrips/period")
	b.ReportMetric(float64(pass.Microseconds())/1000, "pass-ms")
}
