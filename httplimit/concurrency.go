package httplimit

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/goredisson/redisson"
)

// releaseTimeout bounds a release or renewal, which run off the request
// path.
const releaseTimeout = 5 * time.Second

// maxSetKeys is how many keys a middleware remembers as set up; beyond it
// the memory is cleared (a key set up again costs one call, no more).
const maxSetKeys = 4096

// concurrency is one configured concurrency limit.
type concurrency struct {
	c       *redisson.Client
	name    string
	limit   int64
	o       ConcurrencyOptions
	retry   string   // Retry-After value
	setKeys sync.Map // semaphore name -> struct{}: TrySetPermits done here
	nSet    int      // entries in setKeys, guarded by mu
	mu      sync.Mutex
}

// NewConcurrency returns middleware that lets at most limit requests of one
// key (ConcurrencyOptions.Key; by default one key for every request) be in
// flight at once across every instance that uses the same client's Redis
// and name: each key is a redisson PermitExpirableSemaphore named
// "<name>:<key>" with limit permits (set up by the first request that finds
// it without, with TrySetPermits; to change the limit of an existing key,
// use the semaphore's AddPermits or delete it). A request takes one permit
// with a lease before the next handler runs, the lease is renewed while
// the handler runs, and the permit is released after it returns, off the
// request path (the response is not held up by the release). A request
// that finds every permit taken (after ConcurrencyOptions.Wait) is
// answered with StatusCode, 503 by default, and Retry-After. The permits
// of an instance that crashed come back when their lease ends. The limit
// counts only requests that hold a permit: when the call for one fails
// (Redis unreachable, or slower than Timeout), the request is served
// without one unless ConcurrencyOptions.FailClosed is set.
//
// It returns ErrInvalidOptions for a nil client, an empty name, a limit
// below 1, a Lease below 30ms, a negative Wait or Timeout, or a StatusCode
// other than 503 and 429. The middleware is safe for concurrent use.
func NewConcurrency(c *redisson.Client, name string, limit int64, opts *ConcurrencyOptions) (func(next http.Handler) http.Handler, error) {
	var o ConcurrencyOptions
	if opts != nil {
		o = *opts
	}
	switch {
	case c == nil:
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOptions)
	case name == "":
		return nil, fmt.Errorf("%w: empty name", ErrInvalidOptions)
	case limit < 1:
		return nil, fmt.Errorf("%w: limit %d, want at least 1", ErrInvalidOptions, limit)
	case o.Lease != 0 && o.Lease < minConcurrencyLease:
		return nil, fmt.Errorf("%w: Lease %v, want at least %v", ErrInvalidOptions, o.Lease, minConcurrencyLease)
	case o.Wait < 0 || o.Timeout < 0 || o.RetryAfter < 0:
		return nil, fmt.Errorf("%w: Wait %v, Timeout %v, RetryAfter %v: negative", ErrInvalidOptions, o.Wait, o.Timeout, o.RetryAfter)
	case o.StatusCode != 0 && o.StatusCode != http.StatusServiceUnavailable && o.StatusCode != http.StatusTooManyRequests:
		return nil, fmt.Errorf("%w: StatusCode %d, want 503 or 429", ErrInvalidOptions, o.StatusCode)
	}
	if o.Lease == 0 {
		o.Lease = DefaultConcurrencyLease
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StatusCode == 0 {
		o.StatusCode = http.StatusServiceUnavailable
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = time.Second
	}
	if o.Key == nil {
		o.Key = func(*http.Request) (string, error) { return "all", nil }
	}
	if o.OnError == nil {
		o.OnError = logError("httplimit: concurrency limit failed")
	}
	m := &concurrency{c: c, name: name, limit: limit, o: o, retry: strconv.FormatInt(max(ceilSeconds(o.RetryAfter), 1), 10)}
	return m.wrap, nil
}

func (m *concurrency) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.o.Skip != nil && m.o.Skip(r) {
			next.ServeHTTP(w, r)
			return
		}
		sem, id, ok, err := m.acquire(r)
		switch {
		case err != nil:
			m.o.OnError(r, err)
			if m.o.FailClosed {
				http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
				return
			}
			next.ServeHTTP(w, r)
			return
		case !ok:
			w.Header().Set("Retry-After", m.retry)
			http.Error(w, http.StatusText(m.o.StatusCode), m.o.StatusCode)
			return
		}
		p := &permit{m: m, r: r, sem: sem, id: id}
		p.renewLater()
		defer p.release()
		next.ServeHTTP(w, r)
	})
}

// acquire takes a permit of r's key, setting the key's permits up first
// when it finds none and has not set them up before.
func (m *concurrency) acquire(r *http.Request) (*redisson.PermitExpirableSemaphore, string, bool, error) {
	key, err := m.o.Key(r)
	if err != nil {
		return nil, "", false, fmt.Errorf("httplimit: key: %w", err)
	}
	sem := m.c.GetPermitExpirableSemaphore(m.name + ":" + key)
	ctx, cancel := context.WithTimeout(r.Context(), m.o.Wait+m.o.Timeout)
	defer cancel()
	// A key not known here to be set up may have no permits at all: a
	// first try that does not wait, then the set-up, then the wait.
	_, known := m.setKeys.Load(sem.Name())
	wait := m.o.Wait
	// The decisive acquisitions carry the middleware's name as their
	// operation group, so that an Observer counts rejections by it; the
	// first try on a key not known here is not one (it may have no permits
	// set up yet).
	decisive := redisson.WithOperationGroup(ctx, m.name)
	tctx := decisive
	if !known {
		wait, tctx = 0, ctx
	}
	id, ok, err := sem.TryAcquire(tctx, wait, m.o.Lease)
	if err != nil || ok || known {
		return sem, id, ok, m.timedOut(r, ctx, err)
	}
	// Set up by this call or a concurrent one, or long ago: remembered.
	if _, err := sem.TrySetPermits(ctx, m.limit); err != nil {
		return sem, "", false, m.timedOut(r, ctx, err)
	}
	m.remember(sem.Name())
	id, ok, err = sem.TryAcquire(decisive, m.o.Wait, m.o.Lease)
	return sem, id, ok, m.timedOut(r, ctx, err)
}

// timedOut names the Timeout in an error caused by it.
func (m *concurrency) timedOut(r *http.Request, ctx context.Context, err error) error {
	if err != nil && r.Context().Err() == nil && ctx.Err() != nil {
		return fmt.Errorf("httplimit: no permit decision within Wait %v + Timeout %v: %w", m.o.Wait, m.o.Timeout, err)
	}
	return err
}

// remember records that a key's permits are set up.
func (m *concurrency) remember(name string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.nSet >= maxSetKeys {
		m.setKeys.Clear()
		m.nSet = 0
	}
	if _, loaded := m.setKeys.LoadOrStore(name, struct{}{}); !loaded {
		m.nSet++
	}
}
