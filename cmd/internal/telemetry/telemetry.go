// Package telemetry serves the demos' -metrics endpoint: the metrics of a
// redissonotel.Observer in Prometheus text format, on a listener of its own.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/goredisson/redisson/redissonotel"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Server serves GET /metrics. Its Observer feeds it; set it in
// redisson.Options.Observer and register the clients whose gauges it
// should report (Observer.RegisterClient).
type Server struct {
	Observer *redissonotel.Observer
	addr     net.Addr
	mp       *sdkmetric.MeterProvider
	srv      *http.Server
	wg       sync.WaitGroup
}

// Start listens on addr ("host:port"; port 0 picks a free one) and serves
// the Observer's metrics at /metrics until Close. The metric names are
// Prometheus-style: dots become underscores, a unit suffix (_seconds) and
// _total on counters are added.
func Start(addr string) (*Server, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s := &Server{addr: ln.Addr(), mp: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))}
	s.Observer = redissonotel.NewObserver(redissonotel.WithMeterProvider(s.mp))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	s.wg.Go(func() {
		if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "metrics: serve:", err)
		}
	})
	return s, nil
}

// URL returns the address of the metrics page.
func (s *Server) URL() string { return "http://" + s.addr.String() + "/metrics" }

// Close stops serving (requests in flight get a second to finish) and
// shuts the meter provider down.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.srv.Close()
	}
	s.wg.Wait()
	return s.mp.Shutdown(context.Background())
}
