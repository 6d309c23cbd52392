package redissontest_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/redissontest"
)

// refund is the handler under test: one refund per order at a time, across
// every instance of the service.
func refund(client *redisson.Client) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lock := client.GetLock("refund:" + r.PathValue("order"))
		ok, err := lock.TryLock(r.Context(), 0, 0)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		if !ok {
			http.Error(w, "refund in progress", http.StatusConflict)
			return
		}
		defer lock.Unlock(r.Context())
		fmt.Fprintln(w, "refunded")
	})
}

// A unit test of a handler that takes a lock. Another instance holds the
// order's lock with a short lease and dies; the handler answers 409 until
// the lease runs out on the embedded Redis, in real time, then 200. In a
// test function, redissontest.NewEmbedded(t) does the set-up and clean-up.
func Example_lock() {
	srv, err := redissontest.StartEmbedded()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	rdb := srv.NewClient()
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	mux := http.NewServeMux()
	mux.Handle("POST /orders/{order}/refund", refund(client))
	post := func() {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/orders/42/refund", nil))
		fmt.Print(w.Code, " ", w.Body.String())
	}

	// The crashed instance: its own client, a lock with a 100ms lease.
	crashedRDB := srv.NewClient()
	defer crashedRDB.Close()
	crashed, err := redisson.New(crashedRDB, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer crashed.Close()
	if _, err := crashed.GetLock("refund:42").TryLock(context.Background(), 0, 100*time.Millisecond); err != nil {
		log.Fatal(err)
	}

	post()
	time.Sleep(300 * time.Millisecond) // the lease runs out
	post()
	// Output:
	// 409 refund in progress
	// 200 refunded
}

// A unit test of a rate-limited handler: two requests per second per
// client IP; the third is refused, and after the window has passed in real
// time the client is served again.
func Example_rateLimit() {
	srv, err := redissontest.StartEmbedded()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	rdb := srv.NewClient()
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	limit, err := httplimit.New(client.GetFixedWindowLimiter("api", 2, time.Second), nil)
	if err != nil {
		log.Fatal(err)
	}
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))
	get := func() {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:4711"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", w.Body.String())
	}

	get()
	get()
	get()
	time.Sleep(1500 * time.Millisecond) // the window ends
	get()
	// Output:
	// 200 hello
	// 200 hello
	// 429 Too Many Requests
	// 200 hello
}
