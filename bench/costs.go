package main

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// runCosts measures how memory grows with the work: for each kind of item,
// n of them made on an emptied server by one client, the growth of Redis's
// used_memory and of this process's live heap and stacks (after a GC), per
// item, at several n; and the peak heap while a long list is iterated.
// Memory does not vary between rounds, so each size is measured once.
func runCosts(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	sizes, waiters, listLen := []int{1000, 10000, 100000}, []int{1000, 10000}, 10_000_000
	if s.short {
		sizes, waiters, listLen = []int{1000}, []int{1000}, 100_000
	}
	t := &table{
		title: "How memory grows with the work, one client",
		note: "Each row makes n items on an emptied server (connections opened and scripts loaded beforehand) and keeps them: " +
			"Redis is used_memory growth ÷ n; client is the growth of this process's heap in use plus goroutine stacks after a GC, ÷ n. " +
			"A column constant down the sizes of one item is linear growth. Held locks are taken with lease 0 (the watchdog renews them); " +
			"waiters are goroutines blocked in Lock on 100 names another client holds; identities are GCRA keys after one decision; " +
			"jobs are ReliableQueue jobs of a 16-byte string; near-cache entries are LocalCachedMap entries read into the local cache.",
		cols: []col{
			{key: "redis", head: "Redis B/item", format: "%.0f"},
			{key: "client", head: "client B/item", format: "%.0f"},
			{key: "secs", head: "time to make them s", format: "%.2f"},
		},
	}
	items := []struct {
		name string
		ns   []int
		make costMaker
	}{
		{"held lock (watchdog)", sizes, makeHeldLocks},
		{"waiting goroutine", waiters, makeWaiters},
		{"GCRA identity", sizes, makeIdentities},
		{"ReliableQueue job", sizes, makeJobs},
		{"LocalCachedMap near-cache entry", sizes, makeNearEntries},
	}
	for _, it := range items {
		for _, n := range it.ns {
			r := t.row("redisson "+it.name, fmt.Sprintf("n = %d", n), kindOurs)
			r.add(measureCost(ctx, srvs[0], admins[0], n, it.make))
		}
	}
	s.emit(t)
	lt := &table{
		title: "Iterating a long List in constant client memory",
		note: "A List of n 8-byte strings, filled 1,000 per AddAll, then ranged over with Iterator(1000): the peak growth of the heap " +
			"in use over its value before the walk, sampled every 100,000 elements (and at the end), with the round trips the walk took.",
		cols: []col{
			{key: "peak", head: "peak heap growth while iterating KiB", format: "%.0f"},
			{key: "rt", head: "round trips", format: "%.0f"},
			{key: "secs", head: "walk s", format: "%.1f"},
		},
	}
	for _, n := range []int{listLen / 10, listLen} {
		r := lt.row("redisson List iterator", fmt.Sprintf("n = %d", n), kindOurs)
		r.add(iterateList(ctx, srvs, admins[0], n))
	}
	s.emit(lt)
	return nil
}

// costMaker makes n items with c (and, for waiters, a second client on
// rdb), returning what keeps them alive and a function that ends them.
type costMaker func(ctx context.Context, c *redisson.Client, rdb *redis.Client, n int) (keep any, end func(), err error)

// liveBytes is this process's heap in use plus goroutine stacks after a GC.
func liveBytes() float64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc + m.StackInuse)
}

func usedMemory(ctx context.Context, admin *redis.Client) (float64, error) {
	m, err := info(ctx, admin, "memory")
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(m["used_memory"], 64)
}

