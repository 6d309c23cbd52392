// Command ratelimited is a demo HTTP server whose requests are limited per
// client IP by the httplimit middleware over a redisson keyed limiter.
//
//	cd cmd
//	go run ./ratelimited                       # serve on :8080, embedded miniredis
//	go run ./ratelimited -algo gcra -limit 5 -window 10s -burst 3
//	go run ./ratelimited -redis 127.0.0.1:6379 # a real Redis server
//	go run ./ratelimited -demo 24              # 24 requests to itself (12 per client: 2 refused each), then exit
//	go run ./ratelimited -metrics :9090        # and the redisson metrics at http://localhost:9090/metrics
//
// Then curl -i localhost:8080/ and watch the RateLimit-Policy, RateLimit
// and, once over the limit, Retry-After fields. /healthz is not limited.
// Behind a reverse proxy, name it with -trust 10.0.0.0/8 so that its
// X-Forwarded-For is used (a bare address, -trust 10.0.0.7, means that
// one host); -fail-closed answers 503 instead of serving
// without limit when Redis is unreachable.
//
// With -demo N the server listens on a free local port, sends N requests
// to itself from two simulated clients (announced through X-Forwarded-For
// by a trusted local proxy), prints each answer and a summary, and exits
// with status 0 when every client got exactly its allowance, 1 otherwise.
// With the default 10 requests per minute, -demo 24 shows both clients'
// last two requests refused with 429.
//
// The server stops gracefully on SIGINT (^C) or SIGTERM (docker stop,
// Kubernetes): it stops accepting, lets requests in flight finish (up to
// 10 s), then exits with status 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/cmd/internal/telemetry"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/redissontest"
	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(run()) }

// Config is the server's configuration.
type Config struct {
	Algo       string // "fixed" or "gcra"
	Limit      int64
	Window     time.Duration
	Burst      int64 // gcra only; 0 means Limit
	Name       string
	Trusted    []netip.Prefix
	FailClosed bool
	Timeout    time.Duration // bound on each decision; 0 means httplimit.DefaultTimeout
}

func run() int {
	var cfg Config
	addr := flag.String("addr", ":8080", "listen `address`")
	redisAddr := flag.String("redis", "", "`host:port` of a real Redis server (default: embedded miniredis)")
	flag.StringVar(&cfg.Algo, "algo", "fixed", "limiter: fixed (fixed window) or gcra (steady rate with bursts)")
	flag.Int64Var(&cfg.Limit, "limit", 10, "requests per window per client IP (gcra: the rate)")
	flag.DurationVar(&cfg.Window, "window", time.Minute, "window (gcra: the period of the rate)")
	flag.Int64Var(&cfg.Burst, "burst", 0, "gcra burst (default: -limit)")
	flag.StringVar(&cfg.Name, "name", "ratelimited", "limiter name, the prefix of its Redis keys")
	trust := flag.String("trust", "", "comma-separated `networks` or addresses of trusted reverse proxies")
	flag.DurationVar(&cfg.Timeout, "timeout", httplimit.DefaultTimeout, "bound on each rate-limit decision; past it the request is served (or refused with -fail-closed)")
	flag.BoolVar(&cfg.FailClosed, "fail-closed", false, "answer 503 when Redis is unreachable (default: serve without limit)")
	demo := flag.Int("demo", 0, "send `N` requests to the server from two clients, print the answers and exit")
	metricsAddr := flag.String("metrics", "", "serve the redisson metrics in Prometheus text format at http://`addr`/metrics (such as :9090)")
	flag.Parse()
	if flag.NArg() > 0 {
		flag.Usage()
		return 2
	}
	trusted, err := httplimit.ParseTrusted(*trust)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelimited: -trust:", err)
		return 2
	}
	cfg.Trusted = trusted

	backend := "redis " + *redisAddr
	if *redisAddr == "" {
		mr, err := redissontest.StartEmbedded()
		if err != nil {
			fmt.Fprintln(os.Stderr, "ratelimited: miniredis:", err)
			return 2
		}
		defer mr.Close()
		*redisAddr, backend = mr.Addr(), "embedded miniredis"
	}
	rdb := redis.NewClient(&redis.Options{Addr: *redisAddr, DisableIdentity: true})
	defer rdb.Close()
	var opts redisson.Options
	var metrics *telemetry.Server
	if *metricsAddr != "" {
		if metrics, err = telemetry.Start(*metricsAddr); err != nil {
			fmt.Fprintln(os.Stderr, "ratelimited:", err)
			return 2
		}
		defer metrics.Close() // after client.Close: the client reports to it until then
		opts.Observer = metrics.Observer
	}
	client, err := redisson.New(rdb, &opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelimited:", err)
		return 2
	}
	defer client.Close()
	if metrics != nil {
		defer metrics.Observer.RegisterClient(client)()
	}

	if *demo > 0 {
		*addr = "127.0.0.1:0"
		cfg.Trusted = append(cfg.Trusted, netip.MustParsePrefix("127.0.0.0/8"))
		cfg.Name += ":" + fmt.Sprint(time.Now().UnixNano()) // fresh identities on a real server
	}
	h, err := Handler(client, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelimited:", err)
		return 2
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratelimited:", err)
		return 2
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("ratelimited: serve", "err", err)
		}
	})
	defer wg.Wait()
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			srv.Close()
		}
	}()
	// Listen for the signals before announcing the address, so that a
	// signal sent as soon as the address is known stops the server
	// gracefully too.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	l := limiter(client, cfg)
	p := l.Policy()
	fmt.Printf("ratelimited: http://%s/ — %s limiter %q: %d per %v, burst %d, per client IP; %s\n",
		ln.Addr(), cfg.Algo, p.Name, p.Limit, p.Window, p.Burst, backend)
	if metrics != nil {
		fmt.Printf("ratelimited: metrics at %s\n", metrics.URL())
	}

	if *demo > 0 {
		return runDemo("http://"+ln.Addr().String()+"/", *demo, p.Burst)
	}
	<-ctx.Done()
	stop() // a second signal kills the program
	fmt.Println("ratelimited: shutting down")
	return 0
}

