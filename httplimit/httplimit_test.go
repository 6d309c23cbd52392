package httplimit

import (
	"context"
	"errors"
	"fmt"
	"go.uber.org/goleak"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// The leak check leaves out a permit's release: it runs off the request
// path for up to releaseTimeout (5 s) by design, and an example that
// closes its client right after its last response can leave one waiting
// on a go-redis dial meanwhile; and that dial, which go-redis runs on a
// goroutine of its own that ends with its dial attempts. Every other
// goroutine still counts.
func TestMain(m *testing.M) {
	redistest.Main(m,
		goleak.IgnoreAnyFunction("github.com/goredisson/redisson/httplimit.(*permit).release.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).queuedNewConn.func2"))
}

var seq atomic.Uint64

// limiterName returns a unique limiter name and deletes its keys when the
// test ends.
func limiterName(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	name := fmt.Sprintf("httplimit:%s:%d", strings.ReplaceAll(t.Name(), "/", "."), seq.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, name+":\\{*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return name
}

// testTimeout is the Timeout of the middlewares under test that assert a
// decision: wide enough that a slow shared machine does not fail open.
const testTimeout = 5 * time.Second

// newRedisson returns a redisson Client on a fresh connection pool to the
// shared server, closed with the test.
func newRedisson(t *testing.T) (*redisson.Client, *redis.Client) {
	t.Helper()
	rdb := redistest.Shared(t).Client(t)
	c, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, rdb
}

// mustNew returns the middleware around an "ok" handler.
func mustNew(t *testing.T, l redisson.KeyedLimiter, o *Options) http.Handler {
	t.Helper()
	if o == nil {
		o = &Options{}
	}
	if o.Timeout == 0 {
		// The 50ms default fails open on a loaded machine (the race run
		// on CI), which would turn an expected 429 into a 200.
		o.Timeout = testTimeout
	}
	mw, err := New(l, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := DecisionFrom(r.Context()); !ok {
			w.WriteHeader(http.StatusTeapot) // the decision must reach the handler
			return
		}
		io.WriteString(w, "ok")
	}))
}

