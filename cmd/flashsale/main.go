// Command flashsale is a demo of redisson.Lock: a flash sale in which many
// concurrent buyers, spread over several simulated service instances, race to
// buy one product whose stock lives in Redis.
//
// Each instance has its own go-redis client and its own redisson.Client. A
// purchase takes the distributed lock "product:<id>", reads the stock key
// flashsale:stock:<id>, checks it is positive, runs a simulated business step
// (-work), writes stock-1, records the order (INCR flashsale:sold:<id>) and
// unlocks. With redisson (the default) the stock can never be oversold: the
// lock is held by exactly one buyer at a time and its lease is renewed by the
// watchdog for as long as the business step takes.
//
// With -naive the same sale uses the usual hand-written lock instead:
// SET key <random> NX PX <lease>, a business step longer than the lease and a
// plain DEL without owner check. The lease expires mid-purchase, a second
// buyer enters, both read the same stock, and the stock is oversold; the
// summary says by how much and why.
//
// By default the program runs against an embedded miniredis, so
//
//	cd cmd && go run ./flashsale
//	cd cmd && go run ./flashsale -naive
//
// need no Redis server. -redis host:port uses a real server instead; the
// sale's keys use a unique product id and are deleted at the end.
//
// -metrics :9090 serves the redisson metrics (redissonotel's instruments,
// through OpenTelemetry's Prometheus exporter) at http://localhost:9090/metrics
// while the sale runs, and after the summary until ^C.
//
// A progress bar is drawn on stderr (redrawn live on a terminal; one line at
// the end when stderr is a file or a pipe) and a summary printed on stdout:
// units sold, stock left, oversold, orders/s, lock wait p50/p99, duration.
// The exit status is 0 when nothing was oversold (locked mode) and always 0 in
// -naive mode, where overselling is the expected outcome; it is 1 when the
// locked sale oversold or did not sell out within -duration, 2 on errors.
// SIGINT stops the buyers and prints the summary so far.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"time"

	"github.com/goredisson/redisson/cmd/internal/telemetry"
	"github.com/goredisson/redisson/redissontest"
	"github.com/redis/go-redis/v9"
)

func main() { os.Exit(run()) }

func run() int {
	var cfg Config
	addr := flag.String("redis", "", "`host:port` of a real Redis server (default: embedded miniredis)")
	flag.CommandLine.Init("flashsale", flag.ContinueOnError)
	flag.IntVar(&cfg.Stock, "stock", 0, "initial stock (default 1000, or 50 with -naive)")
	flag.IntVar(&cfg.Buyers, "buyers", 0, "concurrent buyer goroutines in total (default 200, or 50 with -naive)")
	flag.IntVar(&cfg.Instances, "instances", 4, "simulated service instances, each with its own Redis and redisson client")
	flag.DurationVar(&cfg.Work, "work", time.Millisecond, "simulated business step while holding the lock")
	flag.DurationVar(&cfg.LockWait, "lock-wait", 10*time.Second, "TryLock wait per attempt (a timed-out attempt is retried)")
	flag.DurationVar(&cfg.Watchdog, "watchdog", 0, "redisson lock watchdog timeout (default: the library's, 30s)")
	flag.BoolVar(&cfg.Naive, "naive", false, "use a hand-written SET NX PX lock with no owner check and no renewal, whose\n"+
		"lease is shorter than the business step: this is EXPECTED TO OVERSELL, and the\n"+
		"exit status is 0 in this mode even when it does")
	flag.DurationVar(&cfg.NaiveLease, "naive-lease", 50*time.Millisecond, "lease (PX) of the naive lock")
	flag.DurationVar(&cfg.NaiveWork, "naive-work", 80*time.Millisecond, "business step in -naive mode (longer than -naive-lease)")
	flag.DurationVar(&cfg.Duration, "duration", 2*time.Minute, "stop the sale after this long whatever happens")
	quiet := flag.Bool("q", false, "no progress bar")
	metricsAddr := flag.String("metrics", "", "serve the redisson metrics in Prometheus text format at http://`addr`/metrics\n"+
		"(such as :9090) during the sale, and after it until ^C")
	// Errors print one line naming the flag; only -h prints the flags.
	flag.CommandLine.SetOutput(io.Discard)
	if err := flag.CommandLine.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			flag.CommandLine.SetOutput(os.Stderr)
			fmt.Fprintln(os.Stderr, "Usage of flashsale:")
			flag.PrintDefaults()
			return 0
		}
		fmt.Fprintf(os.Stderr, "flashsale: %v (flashsale -h lists the flags)\n", err)
		return 2
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "flashsale: unexpected argument %q (flashsale -h lists the flags)\n", flag.Arg(0))
		return 2
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"stock", &cfg.Stock, 1000}, {"buyers", &cfg.Buyers, 200}, {"instances", &cfg.Instances, 4}} {
		switch {
		case !set[f.name] && cfg.Naive && f.name != "instances":
			*f.v = 50
		case !set[f.name]:
			*f.v = f.def
		case *f.v < 1:
			fmt.Fprintf(os.Stderr, "flashsale: -%s %d: must be at least 1\n", f.name, *f.v)
			return 2
		}
	}
	cfg.ProductID = strconv.FormatInt(time.Now().UnixNano(), 36)
	if !*quiet {
		cfg.Progress, cfg.Live = os.Stderr, isTerminal(os.Stderr)
	}

	backend := "redis " + *addr
	if *addr == "" {
		mr, err := redissontest.StartEmbedded()
		if err != nil {
			fmt.Fprintln(os.Stderr, "flashsale: miniredis:", err)
			return 2
		}
		defer mr.Close()
		*addr, backend = mr.Addr(), "embedded miniredis"
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	context.AfterFunc(ctx, stop) // a second ^C kills the program
	var metrics *telemetry.Server
	if *metricsAddr != "" {
		var err error
		if metrics, err = telemetry.Start(*metricsAddr); err != nil {
			fmt.Fprintln(os.Stderr, "flashsale:", err)
			return 2
		}
		defer metrics.Close()
		cfg.Observer = metrics.Observer
		fmt.Printf("metrics: %s\n", metrics.URL())
	}
	mode := "locked (redisson.Lock, watchdog lease)"
	if cfg.Naive {
		mode = fmt.Sprintf("NAIVE (SET NX PX %v, %v business step, plain DEL)", cfg.NaiveLease, cfg.NaiveWork)
	}
	fmt.Printf("flash sale: product %s, stock %d, %d instances, %d buyers, %s, %s\n",
		cfg.ProductID, cfg.Stock, cfg.Instances, cfg.Buyers, mode, backend)

	r, err := Run(ctx, cfg, clientFactory(*addr, cfg))
	if err != nil {
		fmt.Fprintln(os.Stderr, "flashsale:", err)
		return 2
	}
	printSummary(cfg, r)
	if metrics != nil && ctx.Err() == nil {
		fmt.Printf("metrics: the sale is over; still serving %s until ^C\n", metrics.URL())
		<-ctx.Done()
	}
	switch {
	case cfg.Naive:
		return 0
	case !r.OK():
		return 1
	case r.Stopped == "time limit":
		fmt.Printf("FAILED: the stock was not sold out within -duration %v\n", cfg.Duration)
		return 1
	}
	return 0
}

