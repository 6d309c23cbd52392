package httplimit

import (
	"net/http"
	"time"
)

// IdempotencyOptions configures the middleware of NewIdempotency. The zero
// value of every field selects its default.
type IdempotencyOptions struct {
	// Header names the request header that carries the key. Default
	// "Idempotency-Key", the IETF draft's.
	Header string

	// Scope returns the scope of a request's key: the client or tenant
	// it belongs to, so that two clients' equal keys are two records. An
	// error is handled like a Redis error (see FailOpen). Default: one
	// scope for every request (keys shared by every client).
	Scope func(r *http.Request) (string, error)

	// Methods lists the methods whose requests are made idempotent; the
	// requests of other methods pass through untouched. Default POST and
	// PATCH, the methods the draft names as not idempotent.
	Methods []string

	// Required answers a request without the key 400 Bad Request (the
	// draft's answer when a key is required). Default false: such a
	// request passes through, unprotected.
	Required bool

	// Conflict answers a request whose key is being run by another
	// request 409 Conflict at once, as the draft suggests. Default false:
	// it waits (woken when the run ends) up to Wait and is answered with
	// the stored response, or 409 Conflict when Wait runs out.
	Conflict bool

	// Wait bounds how long a request waits for the run of its key by
	// another request (see Conflict). Default 30s. Negative values are an
	// error.
	Wait time.Duration

	// Lease is how long a run keeps its key unless renewed: the middleware
	// renews it each third of Lease while the handler runs, so it bounds
	// how long the key of a run whose instance crashed (or was cut off
	// from Redis) stays taken; the next request with the key then runs the
	// handler. A run whose lease is lost anyway has its request's context
	// cancelled with cause ErrIdempotencyLeaseLost. Default
	// DefaultIdempotencyLease, 10s. At least 30ms.
	Lease time.Duration

	// Retention is how long a stored response is replayed. Default
	// DefaultIdempotencyRetention, 24h. At least 1ms.
	Retention time.Duration

	// MaxBody bounds the request body read to fingerprint the request: a
	// larger one is answered 413 Content Too Large (ErrIdempotencyBody).
	// Default 1 MiB.
	MaxBody int64

	// MaxResponse bounds the response stored: a larger one is sent to its
	// client as the handler writes it, but not stored (the key is freed and
	// OnError gets ErrIdempotencyResponse). Default 1 MiB.
	MaxResponse int64

	// StoreServerErrors stores 5xx responses too. Default false: a 5xx
	// response frees the key, and the client's retry runs the handler again.
	StoreServerErrors bool

	// Timeout bounds each call to Redis (beyond Wait, for the first). Default
	// 1s. Negative values are an error.
	Timeout time.Duration

	// FailOpen selects what happens when Redis (or Scope) fails: false (the
	// default) answers 503 Service Unavailable, since running the handler
	// unprotected could run it twice; true serves the request unprotected.
	// Either way the error goes to OnError.
	FailOpen bool

	// OnError receives every error: of Scope, of the calls to Redis, a lost
	// lease, a response too large to store. Default: logged with
	// slog.Default at level Error.
	OnError func(r *http.Request, err error)
}

// DefaultIdempotencyLease is the default of IdempotencyOptions.Lease.
const DefaultIdempotencyLease = 10 * time.Second

// DefaultIdempotencyRetention is the default of
// IdempotencyOptions.Retention.
const DefaultIdempotencyRetention = 24 * time.Hour

// Defaults of IdempotencyOptions.
const (
	defaultIdempotencyWait    = 30 * time.Second
	defaultIdempotencyMax     = 1 << 20
	defaultIdempotencyTimeout = time.Second
	maxIdempotencyKey         = 255 // bytes of a key header
)
