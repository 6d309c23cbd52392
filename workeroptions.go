package redisson

import (
	"math/rand/v2"
	"time"
)

// WorkerOptions configures ReliableQueue.Process. The zero value of every
// field but Concurrency is its default.
type WorkerOptions struct {
	// Concurrency is how many handlers run at once. It must be at least 1.
	Concurrency int

	// Prefetch is how many jobs are received ahead of the handlers, beyond
	// Concurrency (default 0). A prefetched job is leased from its
	// receipt; at shutdown the ones not started are given back at once.
	Prefetch int

	// Lease is how long a job stays with a worker that stopped renewing
	// it: the idle time after which other workers take it over. The
	// client's watchdog renews the leases of running jobs every third of
	// Options.WatchdogTimeout, so Lease may not be shorter than that
	// timeout; the default is the timeout (30s).
	Lease time.Duration

	// MaxDeliveries is how many times a job is delivered before it moves
	// to the dead letters: a delivery whose handler failed, or whose lease
	// was lost, counts (default 5).
	MaxDeliveries int

	// Backoff returns how long a job waits before its next delivery after
	// its attempt-th delivery failed (attempt counts from 1). The default
	// is ExponentialBackoff(time.Second, 5*time.Minute, 0.2).
	Backoff func(attempt int) time.Duration

	// ShutdownTimeout is how long Process lets running handlers finish
	// once its context ended, before it cancels their contexts with
	// ErrWorkerStopped (default 10s).
	ShutdownTimeout time.Duration
	// FetchCooldown is how long the worker waits before it reads again
	// after a read that took jobs but fewer than it had room for (default
	// 10ms, at most 1s; negative: no wait). Jobs enqueued meanwhile then
	// come in one read, so a busy queue costs a read per cooldown rather
	// than one per job (fewer round trips, wake-ups and Redis commands).
	// A job enqueued on a queue idle for longer than the cooldown is picked
	// up at once (the worker waits in a blocking read); one enqueued during
	// it waits for its end unless another worker is reading.
	FetchCooldown time.Duration
}

// Defaults of WorkerOptions.
const (
	defaultMaxDeliveries   = 5
	defaultShutdownTimeout = 10 * time.Second
	defaultFetchCooldown   = 10 * time.Millisecond
	maxFetchCooldown       = time.Second
)

// ExponentialBackoff returns a back-off policy: initial after the first
// failure, doubling after each, at most maxDelay, each delay spread at
// random by up to jitter of itself either way (jitter in [0, 1]; 0.2 makes
// 10s anything from 8s to 12s), so that jobs failing together do not come
// back together.
func ExponentialBackoff(initial, maxDelay time.Duration, jitter float64) func(attempt int) time.Duration {
	jitter = min(max(jitter, 0), 1)
	return func(attempt int) time.Duration {
		d := initial
		for i := 1; i < attempt && d < maxDelay; i++ {
			d *= 2
		}
		d = min(d, maxDelay)
		if jitter > 0 {
			d += time.Duration((rand.Float64()*2 - 1) * jitter * float64(d))
		}
		return max(d, 0)
	}
}

// resolve checks o and fills in its defaults; watchdog is the client's
// Options.WatchdogTimeout.
func (o WorkerOptions) resolve(watchdog time.Duration) (WorkerOptions, error) {
	switch {
	case o.Concurrency < 1:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.Concurrency", o.Concurrency, ">= 1")
	case o.Prefetch < 0:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.Prefetch", o.Prefetch, ">= 0")
	case o.Lease != 0 && o.Lease < watchdog:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.Lease", o.Lease, ">= Options.WatchdogTimeout ("+watchdog.String()+")")
	case o.MaxDeliveries < 0:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.MaxDeliveries", o.MaxDeliveries, ">= 1 (0: the default)")
	case o.ShutdownTimeout < 0:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.ShutdownTimeout", o.ShutdownTimeout, ">= 0")
	case o.FetchCooldown > maxFetchCooldown:
		return o, invalidOption(ErrInvalidOption, "WorkerOptions.FetchCooldown", o.FetchCooldown, "<= 1s (negative: none)")
	}
	if o.Lease == 0 {
		o.Lease = watchdog
	}
	if o.MaxDeliveries == 0 {
		o.MaxDeliveries = defaultMaxDeliveries
	}
	if o.Backoff == nil {
		o.Backoff = ExponentialBackoff(time.Second, 5*time.Minute, 0.2)
	}
	if o.ShutdownTimeout == 0 {
		o.ShutdownTimeout = defaultShutdownTimeout
	}
	switch {
	case o.FetchCooldown == 0:
		o.FetchCooldown = defaultFetchCooldown
	case o.FetchCooldown < 0:
		o.FetchCooldown = 0
	}
	return o, nil
}