// serve runs one request with the given peer address and headers.
func serve(h http.Handler, remote string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Add(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// Allowed responses carry the IETF fields; the request over the limit gets
// 429 with Retry-After; the fields follow the draft's syntax.
func TestHeadersAndRejection(t *testing.T) {
	c, rdb := newRedisson(t)
	l := c.GetFixedWindowLimiter(limiterName(t, rdb), 3, time.Minute)
	h := mustNew(t, l, &Options{LegacyHeaders: true, PolicyName: `per "ip"`})
	for i := range 3 {
		w := serve(h, "192.0.2.1:1234")
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d; want 200", i, w.Code)
		}
		if got, want := w.Header().Get("RateLimit-Policy"), `"per \"ip\"";q=3;w=60`; got != want {
			t.Errorf("RateLimit-Policy = %q; want %q", got, want)
		}
		if got, want := w.Header().Get("RateLimit"), fmt.Sprintf(`"per \"ip\"";r=%d;t=60`, 2-i); got != want {
			t.Errorf("request %d: RateLimit = %q; want %q", i, got, want)
		}
		if got := w.Header().Get("X-RateLimit-Remaining"); got != strconv.Itoa(2-i) {
			t.Errorf("X-RateLimit-Remaining = %q; want %d", got, 2-i)
		}
		if got := w.Header().Get("X-RateLimit-Limit"); got != "3" {
			t.Errorf("X-RateLimit-Limit = %q; want 3", got)
		}
		if w.Header().Get("Retry-After") != "" {
			t.Errorf("Retry-After on an allowed response")
		}
	}
	w := serve(h, "192.0.2.1:5678") // another port, same client
	if w.Code != http.StatusTooManyRequests {
		t.Fatalf("4th request: status %d; want 429", w.Code)
	}
	ra, err := strconv.Atoi(w.Header().Get("Retry-After"))
	if err != nil || ra < 1 || ra > 61 { // the window ends 1ms after its PTTL
		t.Errorf("Retry-After = %q; want 1..61 seconds", w.Header().Get("Retry-After"))
	}
	if got, want := w.Header().Get("RateLimit"), fmt.Sprintf(`"per \"ip\"";r=0;t=%d`, ra); got != want {
		t.Errorf("RateLimit = %q; want %q", got, want)
	}
	if w := serve(h, "192.0.2.2:1234"); w.Code != http.StatusOK {
		t.Errorf("another client: status %d; want 200", w.Code)
	}
}

// Several HTTP clients hit two server instances (each with its own redisson
// Client) concurrently, from distinct client IPs (announced by a trusted
// proxy) and from the same IP: each IP gets exactly its limit in total.
func TestConcurrentClients(t *testing.T) {
	for _, kind := range []string{"fixedwindow", "gcra"} {
		t.Run(kind, func(t *testing.T) {
			const limit = 15
			name := ""
			var urls []string
			for range 2 {
				c, rdb := newRedisson(t)
				if name == "" {
					name = limiterName(t, rdb)
				}
				var l redisson.KeyedLimiter = c.GetFixedWindowLimiter(name, limit, time.Hour)
				if kind == "gcra" {
					l = c.GetGCRALimiter(name, 1, time.Hour, limit)
				}
				h := mustNew(t, l, &Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}})
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				urls = append(urls, srv.URL)
			}
			ips := []string{"198.51.100.1", "198.51.100.2", "198.51.100.3", "2001:db8::1"}
			var mu sync.Mutex
			allowed := map[string]int{}
			var wg sync.WaitGroup
			var failed atomic.Value
			for g := range 16 { // 4 goroutines per IP, alternating servers
				ip := ips[g%len(ips)]
				url := urls[g%len(urls)]
				wg.Go(func() {
					client := &http.Client{Transport: &http.Transport{}}
					defer client.CloseIdleConnections()
					for range 8 { // 32 requests per IP
						req, _ := http.NewRequest(http.MethodGet, url, nil)
						req.Header.Set("X-Forwarded-For", ip)
						resp, err := client.Do(req)
						if err != nil {
							failed.Store(err)
							return
						}
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						switch resp.StatusCode {
						case http.StatusOK:
							mu.Lock()
							allowed[ip]++
							mu.Unlock()
						case http.StatusTooManyRequests:
						default:
							failed.Store(fmt.Errorf("status %d", resp.StatusCode))
							return
						}
					}
				})
			}
			wg.Wait()
			if err := failed.Load(); err != nil {
				t.Fatal(err)
			}
			for _, ip := range ips {
				if allowed[ip] != limit {
					t.Errorf("client %s: %d requests allowed in total; want exactly %d", ip, allowed[ip], limit)
				}
			}
		})
	}
}

// A forwarding header from a peer that is not a trusted proxy is ignored:
// a client rotating spoofed addresses still spends its own budget.
func TestSpoofedForwardedIgnored(t *testing.T) {
	c, rdb := newRedisson(t)
	for _, o := range []*Options{
		nil, // no trusted proxy
		{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}, // peer not in it
		{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}, ForwardedHeader: "Forwarded"},
	} {
		l := c.GetFixedWindowLimiter(limiterName(t, rdb), 3, time.Minute)
		h := mustNew(t, l, o)
		ok := 0
		for i := range 6 {
			spoof := fmt.Sprintf("203.0.113.%d", i)
			w := serve(h, "192.0.2.9:1000", "X-Forwarded-For", spoof, "Forwarded", "for="+spoof)
			if w.Code == http.StatusOK {
				ok++
			}
		}
		if ok != 3 {
			t.Errorf("options %+v: %d of 6 spoofed requests allowed; want 3", o, ok)
		}
	}
}

