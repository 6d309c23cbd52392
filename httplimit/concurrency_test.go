package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// concName returns a unique concurrency limit name and deletes its keys
// when the test ends.
func concName(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	name := fmt.Sprintf("httpconc:%s:%d", strings.ReplaceAll(t.Name(), "/", "."), seq.Add(1))
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "*"+name+"*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return name
}

// gated is a handler that holds each request until release is closed (or
// sends on entered first).
type gated struct {
	entered chan struct{}
	release chan struct{}
}

func newGated() *gated {
	return &gated{entered: make(chan struct{}, 100), release: make(chan struct{})}
}

// waitEntered waits for a request to enter the handler, failing the test
// after 30s (a request refused instead would otherwise hang it).
func (g *gated) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("no request entered the handler within 30s")
	}
}

func (g *gated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.entered <- struct{}{}
	<-g.release
	w.Write([]byte("ok"))
}

func mustConcurrency(t *testing.T, c *redisson.Client, name string, limit int64, o *ConcurrencyOptions, h http.Handler) http.Handler {
	t.Helper()
	if o == nil {
		o = &ConcurrencyOptions{}
	}
	if o.Timeout == 0 {
		o.Timeout = testTimeout // see testTimeout
	}
	mw, err := NewConcurrency(c, name, limit, o)
	if err != nil {
		t.Fatal(err)
	}
	return mw(h)
}

// serveAsync runs one request through h on a goroutine and returns its recorder
// once done.
func serveAsync(h http.Handler) <-chan *httptest.ResponseRecorder {
	ch := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		ch <- w
	}()
	return ch
}

// With every permit taken the next request is refused with 503 and
// Retry-After (429 by option), and once a request returns its permit
// serves the next one.
func TestConcurrencyRefusesBeyondLimit(t *testing.T) {
	for _, code := range []int{0, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			c, rdb := newRedisson(t)
			g := newGated()
			h := mustConcurrency(t, c, concName(t, rdb), 2, &ConcurrencyOptions{StatusCode: code, RetryAfter: 1500 * time.Millisecond}, g)
			first, second := serveAsync(h), serveAsync(h)
			g.waitEntered(t)
			g.waitEntered(t)
			w := <-serveAsync(h)
			want := code
			if want == 0 {
				want = http.StatusServiceUnavailable
			}
			if w.Code != want || w.Header().Get("Retry-After") != "2" {
				t.Fatalf("third request: %d, Retry-After %q; want %d, 2", w.Code, w.Header().Get("Retry-After"), want)
			}
			close(g.release)
			for _, ch := range []<-chan *httptest.ResponseRecorder{first, second} {
				if w := <-ch; w.Code != http.StatusOK {
					t.Fatalf("admitted request: %d", w.Code)
				}
			}
			redistest.Eventually(t, 10*time.Second, "a permit back after the release", func() bool {
				return (<-serveAsync(h)).Code == http.StatusOK
			})
		})
	}
}

