package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// runPubSub: a holder (client 0) holds m names; w waiters on one other
// client (client 1), w/m per name, wait for them. Measured: the connections
// the waiting costs the server, and the commands it costs per second.
func runPubSub(ctx context.Context, s *suite) error {
	srvs, admins, stop, err := servers(1)
	if err != nil {
		return err
	}
	defer stop()
	w, m := 10000, 1000
	settle, window := 2*time.Second, 2*time.Second
	if s.short {
		w, m = 1000, 100
		settle, window = 500*time.Millisecond, 300*time.Millisecond
	}
	libs := []lockLib{
		oursLock(false),
		redislockLib("README retry: linear 100ms", 100*time.Millisecond),
		redsyncLib("defaults (32 tries, 50-250ms)", 0, false),
	}
	t := &table{
		title: fmt.Sprintf("Pub/sub footprint: %d waiters on %d held names, one client", w, m),
		note: fmt.Sprintf("The waiters wait %v before and %v during the measure; the names are held for longer. "+
			"Connections: the server's connected clients during the wait less before it (the go-redis pool's default "+
			"size is 10 per CPU); pub/sub: those in subscribed state (CLIENT LIST). Commands by INFO commandstats. "+
			"The 1ms-retry settings are left out: %d pollers at 1ms would only measure a saturated server. One round.",
			settle, window, w),
		cols: []col{
			{key: "conns", head: "extra connections", format: "%.0f"},
			{key: "pubsub", head: "of which pub/sub", format: "%.0f"},
			{key: "cmds", head: "Redis cmds/s while waiting", format: "%.0f"},
			{key: "rt", head: "round trips/s while waiting", format: "%.0f"},
		},
	}
	for _, l := range libs {
		r := t.row(l.name, l.settings, l.kind)
		r.add(pubsubRun(ctx, srvs, admins[0], l, w, m, settle, window))
	}
	s.emit(t)
	return nil
}

func pubsubRun(ctx context.Context, srvs []*server, admin *redis.Client, lib lockLib, w, m int, settle, window time.Duration) (map[string]float64, error) {
	rdbs, hooks := hooked(srvs, 2)
	defer func() {
		for _, r := range rdbs {
			r.Close()
		}
	}()
	newMutex, closeLib, err := lib.open(universal(rdbs))
	if err != nil {
		return nil, err
	}
	defer closeLib()
	defer admin.FlushAll(context.WithoutCancel(ctx))

	held := make([]mutex, m)
	for i := range held {
		held[i] = newMutex(0, "ps:"+strconv.Itoa(i))
		if err := held[i].lock(ctx); err != nil {
			return nil, fmt.Errorf("holder: %w", err)
		}
	}
	defer func() {
		for _, h := range held {
			_ = h.unlock(context.WithoutCancel(ctx))
		}
	}()
	conns0, _, err := connections(ctx, admin)
	if err != nil {
		return nil, err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var firstErr error
	var errOnce sync.Once
	for i := range w {
		mu := newMutex(1, "ps:"+strconv.Itoa(i%m))
		wg.Go(func() {
			for {
				err := mu.lock(runCtx)
				if errors.Is(err, errGaveUp) {
					continue
				}
				if err == nil {
					err = errors.New("a waiter acquired a held lock")
					_ = mu.unlock(context.WithoutCancel(runCtx))
				}
				if runCtx.Err() == nil {
					errOnce.Do(func() { firstErr = err; cancel() })
				}
				return
			}
		})
	}
	var ops atomic.Int64
	sleep(runCtx, settle)
	before, err1 := read(ctx, &ops, hooks[1:], []*redis.Client{admin})
	conns, subs, err2 := connections(ctx, admin)
	sleep(runCtx, window)
	after, err3 := read(ctx, &ops, hooks[1:], []*redis.Client{admin})
	cancel()
	wg.Wait()
	if err := errors.Join(firstErr, err1, err2, err3, ctx.Err()); err != nil {
		return nil, err
	}
	secs := after.at.Sub(before.at).Seconds()
	return map[string]float64{
		"conns":  float64(conns - conns0),
		"pubsub": float64(subs),
		"cmds":   float64(after.srv-before.srv) / secs,
		"rt":     float64(after.rt-before.rt) / secs,
	}, nil
}

// connections returns the server's client connections and how many of them
// are subscribed (CLIENT LIST sub= or psub= above 0).
func connections(ctx context.Context, admin *redis.Client) (all, subscribed int, err error) {
	list, err := admin.ClientList(ctx).Result()
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if line == "" {
			continue
		}
		all++
		for _, f := range strings.Fields(line) {
			k, v, _ := strings.Cut(f, "=")
			if (k == "sub" || k == "psub" || k == "ssub") && v != "0" {
				subscribed++
				break
			}
		}
	}
	return all, subscribed, nil
}
