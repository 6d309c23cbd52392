package httplimit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/goredisson/redisson"
)

// Errors of NewIdempotency's middleware.
var (
	// ErrIdempotencyBody is the error (in the 413 answer) of a request
	// whose body is larger than IdempotencyOptions.MaxBody.
	ErrIdempotencyBody = errors.New("httplimit: request body too large for an idempotent request")

	// ErrIdempotencyResponse is reported to OnError when a response was
	// larger than IdempotencyOptions.MaxResponse: it was sent, not stored,
	// and its key freed.
	ErrIdempotencyResponse = errors.New("httplimit: response too large to store for its idempotency key")

	// ErrIdempotencyLeaseLost is the cause of the cancelled context of a
	// run whose lease ran out (its renewals failed for a whole lease):
	// another request may run the handler for the key. Its response is not
	// stored.
	ErrIdempotencyLeaseLost = errors.New("httplimit: idempotency lease lost")
)

// idempotency is one configured idempotency middleware.
type idempotency struct {
	c    *redisson.Client
	name string
	o    IdempotencyOptions
}

// NewIdempotency returns middleware that runs the handler once per
// idempotency key, after the IETF draft "The Idempotency-Key HTTP Header
// Field" (draft-ietf-httpapi-idempotency-key-header), across every
// instance that uses the same client's Redis and name. A request of one
// of IdempotencyOptions.Methods (POST and PATCH by default) that carries
// the key header is fingerprinted (method, path and query, and a SHA-256
// of the body) and looked up in its key's record, a
// redisson.IdempotencyRecord named "<name>:{<hex SHA-256 of scope and
// key>}", in one round trip:
//
//   - no record: the request runs the handler under a lease (renewed while
//     it runs; the record of a crashed instance expires with it), its
//     response (status, headers, body) is buffered, stored for Retention,
//     then sent; a 5xx response is sent but not stored (the key is freed
//     for the retry) unless StoreServerErrors;
//   - a stored response: it is replayed, byte for byte (the status, every
//     header the handler set, the body);
//   - another fingerprint: 422 Unprocessable Content;
//   - a run in progress: the request waits for it (woken by message) and
//     is answered with its response, or answered 409 Conflict at once
//     (Conflict) or when Wait runs out.
//
// A request without the header passes through, or is answered 400 Bad
// Request (Required); so is a key longer than 255 bytes. A body longer
// than MaxBody is answered 413. The key is a Structured Fields string
// ("..."), or the bare value. Responses are buffered, so handlers that
// stream (Flush) are not suited. gin takes it through ginlimit.Wrap, echo
// through echo.WrapMiddleware; an echo handler must write its response
// itself: an error it returns is written by echo's HTTPErrorHandler after
// the middleware has stored (and sent) what was written before.
//
// It returns ErrInvalidOptions for a nil client, an empty name or one
// containing '{' or '}', a Lease below 30ms, a Retention below 1ms, a
// negative Wait, Timeout, MaxBody or MaxResponse. The middleware is safe
// for concurrent use.
func NewIdempotency(c *redisson.Client, name string, opts *IdempotencyOptions) (func(next http.Handler) http.Handler, error) {
	var o IdempotencyOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOptions)
	case name == "" || strings.ContainsAny(name, "{}"):
		return nil, fmt.Errorf("%w: name %q, want a non-empty name without '{' or '}'", ErrInvalidOptions, name)
	case o.Lease != 0 && o.Lease < minConcurrencyLease:
		return nil, fmt.Errorf("%w: Lease %v, want at least %v", ErrInvalidOptions, o.Lease, minConcurrencyLease)
	case o.Retention != 0 && o.Retention < time.Millisecond:
		return nil, fmt.Errorf("%w: Retention %v, want at least 1ms", ErrInvalidOptions, o.Retention)
	case o.Wait < 0 || o.Timeout < 0 || o.MaxBody < 0 || o.MaxResponse < 0:
		return nil, fmt.Errorf("%w: Wait %v, Timeout %v, MaxBody %d, MaxResponse %d: negative", ErrInvalidOptions, o.Wait, o.Timeout, o.MaxBody, o.MaxResponse)
	}
	o.Header = cmpOr(o.Header, "Idempotency-Key")
	o.Lease = cmpOr(o.Lease, DefaultIdempotencyLease)
	o.Retention = cmpOr(o.Retention, DefaultIdempotencyRetention)
	o.Wait = cmpOr(o.Wait, defaultIdempotencyWait)
	o.Timeout = cmpOr(o.Timeout, defaultIdempotencyTimeout)
	o.MaxBody = cmpOr(o.MaxBody, defaultIdempotencyMax)
	o.MaxResponse = cmpOr(o.MaxResponse, defaultIdempotencyMax)
	if len(o.Methods) == 0 {
		o.Methods = []string{http.MethodPost, http.MethodPatch}
	}
	if o.Scope == nil {
		o.Scope = func(*http.Request) (string, error) { return "", nil }
	}
	if o.OnError == nil {
		o.OnError = logError("httplimit: idempotency failed")
	}
	m := &idempotency{c: c, name: name, o: o}
	return m.wrap, nil
}