// With a Wait a request waits for a permit and is served when one comes
// back.
func TestConcurrencyWaits(t *testing.T) {
	c, rdb := newRedisson(t)
	g := newGated()
	// Waits far longer than the test's bounds: a request must be served
	// when a permit comes back, not when its wait runs out.
	h := mustConcurrency(t, c, concName(t, rdb), 1, &ConcurrencyOptions{Wait: time.Minute}, g)
	first := serveAsync(h)
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("first request (on a key never set up) not admitted within 10s")
	}
	second := serveAsync(h)
	time.Sleep(100 * time.Millisecond)
	select {
	case <-g.entered:
		t.Fatal("second request admitted while the first runs")
	default:
	}
	close(g.release)
	if w := <-first; w.Code != http.StatusOK {
		t.Fatal(w.Code)
	}
	select {
	case w := <-second:
		if w.Code != http.StatusOK {
			t.Fatalf("waiting request: %d; want 200", w.Code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("waiting request not served within 10s of the permit's release")
	}
}

// A request that runs for many leases keeps its permit (renewed), and the
// permits of an instance that crashed come back when their lease ends.
func TestConcurrencyLeases(t *testing.T) {
	c, rdb := newRedisson(t)
	ctx := context.Background()
	name := concName(t, rdb)
	const lease = 150 * time.Millisecond
	g := newGated()
	h := mustConcurrency(t, c, name, 1, &ConcurrencyOptions{Lease: lease}, g)
	long := serveAsync(h)
	g.waitEntered(t)
	for range 6 { // 6 × lease/2 = 3 leases
		time.Sleep(lease / 2)
		if w := <-serveAsync(h); w.Code != http.StatusServiceUnavailable {
			t.Fatalf("request beside a long one: %d; want 503 (its permit renewed)", w.Code)
		}
	}
	close(g.release)
	<-long
	// A crashed instance: its permit is taken and never released.
	sem := c.GetPermitExpirableSemaphore(name + ":all")
	redistest.Eventually(t, 10*time.Second, "the released permit back", func() bool {
		n, _ := sem.AvailablePermits(ctx)
		return n == 1
	})
	if _, ok, err := sem.TryAcquire(ctx, 0, 500*time.Millisecond); err != nil || !ok {
		t.Fatalf("TryAcquire = %v, %v", ok, err)
	}
	taken := time.Now()
	ok := mustConcurrency(t, c, name, 1, &ConcurrencyOptions{Lease: lease}, handlerOK())
	if w := <-serveAsync(ok); w.Code != http.StatusServiceUnavailable {
		t.Fatalf("with the crashed instance's permit taken: %d; want 503", w.Code)
	}
	redistest.Eventually(t, 10*time.Second, "the leaked permit back", func() bool {
		return (<-serveAsync(ok)).Code == http.StatusOK
	})
	if d := time.Since(taken); d < 400*time.Millisecond {
		t.Fatalf("leaked permit back after %v; want its lease, 500ms", d)
	}
}

func handlerOK() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
}

// When Redis fails, the request is served without a permit (fail open) or
// refused with 503 (FailClosed), and OnError is told.
func TestConcurrencyRedisDown(t *testing.T) {
	// The releases run off the request path for up to releaseTimeout, and
	// go-redis dials on goroutines of its own: wait for both to end
	// (after the client's Close), so that the package's goleak check at
	// the end finds none of them.
	t.Cleanup(func() {
		redistest.Eventually(t, 2*releaseTimeout, "the releases and go-redis's dials ended", func() bool {
			buf := make([]byte, 1<<20)
			stacks := string(buf[:runtime.Stack(buf, true)])
			return !strings.Contains(stacks, "httplimit.(*permit).release") && !strings.Contains(stacks, "(*ConnPool).queuedNewConn")
		})
	})
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 20 * time.Millisecond})
	defer rdb.Close()
	c, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, closed := range []bool{false, true} {
		var mu sync.Mutex
		var errs []error
		// The 50ms default, as this test was written for: a longer Timeout
		// leaves go-redis dialling the refused port on its own goroutines
		// past the Cleanup's wait.
		o := &ConcurrencyOptions{Timeout: DefaultTimeout, FailClosed: closed, OnError: func(_ *http.Request, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}}
		w := <-serveAsync(mustConcurrency(t, c, "down", 1, o, handlerOK()))
		want := http.StatusOK
		if closed {
			want = http.StatusServiceUnavailable
		}
		mu.Lock()
		if w.Code != want || len(errs) != 1 {
			t.Fatalf("FailClosed %v: %d with %d errors; want %d with 1", closed, w.Code, len(errs), want)
		}
		mu.Unlock()
	}
}

// Bad options are refused with ErrInvalidOptions.
func TestConcurrencyInvalidOptions(t *testing.T) {
	c, _ := newRedisson(t)
	for _, tc := range []struct {
		c     *redisson.Client
		name  string
		limit int64
		o     ConcurrencyOptions
	}{
		{nil, "n", 1, ConcurrencyOptions{}},
		{c, "", 1, ConcurrencyOptions{}},
		{c, "n", 0, ConcurrencyOptions{}},
		{c, "n", 1, ConcurrencyOptions{Lease: time.Millisecond}},
		{c, "n", 1, ConcurrencyOptions{Wait: -1}},
		{c, "n", 1, ConcurrencyOptions{Timeout: -1}},
		{c, "n", 1, ConcurrencyOptions{StatusCode: 500}},
	} {
		if _, err := NewConcurrency(tc.c, tc.name, tc.limit, &tc.o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("NewConcurrency(%v, %q, %d, %+v) = %v; want ErrInvalidOptions", tc.c != nil, tc.name, tc.limit, tc.o, err)
		}
	}
}
