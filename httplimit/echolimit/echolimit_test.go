package echolimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/httplimit/echolimit"
	"github.com/goredisson/redisson/redissontest"
	"github.com/labstack/echo/v4"
)

// Two requests per minute per client IP pass with the RateLimit fields and
// the decision in the handler; the third is refused with 429 and
// Retry-After, the handler not run; another client is unaffected.
func TestEcho(t *testing.T) {
	_, rdb := redissontest.NewEmbedded(t)
	client, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	limit, err := echolimit.New(client.GetFixedWindowLimiter("echo", 2, time.Minute), &httplimit.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	e := echo.New()
	e.Use(limit)
	e.GET("/", func(c echo.Context) error {
		ran++
		d, ok := httplimit.DecisionFrom(c.Request().Context())
		if !ok {
			return c.String(http.StatusTeapot, "no decision")
		}
		return c.String(http.StatusOK, fmt.Sprintf("%d left", d.Remaining))
	})
	get := func(remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		return w
	}
	for i, want := range []string{"1 left", "0 left"} {
		w := get("192.0.2.1:1")
		if w.Code != http.StatusOK || w.Body.String() != want {
			t.Errorf("request %d: %d %q; want 200 %q", i, w.Code, w.Body.String(), want)
		}
		if w.Header().Get("RateLimit-Policy") != `"default";q=2;w=60` {
			t.Errorf("request %d: RateLimit-Policy %q", i, w.Header().Get("RateLimit-Policy"))
		}
	}
	w := get("192.0.2.1:1")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == "" {
		t.Errorf("3rd request: %d, Retry-After %q; want 429 with Retry-After", w.Code, w.Header().Get("Retry-After"))
	}
	if ran != 2 {
		t.Errorf("handler ran %d times; want 2 (not for the refused request)", ran)
	}
	if w := get("192.0.2.2:1"); w.Code != http.StatusOK {
		t.Errorf("another client: %d; want 200", w.Code)
	}
	if _, err := echolimit.New(nil, nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// Idempotency-Key middleware through echo.WrapMiddleware: what the echo
// handler writes is stored and replayed, the handler run once.
func TestEchoIdempotency(t *testing.T) {
	_, rdb := redissontest.NewEmbedded(t)
	client, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	idem, err := httplimit.NewIdempotency(client, "echo-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	e := echo.New()
	e.Use(echo.WrapMiddleware(idem))
	e.POST("/orders", func(c echo.Context) error {
		ran++
		c.Response().Header().Set("Location", "/orders/1")
		return c.String(http.StatusCreated, fmt.Sprintf("order %d", ran))
	})
	for i := range 3 {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		r.Header.Set("Idempotency-Key", "k")
		w := httptest.NewRecorder()
		e.ServeHTTP(w, r)
		if w.Code != http.StatusCreated || w.Body.String() != "order 1" || w.Header().Get("Location") != "/orders/1" {
			t.Errorf("request %d: %d %q %v, want 201 \"order 1\" with Location", i, w.Code, w.Body, w.Header())
		}
	}
	if ran != 1 {
		t.Errorf("handler ran %d times, want 1", ran)
	}
}
