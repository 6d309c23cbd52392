package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The demo's handler limits / per client IP and leaves /healthz alone.
func TestHandler(t *testing.T) {
	for _, algo := range []string{"fixed", "gcra"} {
		t.Run(algo, func(t *testing.T) {
			rdb := redistest.Shared(t).Client(t)
			c, err := redisson.New(rdb, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			name := fmt.Sprintf("ratelimited-test:%s:%d", algo, time.Now().UnixNano())
			t.Cleanup(func() {
				for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
					rdb.Del(context.Background(), name+":{"+ip+"}")
				}
			})
			h, err := Handler(c, Config{Algo: algo, Limit: 3, Window: time.Hour, Name: name})
			if err != nil {
				t.Fatal(err)
			}
			get := func(path, remote string) int {
				r := httptest.NewRequest(http.MethodGet, path, nil)
				r.RemoteAddr = remote
				w := httptest.NewRecorder()
				h.ServeHTTP(w, r)
				return w.Code
			}
			for i := range 5 {
				want := http.StatusOK
				if i >= 3 {
					want = http.StatusTooManyRequests
				}
				if got := get("/", "192.0.2.1:1000"); got != want {
					t.Errorf("request %d: %d; want %d", i, got, want)
				}
			}
			if got := get("/healthz", "192.0.2.1:1000"); got != http.StatusOK {
				t.Errorf("/healthz over the limit: %d; want 200", got)
			}
			if got := get("/", "192.0.2.2:1000"); got != http.StatusOK {
				t.Errorf("another client: %d; want 200", got)
			}
		})
	}
	if _, err := Handler(nil, Config{Algo: "leaky"}); err == nil {
		t.Error("unknown algorithm accepted")
	}
}
