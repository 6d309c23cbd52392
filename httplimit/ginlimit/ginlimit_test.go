package ginlimit_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/httplimit/ginlimit"
	"github.com/goredisson/redisson/redissontest"
)

// Two requests per minute per client IP pass with the RateLimit fields and
// the decision in the handler; the third is refused with 429 and
// Retry-After, the handler not run; another client is unaffected.
func TestGin(t *testing.T) {
	gin.SetMode(gin.TestMode)
	_, rdb := redissontest.NewEmbedded(t)
	client, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	limit, err := ginlimit.New(client.GetFixedWindowLimiter("gin", 2, time.Minute), &httplimit.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	router := gin.New()
	router.Use(limit)
	router.GET("/", func(c *gin.Context) {
		ran++
		d, ok := httplimit.DecisionFrom(c.Request.Context())
		if !ok {
			c.String(http.StatusTeapot, "no decision")
			return
		}
		c.String(http.StatusOK, "%d left", d.Remaining)
	})
	get := func(remote string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		router.ServeHTTP(w, r)
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
	if _, err := ginlimit.New(nil, nil); err == nil {
		t.Error("New(nil) succeeded")
	}
}

// Idempotency-Key middleware through Wrap: what the gin handler writes is
// what is stored and replayed (status, header, body), the handler run
// once; a request that passes through untouched (no key) still writes to
// the client.
func TestGinIdempotency(t *testing.T) {
	gin.SetMode(gin.TestMode)
	_, rdb := redissontest.NewEmbedded(t)
	client, err := redisson.New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	idem, err := httplimit.NewIdempotency(client, "gin-orders", nil)
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	router := gin.New()
	router.Use(ginlimit.Wrap(idem))
	router.POST("/orders", func(c *gin.Context) {
		ran++
		c.Header("Location", "/orders/1")
		c.String(http.StatusCreated, "order %d", ran)
	})
	post := func(key string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		w := httptest.NewRecorder()
		router.ServeHTTP(w, r)
		return w
	}
	for i := range 3 {
		w := post("k")
		if w.Code != http.StatusCreated || w.Body.String() != "order 1" || w.Header().Get("Location") != "/orders/1" {
			t.Errorf("request %d: %d %q %v, want 201 \"order 1\" with Location", i, w.Code, w.Body, w.Header())
		}
	}
	if w := post(""); w.Code != http.StatusCreated || w.Body.String() != "order 2" {
		t.Errorf("without a key: %d %q, want 201 \"order 2\"", w.Code, w.Body)
	}
	if ran != 2 {
		t.Errorf("handler ran %d times, want 2", ran)
	}
}
