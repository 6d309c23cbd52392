// Package httplimit is net/http middleware that rate-limits requests with a
// redisson.KeyedLimiter (a FixedWindowLimiter or a GCRALimiter, or either
// in local-quota mode, WithLocalQuota, which decides hot identities in
// process from chunks taken from Redis), one identity per client IP by
// default. Its shape is func(http.Handler)
// http.Handler, so it also serves routers built on net/http (chi's r.Use);
// gin and echo have adapters in their own modules, ginlimit and echolimit.
//
// Every limited response carries the fields of the IETF draft "RateLimit
// header fields for HTTP" (draft-ietf-httpapi-ratelimit-headers-10; the
// fields and parameters used here are unchanged in -11):
//
//	RateLimit-Policy: "default";q=100;w=60
//	RateLimit: "default";r=42;t=17
//
// q is the quota: the permits a client can use at once (a fixed window's
// limit, a GCRA limiter's burst), regained over w seconds (the window; for
// GCRA, burst emission intervals, so q/w is its steady rate). r is the
// permits the client has left (never above q) and t the seconds until it
// has q again (for a rejected request: until it may retry). A rejected
// request is answered 429 Too Many Requests with Retry-After in whole
// seconds, rounded up. The legacy X-RateLimit-Limit (q),
// X-RateLimit-Remaining (r) and X-RateLimit-Reset (t) fields are an
// option.
//
// Client identity: by default the key is the IP address of the peer
// (Request.RemoteAddr). Behind reverse proxies, list them in
// Options.TrustedProxies (ParseTrusted accepts single addresses too) and
// name the header they write in Options.ForwardedHeader: X-Forwarded-For
// (the default), Forwarded, or a single-address header such as X-Real-IP
// or CF-Connecting-IP. Only when the peer is a trusted proxy is that one
// header read; a list is read from the right, skipping trusted proxies,
// and the first address that is not one is the client. Addresses further
// left were written by the client itself and are never used, so a client
// cannot pick its own bucket. IPv6 clients are keyed by their /64 network by
// default.
//
// NewConcurrency is the package's other middleware: it caps the requests
// in flight (at most n per key across every instance, with a redisson
// PermitExpirableSemaphore per key) rather than their rate; NewIdempotency
// runs the handler once per Idempotency-Key (IETF
// draft-ietf-httpapi-idempotency-key-header) and replays its response to
// every retry, over a redisson.IdempotencyRecord per key.
//
// When the limiter fails (Redis unreachable, a timeout), the error is
// passed to Options.OnError (slog by default) and the request is served
// without limit (fail open, the default) or answered 503 Service
// Unavailable (Options.FailClosed). Either way it is answered within about
// Options.Timeout (default 50ms), not after go-redis's retries. The
// middleware never panics on such errors.
//
// Give the limiter its own go-redis client with short timeouts, so that a
// Redis outage costs each request at most a few tens of milliseconds and
// the limiter's connections do not compete with the application's:
//
//	limitRDB := redis.NewClient(&redis.Options{
//		Addr:                  "redis:6379",
//		DialTimeout:           50 * time.Millisecond,
//		ReadTimeout:           50 * time.Millisecond,
//		WriteTimeout:          50 * time.Millisecond,
//		PoolTimeout:           50 * time.Millisecond,
//		MaxRetries:            -1,   // no retries: the next request is the retry
//		ContextTimeoutEnabled: true, // socket reads end with Options.Timeout
//	})
//	limits, err := redisson.New(limitRDB, nil)
package httplimit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/goredisson/redisson"
)

// ErrInvalidOptions is returned by New for a nil limiter, a limiter whose
// policy is invalid, or an Options value out of range.
var ErrInvalidOptions = errors.New("httplimit: invalid options")

// ErrNoClientIP is returned by ClientIP (and reported through OnError by
// the default key) when the request's RemoteAddr holds no IP address, as on
// a Unix socket listener.
var ErrNoClientIP = errors.New("httplimit: no client IP address")

