package httplimit

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/redis/go-redis/v9"
)

// answerBound is how long a request may take with Redis down: Timeout is
// 50ms; the bound is generous for a loaded machine, and far below the
// ~1.7s go-redis's dial retries took before Timeout existed.
const answerBound = time.Second

// hungRedis returns the address of a server that accepts connections and
// never answers, closed with the test.
func hungRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// With Redis unreachable (a refused port, with go-redis's default options
// and their dial retries) or hung (accepting and never answering), fail
// open and fail closed both answer within the bound, and OnError receives
// an error wrapping context.DeadlineExceeded or the dial error.
func TestRedisDownAnswersFast(t *testing.T) {
	for _, dead := range []struct {
		what string
		opts func(t *testing.T) *redis.Options
	}{
		{"refused 127.0.0.1:1", func(*testing.T) *redis.Options { return &redis.Options{Addr: "127.0.0.1:1"} }},
		{"hung", func(t *testing.T) *redis.Options {
			return &redis.Options{Addr: hungRedis(t), ContextTimeoutEnabled: true}
		}},
	} {
		for _, closed := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/failclosed=%v", dead.what, closed), func(t *testing.T) {
				rdb := redis.NewClient(dead.opts(t))
				defer rdb.Close()
				c, err := redisson.New(rdb, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var errs atomic.Int32
				var last atomic.Pointer[error]
				h := mustNew(t, c.GetGCRALimiter("down", 5, time.Minute, 5), &Options{
					Timeout:    DefaultTimeout, // the bound under test
					FailClosed: closed,
					OnError: func(_ *http.Request, err error) {
						errs.Add(1)
						last.Store(&err)
					},
				})
				want := http.StatusTeapot // the handler, without a decision
				if closed {
					want = http.StatusServiceUnavailable
				}
				for i := range 3 {
					start := time.Now()
					w := serve(h, "192.0.2.1:1")
					took := time.Since(start)
					if w.Code != want {
						t.Errorf("request %d: status %d; want %d", i, w.Code, want)
					}
					if took > answerBound {
						t.Errorf("request %d answered after %v; want under %v", i, took, answerBound)
					}
				}
				if errs.Load() != 3 {
					t.Errorf("OnError called %d times; want 3", errs.Load())
				}
				if p := last.Load(); p != nil && dead.what == "hung" && !errors.Is(*p, context.DeadlineExceeded) {
					t.Errorf("hung Redis: OnError got %v; want context.DeadlineExceeded", *p)
				}
			})
		}
	}
}
