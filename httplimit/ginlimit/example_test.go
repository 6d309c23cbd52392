package ginlimit_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/httplimit/ginlimit"
	"github.com/goredisson/redisson/redissontest"
	"github.com/redis/go-redis/v9"
)

// Limit every client IP to 3 requests per minute, in bursts of up to 3, on
// every route of a gin router; the handler reads the decision. (The example
// runs on an embedded Redis; in production Addr is your server's.)
func Example() {
	mr, err := redissontest.StartEmbedded()
	if err != nil {
		log.Fatal(err)
	}
	defer mr.Close()
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), DisableIdentity: true})
	defer rdb.Close()
	client, err := redisson.New(rdb, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	limit, err := ginlimit.New(client.GetGCRALimiter("gin-api", 3, time.Minute, 3), &httplimit.Options{Timeout: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	gin.SetMode(gin.ReleaseMode)
	router := gin.New()
	router.Use(limit)
	router.GET("/hello", func(c *gin.Context) {
		d, _ := httplimit.DecisionFrom(c.Request.Context())
		c.String(http.StatusOK, "hello, %d left", d.Remaining)
	})

	for range 4 {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		r.RemoteAddr = "192.0.2.1:4711"
		w := httptest.NewRecorder()
		router.ServeHTTP(w, r)
		fmt.Println(w.Code, strings.TrimSpace(w.Body.String()))
		if ra := w.Header().Get("Retry-After"); ra != "" {
			fmt.Println("Retry-After:", ra)
		}
	}
	// Output:
	// 200 hello, 2 left
	// 200 hello, 1 left
	// 200 hello, 0 left
	// 429 Too Many Requests
	// Retry-After: 20
}
