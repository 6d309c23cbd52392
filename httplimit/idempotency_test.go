package httplimit

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
)

func mustIdempotency(t *testing.T, c *redisson.Client, name string, o *IdempotencyOptions, h http.Handler) http.Handler {
	t.Helper()
	mw, err := NewIdempotency(c, name, o)
	if err != nil {
		t.Fatal(err)
	}
	return mw(h)
}

// counting is a handler that counts its runs and answers with a body
// naming the run, a header set and status 201.
type counting struct{ n atomic.Int64 }

func (h *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.n.Add(1)
	b, _ := io.ReadAll(r.Body)
	w.Header().Set("X-Run", fmt.Sprint(n))
	w.Header().Add("X-Multi", "a")
	w.Header().Add("X-Multi", "b")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "run %d of %q\x00\xff", n, b)
}

func idemReq(method, path, key, body string) *http.Request {
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	if key != "" {
		r.Header.Set("Idempotency-Key", key)
	}
	return r
}

func serveReq(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// same reports how two responses differ, "" when they do not.
func same(a, b *httptest.ResponseRecorder) string {
	switch {
	case a.Code != b.Code:
		return fmt.Sprintf("status %d, want %d", b.Code, a.Code)
	case a.Body.String() != b.Body.String():
		return fmt.Sprintf("body %q, want %q", b.Body, a.Body)
	case fmt.Sprint(a.Header()) != fmt.Sprint(b.Header()):
		return fmt.Sprintf("header %v, want %v", b.Header(), a.Header())
	}
	return ""
}

// The first request runs the handler; every later one with the key gets
// the same status, headers and bytes, the handler not run again; another
// key runs it again; a key reused with another body, path or method gets
// 422; a quoted key is the bare key.
func TestIdempotencyReplays(t *testing.T) {
	c, rdb := newRedisson(t)
	h := &counting{}
	mw := mustIdempotency(t, c, concName(t, rdb), nil, h)
	first := serveReq(mw, idemReq("POST", "/orders?x=1", "k1", "body"))
	if first.Code != http.StatusCreated || h.n.Load() != 1 {
		t.Fatalf("first: status %d, runs %d", first.Code, h.n.Load())
	}
	for _, key := range []string{"k1", `"k1"`} {
		if d := same(first, serveReq(mw, idemReq("POST", "/orders?x=1", key, "body"))); d != "" {
			t.Errorf("replay of %s: %s", key, d)
		}
	}
	if h.n.Load() != 1 {
		t.Fatalf("runs %d after replays, want 1", h.n.Load())
	}
	for _, r := range []*http.Request{idemReq("POST", "/orders?x=1", "k1", "other"), idemReq("POST", "/orders?x=2", "k1", "body"),
		idemReq("PATCH", "/orders?x=1", "k1", "body")} {
		if w := serveReq(mw, r); w.Code != http.StatusUnprocessableEntity {
			t.Errorf("%s %s with another body or target: status %d, want 422", r.Method, r.URL, w.Code)
		}
	}
	if w := serveReq(mw, idemReq("POST", "/orders?x=1", "k2", "body")); w.Code != http.StatusCreated || h.n.Load() != 2 {
		t.Errorf("another key: status %d, runs %d, want 201, 2", w.Code, h.n.Load())
	}
}

// Requests without a key, or of other methods, pass through (a missing key
// is 400 with Required); a too long key is 400; a body beyond MaxBody is
// 413 and runs nothing.
func TestIdempotencyPassThroughAndLimits(t *testing.T) {
	c, rdb := newRedisson(t)
	h := &counting{}
	name := concName(t, rdb)
	mw := mustIdempotency(t, c, name, &IdempotencyOptions{MaxBody: 4}, h)
	serveReq(mw, idemReq("POST", "/", "", "b"))
	serveReq(mw, idemReq("POST", "/", "", "b"))
	serveReq(mw, idemReq("GET", "/", "k", ""))
	serveReq(mw, idemReq("GET", "/", "k", ""))
	if h.n.Load() != 4 {
		t.Errorf("runs %d, want 4 (no key, or GET)", h.n.Load())
	}
	if w := serveReq(mw, idemReq("POST", "/", strings.Repeat("k", 256), "")); w.Code != http.StatusBadRequest {
		t.Errorf("long key: status %d, want 400", w.Code)
	}
	w := serveReq(mw, idemReq("POST", "/", "k", "12345"))
	if w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), ErrIdempotencyBody.Error()) {
		t.Errorf("large body: status %d %q, want 413", w.Code, w.Body)
	}
	if h.n.Load() != 4 {
		t.Errorf("runs %d, want 4", h.n.Load())
	}
	req := mustIdempotency(t, c, name, &IdempotencyOptions{Required: true}, h)
	if w := serveReq(req, idemReq("POST", "/", "", "")); w.Code != http.StatusBadRequest {
		t.Errorf("Required, no key: status %d, want 400", w.Code)
	}
}

