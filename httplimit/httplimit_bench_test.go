package httplimit

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// BenchmarkMiddleware measures requests/s through the middleware (fixed
// window, one of 1000 client IPs per request, every request allowed) from 1
// and 32 goroutines, on a private redis-server, and the Redis commands sent
// per request.
//
//	go test -run '^$' -bench Middleware ./httplimit
func BenchmarkMiddleware(b *testing.B) {
	for _, goroutines := range []int{1, 32} {
		b.Run(fmt.Sprintf("goroutines=%d", goroutines), func(b *testing.B) {
			rdb := redistest.Start(b).Client(b, func(o *redis.Options) { o.PoolSize = goroutines + 4 })
			var cmds atomic.Int64
			rdb.AddHook(countHook{&cmds})
			c, err := redisson.New(rdb, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { c.Close() })
			mw, err := New(c.GetFixedWindowLimiter("bench", 1<<40, time.Hour), nil)
			if err != nil {
				b.Fatal(err)
			}
			h := mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			reqs := make([]*http.Request, 1000)
			for i := range reqs {
				reqs[i] = httptest.NewRequest(http.MethodGet, "/", nil)
				reqs[i].RemoteAddr = "10.0." + strconv.Itoa(i/256) + "." + strconv.Itoa(i%256) + ":1234"
			}
			h.ServeHTTP(httptest.NewRecorder(), reqs[0]) // load the script, dial
			b.ReportAllocs()
			cmds0 := cmds.Load()
			var next, failed atomic.Int64
			b.ResetTimer()
			var wg sync.WaitGroup
			for range goroutines {
				wg.Go(func() {
					for {
						i := next.Add(1)
						if i > int64(b.N) {
							return
						}
						w := httptest.NewRecorder()
						h.ServeHTTP(w, reqs[i%int64(len(reqs))])
						if w.Code != http.StatusOK {
							failed.Add(1)
						}
					}
				})
			}
			wg.Wait()
			b.StopTimer()
			if failed.Load() > 0 {
				b.Fatalf("%d requests not answered 200", failed.Load())
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "requests/s")
			b.ReportMetric(float64(cmds.Load()-cmds0)/float64(b.N), "commands/op")
		})
	}
}

// countHook counts the commands a go-redis client sends, connection
// set-up (HELLO, CLIENT SETINFO) excluded.
type countHook struct{ n *atomic.Int64 }

func handshake(cmd redis.Cmder) bool { return cmd.Name() == "hello" || cmd.Name() == "client" }

func (h countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !handshake(cmd) {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (h countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if !handshake(cmd) {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// BenchmarkIdempotencyReplay measures replays (a stored 1 KiB response,
// one key) through NewIdempotency's middleware from one goroutine, on a
// private redis-server, and the Redis commands sent per replay.
//
//	go test -run '^$' -bench IdempotencyReplay ./httplimit
func BenchmarkIdempotencyReplay(b *testing.B) {
	rdb := redistest.Start(b).Client(b)
	var cmds atomic.Int64
	rdb.AddHook(countHook{&cmds})
	c, err := redisson.New(rdb, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	mw, err := NewIdempotency(c, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	body := make([]byte, 1024)
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(body) }))
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/orders", nil)
		r.Header.Set("Idempotency-Key", "k")
		return r
	}
	h.ServeHTTP(httptest.NewRecorder(), req()) // the run; scripts loaded
	b.ReportAllocs()
	cmds0 := cmds.Load()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req())
		if w.Code != http.StatusOK || w.Body.Len() != len(body) {
			b.Fatalf("replay: %d, %d bytes", w.Code, w.Body.Len())
		}
	}
	b.ReportMetric(float64(cmds.Load()-cmds0)/float64(b.N), "commands/op")
}