// A spoofed header from a peer that is not a trusted proxy never picks a
// bucket, whichever header is configured and whichever headers the client
// sends: a client rotating every forwarding header still spends its own
// budget. A trusted proxy's header does pick it.
func TestSpoofedHeadersEveryHeader(t *testing.T) {
	c, rdb := newRedisson(t)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.1/32")}
	all := append([]string{"X-Forwarded-For", "Forwarded"}, singleHeaders...)
	for _, configured := range all {
		spoofAll := func(i int) []string {
			ip := fmt.Sprintf("203.0.113.%d", i)
			hdr := []string{"Forwarded", "for=" + ip}
			for _, h := range all {
				if h != "Forwarded" {
					hdr = append(hdr, h, ip)
				}
			}
			return hdr
		}
		l := c.GetFixedWindowLimiter(limiterName(t, rdb), 3, time.Minute)
		h := mustNew(t, l, &Options{TrustedProxies: trusted, ForwardedHeader: configured})
		ok := 0
		for i := range 6 {
			if serve(h, "192.0.2.9:1000", spoofAll(i)...).Code == http.StatusOK {
				ok++
			}
		}
		if ok != 3 {
			t.Errorf("%s configured, untrusted peer: %d of 6 spoofed requests allowed; want 3", configured, ok)
		}
		// The same headers from the trusted proxy: one bucket per address.
		ok = 0
		for i := range 6 {
			if serve(h, "10.0.0.1:1000", spoofAll(100+i)...).Code == http.StatusOK {
				ok++
			}
		}
		if ok != 6 {
			t.Errorf("%s configured, trusted proxy: %d of 6 clients allowed; want 6", configured, ok)
		}
	}
}

// Behind trusted proxies the right-most untrusted address is the client:
// whatever the client prepends, it is keyed by the address its proxy saw.
func TestTrustedProxyChain(t *testing.T) {
	c, rdb := newRedisson(t)
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	for _, hdr := range []string{"X-Forwarded-For", "Forwarded"} {
		l := c.GetFixedWindowLimiter(limiterName(t, rdb), 3, time.Minute)
		h := mustNew(t, l, &Options{TrustedProxies: trusted, ForwardedHeader: hdr})
		ok := 0
		for i := range 6 {
			var v string
			if hdr == "Forwarded" {
				v = fmt.Sprintf(`for=203.0.113.%d, for="198.51.100.7:4711";proto=https, for=10.1.1.1`, i)
			} else {
				v = fmt.Sprintf("203.0.113.%d, 198.51.100.7, 10.1.1.1", i)
			}
			if w := serve(h, "10.0.0.2:1000", hdr, v); w.Code == http.StatusOK {
				ok++
			}
		}
		if ok != 3 {
			t.Errorf("%s: %d of 6 allowed; want 3 (all keyed as 198.51.100.7)", hdr, ok)
		}
	}
}

