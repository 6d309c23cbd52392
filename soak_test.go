//go:build soak

package redisson

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/history"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The soak tests are the long versions of the history and fault tests, run
// by `make soak` (build tag soak). REDISSON_SOAK_DURATION sets each run's
// length (default 2m).

func soakDuration(t *testing.T) time.Duration {
	d := 2 * time.Minute
	if s := os.Getenv("REDISSON_SOAK_DURATION"); s != "" {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			t.Fatalf("REDISSON_SOAK_DURATION: %v", err)
		}
	}
	return d
}

// Minutes of contended lock cycles from three worker processes and three
// Clients (sixteen goroutines each) on three locks: linearizable as a
// mutex, no two holds at once, tokens increasing, no caller error.
func TestSoakLockHistory(t *testing.T) {
	d := soakDuration(t)
	ops, w := runLockHistory(t, redistest.Shared(t).Addr(), 3, 3, 16, d, time.Millisecond)
	start := time.Now()
	bad := checkLockHistory(t, ops, true)
	if errs := w.errSummary(); errs != "none" {
		t.Errorf("callers saw errors: %s", errs)
	}
	fmt.Printf("soak lock history: %d ops (%d acquired) in %v = %.0f ops/s; violations %d; checked in %v; errors %s\n",
		len(ops), countOps(ops), d, float64(len(ops))/d.Seconds(), bad, time.Since(start).Round(time.Millisecond), w.errSummary())
}

// Minutes of one-permit acquire/release cycles from four Clients (sixteen
// goroutines each) on two semaphores of 5 permits: never more than 5
// holders at once, every permit returned.
func TestSoakSemaphoreHistory(t *testing.T) {
	d := soakDuration(t)
	rdb := sharedRedis(t)
	ctx := context.Background()
	const permits = 5
	w := &workload{rec: &history.Recorder{}, wait: 2 * time.Second, hold: time.Millisecond}
	for i := range 2 {
		key := uniqueName(t, rdb) + fmt.Sprint(":", i)
		t.Cleanup(func() { rdb.Del(context.Background(), key) })
		w.keys = append(w.keys, key)
		if ok, err := newClient(t, rdb, nil).GetSemaphore(key).TrySetPermits(ctx, permits); err != nil || !ok {
			t.Fatalf("TrySetPermits = %v, %v", ok, err)
		}
	}
	run, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 4 {
		c := newClient(t, rdb, nil)
		for j := range 16 {
			wg.Go(func() { w.semLoop(run, c, fmt.Sprintf("c%d.g%d", i, j)) })
		}
	}
	wg.Wait()
	ops := w.rec.Ops()
	holds, err := history.Holds(ops)
	if err != nil {
		t.Fatal(err)
	}
	bad := history.Overlaps(holds, permits)
	for i, b := range bad {
		if i < 10 {
			t.Errorf("violation: %s", b)
		}
	}
	for _, key := range w.keys {
		if n, err := newClient(t, rdb, nil).GetSemaphore(key).AvailablePermits(ctx); err != nil || n != permits {
			t.Errorf("%s: %d permits available after the run (%v); want %d", key, n, err, permits)
		}
	}
	fmt.Printf("soak semaphore history: %d ops (%d holds) in %v = %.0f ops/s; violations %d; errors %s\n",
		len(ops), len(holds), d, float64(len(ops))/d.Seconds(), len(bad), w.errSummary())
}

// Minutes of contended lock cycles through a proxy that resets every
// connection, and partitions one of the two Clients for 2.5s (lease 1s),
// in turn every few seconds: no two holds at once, tokens increasing,
// progress after every fault.
func TestSoakLockFaults(t *testing.T) {
	d := soakDuration(t)
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	opts := &Options{WatchdogTimeout: time.Second, PubSubHealthCheck: 300 * time.Millisecond}
	clients := append(proxiedClients(t, proxy, 1, opts, nil), newClient(t, srv.Client(t), opts))
	var faults int
	r := runFaulted(t, srv.Client(t), clients, 8, d, func(context.Context, *workload) {
		end := time.Now().Add(d / 2)
		for time.Now().Before(end) {
			proxy.Reset()
			time.Sleep(time.Second)
			proxy.Partition(true)
			time.Sleep(2500 * time.Millisecond)
			proxy.Partition(false)
			proxy.CloseAll()
			time.Sleep(time.Second)
			faults += 2
		}
	})
	r.check(t, fmt.Sprintf("%d resets and partitions over %v", faults, d/2), "single, 1 client via proxy + 1 direct, 8 goroutines each")
	fmt.Printf("soak lock faults: %d ops (%d acquired) in %v = %.0f ops/s; %d faults; leases lost %d; errors %s\n",
		len(r.ops), countOps(r.ops), d, float64(len(r.ops))/d.Seconds(), faults, r.lost, r.w.errSummary())
}

// TestSoakRateLimiter runs the rate limiter's guarantee check (at most rate
// permits in any trailing interval, over the whole grant log of 3 Clients x
// 6 goroutines) for the soak duration.
func TestSoakRateLimiter(t *testing.T) {
	testRateGuarantee(t, func() redis.UniversalClient { return sharedRedis(t) }, soakDuration(t))
}