// cmpOr is cmp.Or for one value and its default.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (m *idempotency) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := m.key(r)
		switch {
		case !slices.Contains(m.o.Methods, r.Method):
			next.ServeHTTP(w, r)
			return
		case !ok && (m.o.Required || key != ""):
			http.Error(w, fmt.Sprintf("%s header required: a Structured Fields string of at most %d bytes", m.o.Header, maxIdempotencyKey), http.StatusBadRequest)
			return
		case !ok:
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, m.o.MaxBody+1))
		switch {
		case err != nil:
			http.Error(w, "reading the request body: "+err.Error(), http.StatusBadRequest)
			return
		case int64(len(body)) > m.o.MaxBody:
			http.Error(w, fmt.Sprintf("%v: more than %d bytes", ErrIdempotencyBody, m.o.MaxBody), http.StatusRequestEntityTooLarge)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		res, rec, err := m.begin(r, key, body)
		if err != nil {
			m.o.OnError(r, err)
			if m.o.FailOpen {
				next.ServeHTTP(w, r)
				return
			}
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
			return
		}
		switch res.State {
		case redisson.IdempotencyReplay:
			replay(w, res)
		case redisson.IdempotencyMismatch:
			http.Error(w, m.o.Header+" was used with another request (method, path or body)", http.StatusUnprocessableEntity)
		case redisson.IdempotencyBusy:
			http.Error(w, "a request with this "+m.o.Header+" is being processed", http.StatusConflict)
		default:
			m.run(w, r, next, rec, res.Token)
		}
	})
}

// key returns the request's key and whether it is usable: "" and false
// when it has none.
func (m *idempotency) key(r *http.Request) (string, bool) {
	v := r.Header.Get(m.o.Header)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	return v, v != "" && len(v) <= maxIdempotencyKey
}

// begin looks the key's record up: one script call, and a wait when the
// key is running elsewhere.
func (m *idempotency) begin(r *http.Request, key string, body []byte) (redisson.IdempotencyResult, *redisson.IdempotencyRecord, error) {
	scope, err := m.o.Scope(r)
	if err != nil {
		return redisson.IdempotencyResult{}, nil, fmt.Errorf("httplimit: scope: %w", err)
	}
	id := sha256.Sum256([]byte(scope + "\x00" + key))
	rec := m.c.GetIdempotencyRecord(m.name + ":{" + hex.EncodeToString(id[:]) + "}")
	sum := sha256.Sum256(body)
	fp := r.Method + " " + r.URL.RequestURI() + " " + hex.EncodeToString(sum[:])
	wait := m.o.Wait
	if m.o.Conflict {
		wait = 0
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait+m.o.Timeout)
	defer cancel()
	res, err := rec.Begin(ctx, fp, m.o.Lease, wait)
	if err != nil && r.Context().Err() == nil && ctx.Err() != nil {
		err = fmt.Errorf("httplimit: no idempotency decision within Wait %v + Timeout %v: %w", wait, m.o.Timeout, err)
	}
	return res, rec, err
}