func TestClientIP(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("fd00::/8")}
	cases := []struct {
		what, remote, header, value, want string
	}{
		{"untrusted peer", "192.0.2.1:80", "X-Forwarded-For", "1.1.1.1", "192.0.2.1"},
		{"trusted peer, no header", "10.0.0.1:80", "X-Forwarded-For", "", "10.0.0.1"},
		{"right-most untrusted", "10.0.0.1:80", "X-Forwarded-For", "6.6.6.6, 1.2.3.4, 10.9.9.9", "1.2.3.4"},
		{"all trusted", "10.0.0.1:80", "X-Forwarded-For", "10.0.0.7, 10.0.0.8", "10.0.0.7"},
		{"garbage stops the walk", "10.0.0.1:80", "X-Forwarded-For", "6.6.6.6, unknown, 10.0.0.5", "10.0.0.5"},
		{"xff with port", "10.0.0.1:80", "X-Forwarded-For", "1.2.3.4:5555", "1.2.3.4"},
		{"ipv6 peer", "[2001:db8::5]:80", "X-Forwarded-For", "1.1.1.1", "2001:db8::5"},
		{"mapped ipv4 peer", "[::ffff:192.0.2.3]:80", "X-Forwarded-For", "", "192.0.2.3"},
		{"trusted ipv6 peer", "[fd00::1]:80", "X-Forwarded-For", "2001:db8::9", "2001:db8::9"},
		{"forwarded quoted ipv6", "10.0.0.1:80", "Forwarded", `for="[2001:db8::7]:4711", for=10.0.0.3`, "2001:db8::7"},
		{"forwarded params", "10.0.0.1:80", "Forwarded", `for=6.6.6.6;by=x, proto=http;For=1.2.3.4;host="a,b"`, "1.2.3.4"},
		{"forwarded unknown", "10.0.0.1:80", "Forwarded", `for=6.6.6.6, for=unknown`, "10.0.0.1"},
		{"forwarded obfuscated", "10.0.0.1:80", "Forwarded", `for=1.2.3.4, for=_hidden, for=10.0.0.4`, "10.0.0.4"},
		{"forwarded element without for", "10.0.0.1:80", "Forwarded", `for=1.2.3.4, proto=https`, "10.0.0.1"},
		{"header not configured ignored", "10.0.0.1:80", "Forwarded", "", "10.0.0.1"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = tc.remote
		if tc.value != "" {
			r.Header.Set(tc.header, tc.value)
		}
		if tc.what == "header not configured ignored" {
			r.Header.Set("X-Forwarded-For", "1.2.3.4")
		}
		got, err := ClientIP(r, trusted, tc.header)
		if err != nil || got.String() != tc.want {
			t.Errorf("%s: ClientIP = %v, %v; want %s", tc.what, got, err, tc.want)
		}
	}
	// Several header lines count as one list, in order.
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.RemoteAddr = "10.0.0.1:80"
	r.Header.Add("X-Forwarded-For", "6.6.6.6, 1.2.3.4")
	r.Header.Add("X-Forwarded-For", "10.0.0.9")
	if got, _ := ClientIP(r, trusted, "X-Forwarded-For"); got.String() != "1.2.3.4" {
		t.Errorf("two header lines: %v; want 1.2.3.4", got)
	}
	r.RemoteAddr = "@"
	if _, err := ClientIP(r, trusted, "X-Forwarded-For"); !errors.Is(err, ErrNoClientIP) {
		t.Errorf("unix socket peer: err = %v; want ErrNoClientIP", err)
	}
}

// IPv6 clients of one /64 share a budget by default; with IPv6Prefix 128
// each address has its own.
func TestIPv6Prefix(t *testing.T) {
	c, rdb := newRedisson(t)
	for _, tc := range []struct {
		bits, want int
	}{{0, 2}, {128, 4}} {
		l := c.GetFixedWindowLimiter(limiterName(t, rdb), 2, time.Minute)
		h := mustNew(t, l, &Options{IPv6Prefix: tc.bits})
		ok := 0
		for _, a := range []string{"[2001:db8:1:2::1]:1", "[2001:db8:1:2::1]:2", "[2001:db8:1:2::ffff]:1", "[2001:db8:1:2:aaaa::1]:1"} {
			if serve(h, a).Code == http.StatusOK {
				ok++
			}
		}
		if ok != tc.want {
			t.Errorf("IPv6Prefix %d: %d allowed; want %d", tc.bits, ok, tc.want)
		}
	}
}

