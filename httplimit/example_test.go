package httplimit_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/redis/go-redis/v9"
)

// Limit every client IP to 3 requests per minute, in bursts of up to 3: one
// request is regained every 20 seconds. (The example runs on an embedded
// miniredis; use a real Redis server in production.)
func Example() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	limit, err := httplimit.New(client.GetGCRALimiter("api", 3, time.Minute, 3), &httplimit.Options{
		PolicyName: "per-ip",
		Timeout:    time.Second, // a Redis call slower than this fails open
	})
	if err != nil {
		log.Fatal(err)
	}
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	})
	h := limit(hello)

	for range 4 {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.RemoteAddr = "192.0.2.1:4711"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(w.Code, w.Header().Get("RateLimit-Policy"), w.Header().Get("RateLimit"))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Println("Retry-After:", ra)
		}
	}
	// Output:
	// 200 "per-ip";q=3;w=60 "per-ip";r=2;t=20
	// 200 "per-ip";q=3;w=60 "per-ip";r=1;t=40
	// 200 "per-ip";q=3;w=60 "per-ip";r=0;t=60
	// 429 "per-ip";q=3;w=60 "per-ip";r=0;t=20
	// Retry-After: 20
}

// The middleware has net/http's shape, func(http.Handler) http.Handler,
// which routers built on net/http take as they are. With chi:
//
//	r := chi.NewRouter()
//	r.Use(limit)                        // every route
//	r.With(limit).Post("/login", login) // one route
//
// Here the same with a ServeMux: /login limited, /healthz not. The limiter
// has its own go-redis client, whose short timeouts bound what a Redis
// outage costs each request (see the package documentation).
func Example_router() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	limitRDB := redis.NewClient(&redis.Options{
		Addr:                  mr.Addr(),
		DialTimeout:           50 * time.Millisecond,
		ReadTimeout:           50 * time.Millisecond,
		WriteTimeout:          50 * time.Millisecond,
		PoolTimeout:           50 * time.Millisecond,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
	})
	defer limitRDB.Close()
	limits, err := redisson.New(limitRDB, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer limits.Close()

	limit, err := httplimit.New(limits.GetFixedWindowLimiter("login", 1, time.Minute), &httplimit.Options{Timeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	ok := func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") }
	mux := http.NewServeMux()
	mux.Handle("POST /login", limit(http.HandlerFunc(ok)))
	mux.HandleFunc("GET /healthz", ok)

	for _, req := range []string{"POST /login", "POST /login", "GET /healthz"} {
		method, path, _ := strings.Cut(req, " ")
		r := httptest.NewRequest(method, path, nil)
		r.RemoteAddr = "192.0.2.1:4711"
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, r)
		fmt.Println(req, w.Code)
	}
	// Output:
	// POST /login 200
	// POST /login 429
	// GET /healthz 200
}

// At most 2 requests per API key in flight at once, across every instance
// of the service: a third concurrent request is refused with 503 and
// Retry-After. A permit's lease (renewed while the request runs) bounds
// how long the permits of a crashed instance stay taken.
func ExampleNewConcurrency() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	limit, err := httplimit.NewConcurrency(client, "reports", 2, &httplimit.ConcurrencyOptions{
		Key:   func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil },
		Lease: 30 * time.Second,
		// A Redis call slower than Timeout refuses the request: a limit
		// that protects a backend should not let extra requests through.
		Timeout:    time.Second,
		FailClosed: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	running, release := make(chan struct{}), make(chan struct{})
	report := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running <- struct{}{}
		<-release // a slow report
	})
	h := limit(report)
	request := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/report", nil)
		r.Header.Set("X-API-Key", "k-1")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- request().Code }()
		<-running
	}
	w := request() // a third one while two run
	fmt.Println(w.Code, "Retry-After:", w.Header().Get("Retry-After"))
	close(release)
	fmt.Println(<-done, <-done)
	// Output:
	// 503 Retry-After: 1
	// 200 200
}

// Make POST /orders idempotent per Idempotency-Key and API key: a client
// that retries after a lost response gets the first response back (the
// handler ran once), and a key reused for another order is refused.
func ExampleNewIdempotency() {
	mr, err := miniredis.Run()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	idem, err := httplimit.NewIdempotency(client, "orders", &httplimit.IdempotencyOptions{
		Scope:     func(r *http.Request) (string, error) { return r.Header.Get("X-API-Key"), nil },
		Retention: 24 * time.Hour,
	})
	if err != nil {
		log.Fatal(err)
	}
	orders := 0
	h := idem(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		orders++
		w.Header().Set("Location", fmt.Sprintf("/orders/%d", orders))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "order %d\n", orders)
	}))
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodPost, "/orders", strings.NewReader(body))
		r.Header.Set("X-API-Key", "k-1")
		r.Header.Set("Idempotency-Key", `"8e03978e-40d5-43e8-bc93-6894a57f9324"`)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	for range 2 { // the second is a retry: replayed
		w := post(`{"item":42}`)
		fmt.Print(w.Code, " ", w.Header().Get("Location"), " ", w.Body)
	}
	fmt.Println(post(`{"item":7}`).Code, "orders made:", orders)
	// Output:
	// 201 /orders/1 order 1
	// 201 /orders/1 order 1
	// 422 orders made: 1
}