func measureCost(ctx context.Context, srv *server, admin *redis.Client, n int, mk costMaker) (map[string]float64, error) {
	rdb := srv.client()
	defer rdb.Close()
	c, err := redisson.New(rdb, nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	defer admin.FlushAll(context.WithoutCancel(ctx))
	// Warm-up: the same maker on 100 items opens the connections and loads
	// the scripts, whose memory is not the items'.
	if _, end, err := mk(ctx, c, rdb, 100); err != nil {
		return nil, err
	} else {
		end()
	}
	if err := admin.FlushAll(ctx).Err(); err != nil {
		return nil, err
	}
	time.Sleep(100 * time.Millisecond)
	r0, err := usedMemory(ctx, admin)
	if err != nil {
		return nil, err
	}
	c0 := liveBytes()
	start := time.Now()
	keep, end, err := mk(ctx, c, rdb, n)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	c1 := liveBytes()
	r1, err := usedMemory(ctx, admin)
	runtime.KeepAlive(keep)
	end()
	if err != nil {
		return nil, err
	}
	return map[string]float64{"redis": (r1 - r0) / float64(n), "client": (c1 - c0) / float64(n), "secs": secs}, nil
}

// parallel runs f(i) for i in [0, n) on 32 goroutines, stopping at the
// first error.
func parallel(n int, f func(i int) error) error {
	const g = 32
	var wg sync.WaitGroup
	errs := make([]error, g)
	for w := range g {
		wg.Go(func() {
			for i := w; i < n; i += g {
				if errs[w] = f(i); errs[w] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func makeHeldLocks(ctx context.Context, c *redisson.Client, _ *redis.Client, n int) (any, func(), error) {
	locks := make([]*redisson.Lock, n)
	err := parallel(n, func(i int) error {
		l := c.GetLock("cost:lock:" + strconv.Itoa(i))
		ok, err := l.TryLock(ctx, 0, 0)
		if err == nil && !ok {
			err = errors.New("a free lock was not acquired")
		}
		locks[i] = l
		return err
	})
	end := func() {
		_ = parallel(n, func(i int) error {
			if locks[i] != nil {
				_ = locks[i].Unlock(context.WithoutCancel(ctx))
			}
			return nil
		})
	}
	return locks, end, err
}

func makeWaiters(ctx context.Context, c *redisson.Client, rdb *redis.Client, n int) (any, func(), error) {
	const names = 100
	holder, err := redisson.New(rdb, nil)
	if err != nil {
		return nil, nil, err
	}
	held := make([]*redisson.Lock, names)
	for i := range held {
		held[i] = holder.GetLock("cost:wait:" + strconv.Itoa(i))
		if ok, err := held[i].TryLock(ctx, 0, time.Hour); err != nil || !ok {
			holder.Close()
			return nil, nil, fmt.Errorf("holder: %v %w", ok, err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	before := runtime.NumGoroutine()
	for i := range n {
		wg.Go(func() {
			_ = c.GetLock("cost:wait:" + strconv.Itoa(i%names)).Lock(wctx)
		})
	}
	// The waiters are in place when their goroutines exist and the
	// subscriptions have settled: wait for the goroutine count, then a
	// while for each waiter's first try.
	for runtime.NumGoroutine() < before+n {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second + time.Duration(n/10)*time.Millisecond)
	end := func() {
		cancel()
		wg.Wait()
		for _, l := range held {
			_ = l.Unlock(context.WithoutCancel(ctx))
		}
		holder.Close()
	}
	return nil, end, nil
}

func makeIdentities(ctx context.Context, c *redisson.Client, _ *redis.Client, n int) (any, func(), error) {
	l := c.GetGCRALimiter("cost:gcra", 10, time.Hour, 10)
	err := parallel(n, func(i int) error {
		_, err := l.Allow(ctx, "id:"+strconv.Itoa(i), 1)
		return err
	})
	return l, func() {}, err
}

func makeJobs(ctx context.Context, c *redisson.Client, _ *redis.Client, n int) (any, func(), error) {
	q := redisson.GetReliableQueue[string](c, "cost:jobs")
	err := parallel(n, func(i int) error {
		_, _, err := q.Enqueue(ctx, fmt.Sprintf("job-%012d", i))
		return err
	})
	return q, func() {}, err
}

func makeNearEntries(ctx context.Context, c *redisson.Client, _ *redis.Client, n int) (any, func(), error) {
	m := redisson.GetLocalCachedMap[string, string](c, "cost:near", redisson.LocalCacheOptions{})
	// Written first, then read: a key written while another write of its
	// stripe is under way is not cached by its writer (localcache_store.go).
	err := parallel(n, func(i int) error {
		_, err := m.FastPut(ctx, "k:"+strconv.Itoa(i), fmt.Sprintf("value-%010d", i))
		return err
	})
	if err == nil {
		err = parallel(n, func(i int) error {
			_, _, err := m.Get(ctx, "k:"+strconv.Itoa(i))
			return err
		})
	}
	if err == nil && m.CachedSize() != n {
		err = fmt.Errorf("%d entries cached locally; want %d", m.CachedSize(), n)
	}
	return m, func() { _ = m.Close() }, err
}

// iterateList fills a List of n elements and ranges over it, sampling the
// heap in use.
func iterateList(ctx context.Context, srvs []*server, admin *redis.Client, n int) (map[string]float64, error) {
	rdbs, hooks := hooked(srvs, 1)
	defer rdbs[0].Close()
	c, err := redisson.New(rdbs[0], nil)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	defer admin.FlushAll(context.WithoutCancel(ctx))
	l := redisson.GetList[string](c, "cost:list")
	batch := make([]string, 1000)
	for i := 0; i < n; i += len(batch) {
		for j := range batch {
			batch[j] = fmt.Sprintf("%08d", (i+j)%100000000)
		}
		if _, err := l.AddAll(ctx, batch...); err != nil {
			return nil, err
		}
	}
	batch = nil
	base := liveBytes()
	peak := 0.0
	sample := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		peak = max(peak, float64(m.HeapAlloc)-base)
	}
	rt0 := hooks[0].n.Load()
	start := time.Now()
	it := l.Iterator(1000)
	seen := 0
	for range it.All(ctx) {
		seen++
		if seen%100000 == 0 {
			sample()
		}
	}
	sample()
	if err := it.Err(); err != nil {
		return nil, err
	}
	if seen != n {
		return nil, fmt.Errorf("iterated %d elements; want %d", seen, n)
	}
	return map[string]float64{"peak": peak / 1024, "rt": float64(hooks[0].n.Load() - rt0), "secs": time.Since(start).Seconds()}, nil
}
