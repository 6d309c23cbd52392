package main

import (
	"context"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// rtHook counts the round trips a go-redis client makes: one per command
// sent alone, one per pipeline. Connection set-up (HELLO, CLIENT SETINFO) is
// left out. Pub/sub connections bypass hooks; INFO commandstats sees them.
type rtHook struct {
	n       atomic.Int64
	maxPipe atomic.Int64 // longest pipeline so far, ns; reset by the reader
}

func (h *rtHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *rtHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		switch cmd.Name() {
		case "hello", "client":
		default:
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h *rtHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) == 0 || cmds[0].Name() == "hello" {
			return next(ctx, cmds)
		}
		h.n.Add(1)
		start := time.Now()
		err := next(ctx, cmds)
		took := int64(time.Since(start))
		for old := h.maxPipe.Load(); took > old && !h.maxPipe.CompareAndSwap(old, took); old = h.maxPipe.Load() {
		}
		return err
	}
}

var _ redis.Hook = (*rtHook)(nil)

// processCPU returns this process's user+system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// mallocs returns the number of heap allocations so far.
func mallocs() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.Mallocs
}

// percentile returns the p-th percentile (0..1) of sorted xs, nearest rank.
func percentile[T int64 | float64 | time.Duration](sorted []T, p float64) T {
	if len(sorted) == 0 {
		return 0
	}
	i := int(p*float64(len(sorted))+0.5) - 1
	i = max(0, min(i, len(sorted)-1))
	return sorted[i]
}

// spread summarises one metric over rounds: median, min and max.
type spread struct{ med, lo, hi float64 }

func summarize(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1]}
}
