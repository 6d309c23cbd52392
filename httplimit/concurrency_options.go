package httplimit

import (
	"net/http"
	"time"
)

// ConcurrencyOptions configures the middleware of NewConcurrency. The zero
// value of every field selects its default.
type ConcurrencyOptions struct {
	// Key returns the key a request is counted under: at most the limit's
	// requests of one key are in flight at once, across every instance. An
	// error is handled like a Redis error (see FailClosed). Default: every
	// request has the one key "all", a limit on the whole service. A key
	// must not contain '{' or '}' on Redis Cluster.
	Key func(r *http.Request) (string, error)

	// Lease is how long a permit lasts unless renewed: the middleware
	// renews it each third of Lease while the request runs, so it bounds
	// how long the permits of an instance that crashed (or was cut off from
	// Redis) stay taken. Default DefaultConcurrencyLease, 10s. At least
	// 30ms.
	Lease time.Duration

	// Wait is how long a request waits for a permit when all are taken
	// (woken as soon as one comes back) before it is refused. Default 0:
	// refused at once. Negative values are an error.
	Wait time.Duration

	// Timeout bounds the acquisition's call to Redis, beyond Wait (see
	// Options.Timeout). Default DefaultTimeout, 50ms. Negative values are
	// an error.
	Timeout time.Duration

	// StatusCode is the status of a refused request:
	// http.StatusServiceUnavailable (503, the default) or
	// http.StatusTooManyRequests (429). It comes with Retry-After.
	StatusCode int

	// RetryAfter is the Retry-After a refused request is given, rounded up
	// to whole seconds. Default 1s.
	RetryAfter time.Duration

	// FailClosed selects what happens when Redis (or Key) fails: false
	// (the default, fail open) serves the request without a permit; true
	// answers 503 Service Unavailable. Either way the error goes to
	// OnError.
	FailClosed bool

	// OnError receives every error: of Key, of the acquisition, and of
	// the renewals and releases that run off the request path. Default:
	// logged with slog.Default at level Error.
	OnError func(r *http.Request, err error)

	// Skip reports whether a request bypasses the limit. Default: none
	// does.
	Skip func(r *http.Request) bool
}

// DefaultConcurrencyLease is the default of ConcurrencyOptions.Lease.
const DefaultConcurrencyLease = 10 * time.Second

// minConcurrencyLease is the shortest lease: Redis keeps leases in ms, and
// renewals each third of it must fit.
const minConcurrencyLease = 30 * time.Millisecond