// Options configures the middleware. The zero value of every field selects
// its default.
type Options struct {
	// Key returns the identity a request is limited as: a user id, an API
	// key... An error is handled like a limiter error (see FailClosed), so
	// a key function that cannot identify a request should rather return a
	// shared fallback key. Default: the client IP address, as ClientIP
	// finds it with TrustedProxies and ForwardedHeader, IPv6 addresses
	// reduced to their IPv6Prefix network.
	Key func(r *http.Request) (string, error)

	// TrustedProxies lists the networks of the reverse proxies in front of
	// the server. Default none: the forwarding header is ignored and the
	// peer's address is the client's.
	TrustedProxies []netip.Prefix

	// ForwardedHeader names the header the trusted proxies put the client
	// address in: "X-Forwarded-For" (the default) or "Forwarded" (RFC 7239,
	// its for= parameters), lists each proxy appends to; or one of the
	// single-address headers a proxy or CDN sets, replacing what the
	// client sent: "X-Real-IP" (nginx), "CF-Connecting-IP" (Cloudflare),
	// "True-Client-IP" (Akamai, Cloudflare), "Fly-Client-IP" (Fly.io). Any
	// case. Only this one header is read, and only from a trusted proxy:
	// name the one your proxies write, since the others are entirely under
	// the client's control.
	ForwardedHeader string

	// IPv6Prefix is the number of leading bits of an IPv6 client address
	// that make its identity, since one host usually owns a whole /64.
	// Default 64; 128 keys every address on its own. Range 1 to 128.
	IPv6Prefix int

	// Cost returns the number of permits a request spends. Default 1. A
	// cost below 1 is an error (handled like a limiter error); a cost above
	// the limiter's burst is rejected with 429 and no Retry-After, since it
	// could never be allowed.
	Cost func(r *http.Request) int64

	// Skip reports whether a request bypasses the limiter (health checks,
	// internal callers). Default: none does.
	Skip func(r *http.Request) bool

	// Timeout bounds each decision: the limiter's call gets a context that
	// ends Timeout after the request reached the middleware, and a decision
	// not made by then fails (an error wrapping context.DeadlineExceeded,
	// handled as FailClosed says). So when Redis is down or slow, requests
	// are served (or refused) after at most about Timeout instead of
	// waiting out go-redis's dial retries and read timeouts. Default
	// DefaultTimeout, 50ms: a decision is one round trip, well under a
	// millisecond on a LAN. go-redis bounds socket reads by the context
	// only with redis.Options.ContextTimeoutEnabled; give the limiter its
	// own client with short timeouts (see the package documentation).
	// Negative values are an error.
	Timeout time.Duration

	// FailClosed selects what happens when the limiter (or Key, or Cost)
	// fails: false (the default, fail open) serves the request without
	// limit and without RateLimit fields; true answers with Unavailable.
	// Either way the error goes to OnError.
	FailClosed bool

	// OnError receives every error from the limiter, Key and Cost. Default:
	// logged with slog.Default at level Error.
	OnError func(r *http.Request, err error)

	// Rejected answers a request over the limit, after the RateLimit and
	// Retry-After fields are set; DecisionFrom gives it the decision.
	// Default: 429 Too Many Requests with a short text body.
	Rejected http.Handler

	// Unavailable answers a request when the limiter failed and FailClosed
	// is set. Default: 503 Service Unavailable with a short text body.
	Unavailable http.Handler

	// PolicyName is the policy identifier in the RateLimit-Policy and
	// RateLimit fields: printable ASCII. Default "default".
	PolicyName string

	// LegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
	// X-RateLimit-Reset (seconds until reset) to every limited response.
	LegacyHeaders bool
}

// DefaultTimeout is the default of Options.Timeout.
const DefaultTimeout = 50 * time.Millisecond

// middleware is one configured limiter.
type middleware struct {
	l         redisson.KeyedLimiter
	o         Options
	policy    string // RateLimit-Policy value
	quota     string // its q: the burst, also X-RateLimit-Limit
	name      string // quoted policy identifier
	fwdHeader string
}

// New returns middleware that limits every request with l, configured by
// opts (nil for the defaults). It returns ErrInvalidOptions for a nil
// limiter, a limiter whose Policy has a limit, burst or window below 1 (its
// calls would all fail with redisson.ErrInvalidRate), an invalid trusted
// proxy prefix, an unknown ForwardedHeader, an IPv6Prefix out of range, or a
// PolicyName that is not printable ASCII.
//
// The returned middleware is safe for concurrent use.
func New(l redisson.KeyedLimiter, opts *Options) (func(next http.Handler) http.Handler, error) {
	if l == nil {
		return nil, fmt.Errorf("%w: nil limiter", ErrInvalidOptions)
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	p := l.Policy()
	if p.Limit < 1 || p.Burst < 1 || p.Window <= 0 {
		return nil, fmt.Errorf("%w: limiter policy %+v: %w", ErrInvalidOptions, p, redisson.ErrInvalidRate)
	}
	for _, pr := range o.TrustedProxies {
		if !pr.IsValid() {
			return nil, fmt.Errorf("%w: invalid trusted proxy prefix %v", ErrInvalidOptions, pr)
		}
	}
	m := &middleware{l: l}
	switch h, ok := knownHeader(o.ForwardedHeader); {
	case o.ForwardedHeader == "":
		m.fwdHeader = headerXFF
	case ok:
		m.fwdHeader = h
	default:
		return nil, fmt.Errorf("%w: ForwardedHeader %q", ErrInvalidOptions, o.ForwardedHeader)
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		return nil, fmt.Errorf("%w: Timeout %v", ErrInvalidOptions, o.Timeout)
	}
	switch {
	case o.IPv6Prefix == 0:
		o.IPv6Prefix = 64
	case o.IPv6Prefix < 1 || o.IPv6Prefix > 128:
		return nil, fmt.Errorf("%w: IPv6Prefix %d", ErrInvalidOptions, o.IPv6Prefix)
	}
	if o.PolicyName == "" {
		o.PolicyName = "default"
	}
	for i := 0; i < len(o.PolicyName); i++ {
		if c := o.PolicyName[i]; c < 0x20 || c > 0x7e {
			return nil, fmt.Errorf("%w: PolicyName %q is not printable ASCII", ErrInvalidOptions, o.PolicyName)
		}
	}
	if o.Key == nil {
		trusted, header, bits := o.TrustedProxies, m.fwdHeader, o.IPv6Prefix
		o.Key = func(r *http.Request) (string, error) {
			ip, err := ClientIP(r, trusted, header)
			if err != nil {
				return "", err
			}
			return ipKey(ip, bits), nil
		}
	}
	if o.OnError == nil {
		o.OnError = logError("httplimit: rate limiter failed")
	}
	if o.Rejected == nil {
		o.Rejected = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
		})
	}
	if o.Unavailable == nil {
		o.Unavailable = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, http.StatusText(http.StatusServiceUnavailable), http.StatusServiceUnavailable)
		})
	}
	m.o = o
	m.name = sfString(o.PolicyName)
	m.quota = strconv.FormatInt(p.Burst, 10)
	m.policy = m.name + ";q=" + m.quota + ";w=" + strconv.FormatInt(ceilSeconds(refill(p)), 10)
	return m.wrap, nil
}

