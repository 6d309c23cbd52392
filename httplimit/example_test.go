package httplimit_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
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