// A 5xx response is not stored (the retry runs the handler), unless
// StoreServerErrors; a response beyond MaxResponse is sent whole, not
// stored, and reported.
func TestIdempotencyServerErrorsAndLargeResponses(t *testing.T) {
	c, rdb := newRedisson(t)
	var runs atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		if r.URL.Path == "/big" {
			w.Write([]byte(strings.Repeat("x", 10)))
			w.Write([]byte(strings.Repeat("y", 10)))
			return
		}
		http.Error(w, "boom", http.StatusBadGateway)
	})
	var errs []error
	var mu sync.Mutex
	onErr := func(_ *http.Request, err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	name := concName(t, rdb)
	mw := mustIdempotency(t, c, name, &IdempotencyOptions{MaxResponse: 15, OnError: onErr}, h)
	for range 2 {
		if w := serveReq(mw, idemReq("POST", "/", "k", "")); w.Code != http.StatusBadGateway {
			t.Fatalf("status %d, want 502", w.Code)
		}
	}
	if runs.Load() != 2 {
		t.Errorf("runs %d after two 502s, want 2", runs.Load())
	}
	for range 2 {
		if w := serveReq(mw, idemReq("POST", "/big", "kb", "")); w.Body.Len() != 20 {
			t.Fatalf("large response: %d bytes, want 20", w.Body.Len())
		}
	}
	if runs.Load() != 4 || len(errs) != 2 || !errors.Is(errs[0], ErrIdempotencyResponse) {
		t.Errorf("runs %d, errors %v; want 4 runs and two ErrIdempotencyResponse", runs.Load(), errs)
	}
	store := mustIdempotency(t, c, name+"s", &IdempotencyOptions{StoreServerErrors: true}, h)
	serveReq(store, idemReq("POST", "/", "k", ""))
	serveReq(store, idemReq("POST", "/", "k", ""))
	if runs.Load() != 5 {
		t.Errorf("runs %d with StoreServerErrors, want 5", runs.Load())
	}
}

// Two scopes' equal keys are two records.
func TestIdempotencyScopes(t *testing.T) {
	c, rdb := newRedisson(t)
	h := &counting{}
	mw := mustIdempotency(t, c, concName(t, rdb), &IdempotencyOptions{Scope: func(r *http.Request) (string, error) {
		return r.Header.Get("Tenant"), nil
	}}, h)
	for _, tenant := range []string{"a", "b", "a", "b"} {
		r := idemReq("POST", "/", "k", "")
		r.Header.Set("Tenant", tenant)
		serveReq(mw, r)
	}
	if h.n.Load() != 2 {
		t.Errorf("runs %d, want 2 (one per tenant)", h.n.Load())
	}
}

// A request that finds its key running waits and gets the run's response;
// with Conflict it is answered 409 at once.
func TestIdempotencyConcurrentWaitsOrConflicts(t *testing.T) {
	c, rdb := newRedisson(t)
	g := newGated()
	name := concName(t, rdb)
	mw := mustIdempotency(t, c, name, nil, g)
	first := make(chan *httptest.ResponseRecorder, 1)
	go func() { first <- serveReq(mw, idemReq("POST", "/", "k", "")) }()
	select {
	case <-g.entered:
	case w := <-first:
		t.Fatalf("first request answered %d %q without running the handler", w.Code, w.Body)
	case <-waitFor(30000):
		t.Fatal("first request never ran the handler")
	}
	conflict := mustIdempotency(t, c, name, &IdempotencyOptions{Conflict: true}, g)
	if w := serveReq(conflict, idemReq("POST", "/", "k", "")); w.Code != http.StatusConflict {
		t.Errorf("Conflict: status %d, want 409", w.Code)
	}
	second := make(chan *httptest.ResponseRecorder, 1)
	go func() { second <- serveReq(mw, idemReq("POST", "/", "k", "")) }()
	select {
	case w := <-second:
		t.Fatalf("waiter answered %d before the run ended", w.Code)
	case <-time.After(200 * time.Millisecond):
	}
	close(g.release)
	a, b := <-first, <-second
	if d := same(a, b); d != "" || a.Body.String() != "ok" {
		t.Errorf("waiter: %s (first %d %q)", d, a.Code, a.Body)
	}
	if len(g.entered) != 0 {
		t.Errorf("handler entered %d more times", len(g.entered))
	}
}

// A replay is one round trip: one command (EVALSHA) sent to Redis.
func TestIdempotencyReplayOneRoundTrip(t *testing.T) {
	c, rdb := newRedisson(t)
	var cmds atomic.Int64
	rdb.AddHook(countHook{&cmds})
	h := &counting{}
	mw := mustIdempotency(t, c, concName(t, rdb), nil, h)
	serveReq(mw, idemReq("POST", "/", "k", "b"))
	for range 5 { // warm: scripts loaded, pub/sub mode known
		serveReq(mw, idemReq("POST", "/", "k", "b"))
	}
	cmds.Store(0)
	w := serveReq(mw, idemReq("POST", "/", "k", "b"))
	if w.Code != http.StatusCreated || cmds.Load() != 1 {
		t.Errorf("replay: status %d, %d commands, want 201 and 1", w.Code, cmds.Load())
	}
}

// Bad options are ErrInvalidOptions.
func TestIdempotencyOptionsInvalid(t *testing.T) {
	c, _ := newRedisson(t)
	for _, tc := range []struct {
		c    *redisson.Client
		name string
		o    IdempotencyOptions
	}{
		{nil, "n", IdempotencyOptions{}}, {c, "", IdempotencyOptions{}}, {c, "a{b}", IdempotencyOptions{}},
		{c, "n", IdempotencyOptions{Lease: time.Millisecond}}, {c, "n", IdempotencyOptions{Retention: time.Microsecond}},
		{c, "n", IdempotencyOptions{Wait: -1}}, {c, "n", IdempotencyOptions{MaxBody: -1}},
	} {
		if _, err := NewIdempotency(tc.c, tc.name, &tc.o); !errors.Is(err, ErrInvalidOptions) {
			t.Errorf("%q %+v: err %v, want ErrInvalidOptions", tc.name, tc.o, err)
		}
	}
}

// waitFor returns a channel closed after ms milliseconds.
func waitFor(ms int) <-chan time.Time { return time.After(time.Duration(ms) * time.Millisecond) }