func (m *middleware) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m.o.Skip != nil && m.o.Skip(r) {
			next.ServeHTTP(w, r)
			return
		}
		d, err := m.decide(r)
		switch {
		case errors.Is(err, redisson.ErrPermitsExceedRate):
			m.setHeaders(w, redisson.RateDecision{Limit: d.Limit})
			m.o.Rejected.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), decisionKey{}, d)))
			return
		case err != nil:
			m.o.OnError(r, err)
			if m.o.FailClosed {
				m.o.Unavailable.ServeHTTP(w, r)
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		m.setHeaders(w, d)
		r = r.WithContext(context.WithValue(r.Context(), decisionKey{}, d))
		if !d.Allowed {
			w.Header().Set("Retry-After", strconv.FormatInt(max(ceilSeconds(d.RetryAfter), 1), 10))
			m.o.Rejected.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// decide asks the limiter about r.
func (m *middleware) decide(r *http.Request) (redisson.RateDecision, error) {
	key, err := m.o.Key(r)
	if err != nil {
		return redisson.RateDecision{}, fmt.Errorf("httplimit: key: %w", err)
	}
	n := int64(1)
	if m.o.Cost != nil {
		n = m.o.Cost(r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), m.o.Timeout)
	defer cancel()
	d, err := m.l.Allow(ctx, key, n)
	switch {
	case errors.Is(err, redisson.ErrPermitsExceedRate):
		d.Limit = m.l.Policy().Burst
	case err != nil && r.Context().Err() == nil && ctx.Err() != nil:
		err = fmt.Errorf("httplimit: no decision within Timeout %v: %w", m.o.Timeout, err)
	}
	return d, err
}

// refill returns the time p takes to regain a full allowance: its window
// for a fixed window (Burst == Limit), Burst emission intervals for GCRA
// (the interval rounded down to the µs, as GCRALimiter does).
func refill(p redisson.RatePolicy) time.Duration {
	if p.Burst == p.Limit {
		return p.Window
	}
	return (p.Window / time.Duration(p.Limit)).Truncate(time.Microsecond) * time.Duration(p.Burst)
}

// setHeaders writes the RateLimit fields of d.
func (m *middleware) setHeaders(w http.ResponseWriter, d redisson.RateDecision) {
	t := d.ResetAfter
	if !d.Allowed {
		t = d.RetryAfter
	}
	secs := strconv.FormatInt(ceilSeconds(t), 10)
	remaining := strconv.FormatInt(d.Remaining, 10)
	h := w.Header()
	h.Set("RateLimit-Policy", m.policy)
	h.Set("RateLimit", m.name+";r="+remaining+";t="+secs)
	if m.o.LegacyHeaders {
		h.Set("X-RateLimit-Limit", m.quota)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", secs)
	}
}

type decisionKey struct{}

// DecisionFrom returns the limiter's decision for the request whose context
// is ctx, and reports whether there is one: there is in the next handler and
// the Rejected handler, not for skipped requests or when the limiter failed.
func DecisionFrom(ctx context.Context) (redisson.RateDecision, bool) {
	d, ok := ctx.Value(decisionKey{}).(redisson.RateDecision)
	return d, ok
}

// logError returns the default OnError: the error logged with slog.Default
// at level Error, as msg, with the request's method, path and peer.
func logError(msg string) func(r *http.Request, err error) {
	return func(r *http.Request, err error) {
		slog.Default().ErrorContext(r.Context(), msg,
			"err", err, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	}
}

// ceilSeconds returns d in whole seconds, rounded up.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// sfString quotes s as a Structured Fields string (RFC 8941).
func sfString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// ipKey returns the identity of ip: the address itself for IPv4, its
// network of bits leading bits for IPv6.
func ipKey(ip netip.Addr, bits int) string {
	if ip.Is4() || bits >= 128 {
		return ip.String()
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return ip.String()
	}
	return p.String()
}