// Custom key and cost, skip, a cost above the burst, and the decision in
// the handler.
func TestKeyCostSkip(t *testing.T) {
	c, rdb := newRedisson(t)
	l := c.GetGCRALimiter(limiterName(t, rdb), 1, time.Hour, 5)
	var gotErr atomic.Pointer[error] // errors of different types: not an atomic.Value
	h := mustNew(t, l, &Options{
		Key: func(r *http.Request) (string, error) {
			k := r.Header.Get("X-API-Key")
			if k == "" {
				return "", errors.New("no api key")
			}
			return "key:" + k, nil
		},
		Cost: func(r *http.Request) int64 {
			if n, err := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64); err == nil {
				return n
			}
			return 1
		},
		Skip:       func(r *http.Request) bool { return r.Header.Get("X-Health") != "" },
		FailClosed: true,
		OnError:    func(_ *http.Request, err error) { gotErr.Store(&err) },
	})
	if w := serve(h, "192.0.2.1:1", "X-API-Key", "a", "X-Cost", "4"); w.Code != http.StatusOK || !strings.Contains(w.Header().Get("RateLimit"), "r=1;") {
		t.Errorf("cost 4: %d %q; want 200, r=1", w.Code, w.Header().Get("RateLimit"))
	}
	if w := serve(h, "192.0.2.2:1", "X-API-Key", "a", "X-Cost", "2"); w.Code != http.StatusTooManyRequests {
		t.Errorf("cost 2 with 1 left, other IP same API key: %d; want 429", w.Code)
	}
	if w := serve(h, "192.0.2.1:1", "X-API-Key", "b", "X-Cost", "5"); w.Code != http.StatusOK {
		t.Errorf("other API key: %d; want 200", w.Code)
	}
	w := serve(h, "192.0.2.1:1", "X-API-Key", "c", "X-Cost", "6")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "" {
		t.Errorf("cost above burst: %d, Retry-After %q; want 429 without Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if w := serve(h, "192.0.2.1:1", "X-API-Key", "a", "X-Health", "1"); w.Code != http.StatusTeapot || w.Header().Get("RateLimit") != "" {
		t.Errorf("skipped: %d %q; want the handler without decision or fields", w.Code, w.Header().Get("RateLimit"))
	}
	if p := gotErr.Load(); p != nil {
		t.Fatalf("OnError called: %v", *p)
	}
	if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusServiceUnavailable {
		t.Errorf("key error with FailClosed: %d; want 503", w.Code)
	}
	if w := serve(h, "192.0.2.1:1", "X-API-Key", "a", "X-Cost", "0"); w.Code != http.StatusServiceUnavailable {
		t.Errorf("cost 0 with FailClosed: %d; want 503", w.Code)
	}
	if p := gotErr.Load(); p == nil || !errors.Is(*p, redisson.ErrInvalidPermits) {
		t.Errorf("OnError got %v; want ErrInvalidPermits", p)
	}
}

// deadRedis returns a go-redis client for a port nobody listens on.
func deadRedis(t *testing.T) *redis.Client {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// partitionedRedis returns a go-redis client behind a partitioned proxy:
// its calls time out.
func partitionedRedis(t *testing.T) *redis.Client {
	t.Helper()
	p := redistest.NewProxy(t, redistest.Shared(t).Addr())
	p.Partition(true)
	rdb := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// With Redis unreachable, fail open serves the request without fields, fail
// closed answers 503; both report the error.
func TestRedisDown(t *testing.T) {
	for _, dead := range []struct {
		what string
		rdb  func(t *testing.T) *redis.Client
	}{{"closed port", deadRedis}, {"partition", partitionedRedis}} {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failclosed=%v", dead.what, closed), func(t *testing.T) {
				c, err := redisson.New(dead.rdb(t), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var errs atomic.Int32
				h := mustNew(t, c.GetFixedWindowLimiter("down", 5, time.Minute), &Options{
					FailClosed: closed,
					OnError:    func(*http.Request, error) { errs.Add(1) },
				})
				srv := httptest.NewServer(h)
				defer srv.Close()
				resp, err := http.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := http.StatusTeapot // the handler, without a decision
				if closed {
					want = http.StatusServiceUnavailable
				}
				if resp.StatusCode != want {
					t.Errorf("status %d (%q); want %d", resp.StatusCode, body, want)
				}
				if resp.Header.Get("RateLimit") != "" {
					t.Errorf("RateLimit field %q without a decision", resp.Header.Get("RateLimit"))
				}
				if errs.Load() != 1 {
					t.Errorf("OnError called %d times; want 1", errs.Load())
				}
			})
		}
	}
}