// shutdownGrace is how long requests in flight may take to finish after
// SIGINT or SIGTERM.
const shutdownGrace = 10 * time.Second

// limiter returns the keyed limiter cfg describes.
func limiter(c *redisson.Client, cfg Config) redisson.KeyedLimiter {
	if cfg.Algo == "gcra" {
		burst := cfg.Burst
		if burst == 0 {
			burst = cfg.Limit
		}
		return c.GetGCRALimiter(cfg.Name, cfg.Limit, cfg.Window, burst)
	}
	return c.GetFixedWindowLimiter(cfg.Name, cfg.Limit, cfg.Window)
}

// Handler returns the demo's routes: / limited per client IP, /healthz not
// limited.
func Handler(c *redisson.Client, cfg Config) (http.Handler, error) {
	if cfg.Algo != "fixed" && cfg.Algo != "gcra" {
		return nil, fmt.Errorf("unknown -algo %q (fixed or gcra)", cfg.Algo)
	}
	limit, err := httplimit.New(limiter(c, cfg), &httplimit.Options{
		TrustedProxies: cfg.Trusted,
		FailClosed:     cfg.FailClosed,
		Timeout:        cfg.Timeout,
		PolicyName:     "per-ip",
		Skip:           func(r *http.Request) bool { return r.URL.Path == "/healthz" },
	})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		d, _ := httplimit.DecisionFrom(r.Context())
		fmt.Fprintf(w, "hello; %d requests left\n", d.Remaining)
	})
	return limit(mux), nil
}

// runDemo sends n requests, alternating two clients, and reports whether
// each got exactly its allowance (min(its requests, burst)).
func runDemo(url string, n int, burst int64) int {
	clients := []string{"198.51.100.1", "198.51.100.2"}
	ok := map[string]int64{}
	sent := map[string]int64{}
	for i := range n {
		ip := clients[i%len(clients)]
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ratelimited:", err)
			return 2
		}
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Fprintln(os.Stderr, "ratelimited:", err)
			return 2
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		sent[ip]++
		if resp.StatusCode == http.StatusOK {
			ok[ip]++
		}
		line := fmt.Sprintf("%-13s %d  RateLimit: %s", ip, resp.StatusCode, resp.Header.Get("RateLimit"))
		if ra := resp.Header.Get("Retry-After"); ra != "" {
			line += "  Retry-After: " + ra
		}
		fmt.Println(line)
	}
	status := 0
	for _, ip := range clients {
		want := min(sent[ip], burst)
		fmt.Printf("%s: %d of %d allowed (want %d)\n", ip, ok[ip], sent[ip], want)
		if ok[ip] != want {
			status = 1
		}
	}
	return status
}