// isTerminal reports whether f is a terminal (a character device), where
// the progress bar can be redrawn in place.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// clientFactory returns a go-redis client factory for addr with a pool big
// enough for one instance's buyers.
func clientFactory(addr string, cfg Config) func() redis.UniversalClient {
	pool := cfg.Buyers/max(cfg.Instances, 1) + 10
	return func() redis.UniversalClient {
		return redis.NewClient(&redis.Options{Addr: addr, PoolSize: pool, DisableIdentity: true})
	}
}

func printSummary(cfg Config, r *Result) {
	rate := float64(r.Sold) / max(r.Duration.Seconds(), 1e-9)
	fmt.Println()
	if r.Stopped != "" {
		fmt.Printf("sale stopped early (%s): partial results\n", r.Stopped)
	}
	fmt.Printf("  sold          %d (per instance %v)\n", r.Sold, r.PerInstance)
	fmt.Printf("  left          %d\n", r.Left)
	fmt.Printf("  oversold      %d\n", r.Oversold)
	fmt.Printf("  lost updates  %d (sold + left - stock)\n", r.LostUpdates)
	fmt.Printf("  double-sold   %d (orders for a unit already sold)\n", r.DoubleSold)
	fmt.Printf("  orders/s      %.0f\n", rate)
	fmt.Printf("  lock wait     p50 %v  p99 %v  max %v  (%d acquisitions)\n",
		r.WaitP50.Round(time.Microsecond), r.WaitP99.Round(time.Microsecond), r.WaitMax.Round(time.Microsecond), r.Acquisitions)
	if extra := int64(r.Acquisitions) - r.Sold; extra > 0 {
		// Every buyer checks the stock once more under the lock before it
		// stops, so each buyer still running at the end takes the lock once
		// to find it sold out.
		fmt.Printf("                %d acquisitions sold a unit; %d found the stock already sold out (each buyer's last look, under the lock)\n",
			r.Sold, extra)
	}
	if r.LockTimeouts > 0 {
		fmt.Printf("  lock timeouts %d (TryLock waited %v, retried)\n", r.LockTimeouts, cfg.LockWait)
	}
	if r.Errors > 0 {
		fmt.Printf("  errors        %d (first: %s)\n", r.Errors, r.FirstError)
	}
	if r.Sold != r.LocalOrders {
		fmt.Printf("  WARNING: Redis order counter %d != instances' local counters %d\n", r.Sold, r.LocalOrders)
	}
	fmt.Printf("  duration      %v\n", r.Duration.Round(time.Millisecond))
	fmt.Println()
	switch {
	case r.OK():
		fmt.Println("OK: nothing oversold, every order matched by exactly one stock decrement")
	case cfg.Naive:
		// On a partial run (stock left) the lost updates are the units sold twice so far.
		fmt.Printf("OVERSOLD by %d (%d lost stock updates): the %v lease expired during the %v business step, so a second buyer "+
			"took the lock while the first still worked, both sold the same unit, and the first buyer's unconditional DEL "+
			"then released the second buyer's lock too\n", max(r.Oversold, r.LostUpdates), r.LostUpdates, cfg.NaiveLease, cfg.NaiveWork)
	default:
		fmt.Printf("FAILED: OVERSOLD by %d (%d lost stock updates) despite the redisson lock\n", max(r.Oversold, r.LostUpdates), r.LostUpdates)
	}
}