// The default OnError logs instead of panicking.
func TestDefaultOnError(t *testing.T) {
	c, err := redisson.New(deadRedis(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h := mustNew(t, c.GetGCRALimiter("down", 1, time.Second, 1), nil)
	if w := serve(h, "192.0.2.1:1"); w.Code != http.StatusTeapot {
		t.Errorf("status %d; want the handler (fail open)", w.Code)
	}
}

func TestNewInvalid(t *testing.T) {
	c, rdb := newRedisson(t)
	name := limiterName(t, rdb)
	good := c.GetFixedWindowLimiter(name, 1, time.Second)
	cases := []struct {
		what string
		l    redisson.KeyedLimiter
		o    *Options
	}{
		{"nil limiter", nil, nil},
		{"invalid limiter", c.GetFixedWindowLimiter(name, 0, time.Second), nil},
		{"invalid gcra", c.GetGCRALimiter(name, 1, time.Second, 0), nil},
		{"zero prefix", good, &Options{TrustedProxies: []netip.Prefix{{}}}},
		{"unknown header", good, &Options{ForwardedHeader: "X-Client-IP"}},
		{"negative timeout", good, &Options{Timeout: -time.Millisecond}},
		{"ipv6 prefix", good, &Options{IPv6Prefix: 129}},
		{"negative ipv6 prefix", good, &Options{IPv6Prefix: -1}},
		{"policy name", good, &Options{PolicyName: "é"}},
	}
	for _, tc := range cases {
		if _, err := New(tc.l, tc.o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%s: err = %v; want ErrInvalidOptions", tc.what, err)
		}
	}
	for _, h := range []string{"forwarded", "x-real-ip", "CF-Connecting-IP", "true-client-ip", "Fly-Client-IP"} {
		if _, err := New(good, &Options{ForwardedHeader: h}); err != nil {
			t.Errorf("ForwardedHeader %q: %v", h, err)
		}
	}
}

// A limiter in local-quota mode works as any KeyedLimiter: two server
// instances (each its own Client and local quota) on one client IP admit
// exactly the limit between them, with truthful headers, then 429.
func TestLocalQuotaLimiter(t *testing.T) {
	c1, rdb := newRedisson(t)
	c2, _ := newRedisson(t)
	name := limiterName(t, rdb)
	q := redisson.LocalQuota{Chunk: 8}
	hs := []http.Handler{
		mustNew(t, c1.GetFixedWindowLimiter(name, 40, time.Minute).WithLocalQuota(q), nil),
		mustNew(t, c2.GetFixedWindowLimiter(name, 40, time.Minute).WithLocalQuota(q), nil),
	}
	ok := 0
	for i := range 100 {
		w := serve(hs[i%2], "192.0.2.9:1")
		switch w.Code {
		case http.StatusOK:
			ok++
			if !strings.HasPrefix(w.Header().Get("RateLimit"), `"default";r=`) {
				t.Errorf("RateLimit = %q", w.Header().Get("RateLimit"))
			}
		case http.StatusTooManyRequests:
			if ra, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || ra < 1 || ra > 61 {
				t.Errorf("Retry-After = %q; want 1..61 seconds", w.Header().Get("Retry-After"))
			}
		default:
			t.Fatalf("request %d: status %d", i, w.Code)
		}
	}
	// Alternating, both instances use what they hold before the window
	// runs out, so no permit is lost here; the bound is 2 × (Chunk-1).
	if ok > 40 || ok < 40-2*(8-1) {
		t.Errorf("%d requests allowed; want at most 40 and at least %d", ok, 40-2*(8-1))
	}
}
