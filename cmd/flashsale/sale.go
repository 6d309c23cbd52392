package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/redissonotel"
	"github.com/redis/go-redis/v9"
)

// Config describes one flash sale.
type Config struct {
	ProductID string        // product id, part of every key; must be unique per run on a shared server
	Stock     int           // initial stock
	Instances int           // simulated service instances (one go-redis + one redisson client each)
	Buyers    int           // buyer goroutines in total, spread round-robin over the instances
	Work      time.Duration // simulated business step inside the lock (locked mode)
	LockWait  time.Duration // TryLock wait per attempt (locked mode); a timed-out attempt is retried
	Watchdog  time.Duration // redisson.Options.WatchdogTimeout; 0 = library default

	Observer *redissonotel.Observer // observes every instance's redisson client (and reads its Stats); nil = none

	Naive      bool          // use the hand-written SET NX PX lock instead of redisson
	NaiveLease time.Duration // PX of the naive lock
	NaiveWork  time.Duration // business step of the naive mode (meant to outlast NaiveLease)

	Duration time.Duration // hard cap for the whole sale; 0 = none
	Progress io.Writer     // progress bar; nil = none
	Live     bool          // redraw Progress ~10x/s with \r (a terminal); false: one line at the end
}

// Result is what a sale did. Counters come from Redis (Sold, Left) and from
// the instances' local counters (LocalOrders).
type Result struct {
	Sold         int64 // orders recorded in Redis (INCR flashsale:sold:<id>)
	LocalOrders  int64 // orders counted locally by the instances
	Left         int64 // final value of flashsale:stock:<id>
	Oversold     int64 // max(Sold-Stock, 0)
	LostUpdates  int64 // Sold+Left-Stock: orders whose stock decrement was overwritten
	DoubleSold   int64 // orders for a stock unit that an earlier order had already taken
	LockTimeouts int64 // TryLock attempts that gave up after LockWait (retried)
	Errors       int64 // Redis/lock errors during the sale (see FirstError)
	FirstError   string
	PerInstance  []int64 // local orders per instance

	Acquisitions int           // lock acquisitions measured
	WaitP50      time.Duration // lock wait percentiles (ask -> hold)
	WaitP99      time.Duration
	WaitMax      time.Duration

	Duration time.Duration
	Stopped  string // "" if the sale ran until sold out, else "interrupted" or "time limit"
}

// OK reports whether the stock invariant held: nothing oversold, every order
// matched by exactly one decrement, and Redis and local counters agree.
func (r *Result) OK() bool {
	return r.Oversold == 0 && r.LostUpdates == 0 && r.DoubleSold == 0 && r.Sold == r.LocalOrders
}

// keys of one sale.
type keys struct{ stock, sold, units, naiveLock, lockName string }

func saleKeys(id string) keys {
	return keys{
		stock:     "flashsale:stock:" + id,
		sold:      "flashsale:sold:" + id,
		units:     "flashsale:units:" + id,
		naiveLock: "flashsale:naivelock:" + id,
		lockName:  "product:" + id,
	}
}

// instance is one simulated service instance.
type instance struct {
	rdb redis.UniversalClient
	rc  *redisson.Client // nil in naive mode
	// unregister removes rc from Config.Observer's gauges; nil without one.
	unregister func()
	orders     atomic.Int64
}

// sale is the shared state of a running sale.
type sale struct {
	cfg      Config
	k        keys
	errors   atomic.Int64
	timeouts atomic.Int64
	doubles  atomic.Int64
	errOnce  sync.Once
	firstErr string
}

func (s *sale) fail(err error) {
	s.errors.Add(1)
	s.errOnce.Do(func() { s.firstErr = err.Error() })
}

// Run sets up the stock, runs the buyers until the stock is sold out (or ctx
// is done / cfg.Duration elapses), then collects the result and deletes the
// sale's keys. newClient is called once per instance plus once for setup.
func Run(ctx context.Context, cfg Config, newClient func() redis.UniversalClient) (*Result, error) {
	if cfg.Stock < 1 || cfg.Instances < 1 || cfg.Buyers < 1 || cfg.ProductID == "" {
		return nil, errors.New("stock, instances and buyers must be >= 1 and the product id set")
	}
	s := &sale{cfg: cfg, k: saleKeys(cfg.ProductID)}
	admin := newClient()
	defer admin.Close()
	bg := context.Background()
	ok, err := admin.SetNX(bg, s.k.stock, cfg.Stock, 0).Result()
	if err != nil {
		return nil, fmt.Errorf("set stock: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("key %s already exists: product id not unique", s.k.stock)
	}
	defer s.cleanup(admin)

	insts := make([]*instance, cfg.Instances)
	defer func() {
		for _, in := range insts {
			if in == nil {
				continue
			}
			if in.unregister != nil {
				in.unregister()
			}
			if in.rc != nil {
				in.rc.Close()
			}
			in.rdb.Close()
		}
	}()
	for i := range insts {
		in := &instance{rdb: newClient()}
		insts[i] = in
		if !cfg.Naive {
			opts := &redisson.Options{WatchdogTimeout: cfg.Watchdog}
			if cfg.Observer != nil {
				opts.Observer = cfg.Observer
			}
			if in.rc, err = redisson.New(in.rdb, opts); err != nil {
				return nil, fmt.Errorf("instance %d: redisson.New: %w", i, err)
			}
			if cfg.Observer != nil {
				in.unregister = cfg.Observer.RegisterClient(in.rc)
			}
		}
	}

	saleCtx, cancel := context.WithCancel(ctx)
	if cfg.Duration > 0 {
		saleCtx, cancel = context.WithTimeout(ctx, cfg.Duration)
	}
	defer cancel()

	start := time.Now()
	stopProgress := s.progress(insts, start)
	waits := make([][]time.Duration, cfg.Buyers)
	var wg sync.WaitGroup
	for b := range cfg.Buyers {
		in := insts[b%len(insts)]
		wg.Go(func() { waits[b] = s.buyer(saleCtx, in) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	stopProgress()

	r := &Result{Duration: elapsed, LockTimeouts: s.timeouts.Load(), DoubleSold: s.doubles.Load()}
	switch {
	case ctx.Err() != nil:
		r.Stopped = "interrupted"
	case saleCtx.Err() != nil:
		r.Stopped = "time limit"
	}
	for _, in := range insts {
		n := in.orders.Load()
		r.PerInstance = append(r.PerInstance, n)
		r.LocalOrders += n
	}
	if r.Left, err = admin.Get(bg, s.k.stock).Int64(); err != nil {
		return nil, fmt.Errorf("read stock: %w", err)
	}
	if r.Sold, err = admin.Get(bg, s.k.sold).Int64(); errors.Is(err, redis.Nil) {
		r.Sold, err = 0, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read sold: %w", err)
	}
	r.Oversold = max(r.Sold-int64(cfg.Stock), 0)
	r.LostUpdates = r.Sold + r.Left - int64(cfg.Stock)
	all := slices.Concat(waits...)
	slices.Sort(all)
	r.Acquisitions = len(all)
	if n := len(all); n > 0 {
		r.WaitP50, r.WaitP99, r.WaitMax = all[(n-1)*50/100], all[(n-1)*99/100], all[n-1]
	}
	r.Errors, r.FirstError = s.errors.Load(), s.firstErr
	return r, nil
}

// cleanup deletes the sale's keys and the redisson lock's companion keys:
// its fencing counter and the per-owner unlock latches (those also expire on
// their own after the client's retry window).
func (s *sale) cleanup(rdb redis.UniversalClient) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tag := "{" + s.k.lockName + "}"
	rdb.Del(ctx, s.k.stock, s.k.sold, s.k.units, s.k.naiveLock, s.k.lockName, "redisson_lock_token:"+tag)
	var batch []string
	it := rdb.Scan(ctx, 0, "redisson_unlock_latch:"+tag+":*", 1000).Iterator()
	for it.Next(ctx) {
		if batch = append(batch, it.Val()); len(batch) == 500 {
			rdb.Del(ctx, batch...)
			batch = batch[:0]
		}
	}
	if len(batch) > 0 {
		rdb.Del(ctx, batch...)
	}
}

// buyer buys one unit at a time until it sees the stock at 0 or ctx is done.
// It returns its lock wait samples.
func (s *sale) buyer(ctx context.Context, in *instance) []time.Duration {
	var waits []time.Duration
	for ctx.Err() == nil {
		// Cheap pre-check outside the lock, as real flash sales do; the
		// authoritative check is the one under the lock.
		if n, err := in.rdb.Get(ctx, s.k.stock).Int64(); err == nil && n <= 0 {
			return waits
		}
		var soldOut bool
		var wait time.Duration
		var err error
		if s.cfg.Naive {
			soldOut, wait, err = s.buyNaive(ctx, in)
		} else {
			soldOut, wait, err = s.buyLocked(ctx, in)
		}
		if wait >= 0 {
			waits = append(waits, wait)
		}
		if err != nil && ctx.Err() == nil {
			s.fail(err)
			time.Sleep(10 * time.Millisecond)
		}
		if soldOut {
			return waits
		}
	}
	return waits
}

// buyLocked is one purchase under a redisson lock. wait < 0 means the lock
// was not acquired.
func (s *sale) buyLocked(ctx context.Context, in *instance) (soldOut bool, wait time.Duration, err error) {
	l := in.rc.GetLock(s.k.lockName)
	t0 := time.Now()
	ok, err := l.TryLock(ctx, s.cfg.LockWait, 0)
	if err != nil || !ok {
		if err == nil {
			s.timeouts.Add(1)
		}
		return false, -1, err
	}
	wait = time.Since(t0)
	// The critical section and the unlock run to completion even if the sale
	// is being stopped, so an interrupted run is still consistent.
	cctx := context.WithoutCancel(ctx)
	soldOut, err = s.purchase(cctx, in, s.cfg.Work)
	if uerr := l.Unlock(cctx); uerr != nil && err == nil {
		err = fmt.Errorf("unlock: %w", uerr)
	}
	return soldOut, wait, err
}

// buyNaive is one purchase under the classic hand-written lock: SET NX PX,
// a business step longer than the lease, and a DEL that does not check the
// owner. Two buyers end up inside at once and overwrite each other's SET.
func (s *sale) buyNaive(ctx context.Context, in *instance) (soldOut bool, wait time.Duration, err error) {
	token := strconv.FormatUint(rand.Uint64(), 36)
	t0 := time.Now()
	for {
		ok, err := in.rdb.SetNX(ctx, s.k.naiveLock, token, s.cfg.NaiveLease).Result()
		if err != nil {
			return false, -1, err
		}
		if ok {
			break
		}
		select {
		case <-ctx.Done():
			return false, -1, nil
		case <-time.After(time.Millisecond + rand.N(2*time.Millisecond)):
		}
	}
	wait = time.Since(t0)
	cctx := context.WithoutCancel(ctx)
	soldOut, err = s.purchase(cctx, in, s.cfg.NaiveWork)
	if derr := in.rdb.Del(cctx, s.k.naiveLock).Err(); derr != nil && err == nil {
		err = derr
	}
	return soldOut, wait, err
}

// purchase is the business logic run while (supposedly) holding the lock.
func (s *sale) purchase(ctx context.Context, in *instance, work time.Duration) (soldOut bool, err error) {
	stock, err := in.rdb.Get(ctx, s.k.stock).Int64()
	if err != nil {
		return false, fmt.Errorf("get stock: %w", err)
	}
	if stock <= 0 {
		return true, nil
	}
	time.Sleep(work) // payment, inventory service, ...
	if err := in.rdb.Set(ctx, s.k.stock, stock-1, 0).Err(); err != nil {
		return false, fmt.Errorf("set stock: %w", err)
	}
	if err := in.rdb.Incr(ctx, s.k.sold).Err(); err != nil {
		return false, fmt.Errorf("record order: %w", err)
	}
	in.orders.Add(1)
	// Oversell detector: the order took unit number <stock>; if another order
	// already took that unit, both read the same stock and one sale is extra.
	added, err := in.rdb.SAdd(ctx, s.k.units, stock).Result()
	if err != nil {
		return false, fmt.Errorf("record unit: %w", err)
	}
	if added == 0 {
		s.doubles.Add(1)
	}
	return stock-1 == 0, nil
}

// progress redraws a one-line progress bar ~10x/s until the returned stop
// function is called; stop waits for the goroutine and ends the line.
func (s *sale) progress(insts []*instance, start time.Time) (stop func()) {
	w := s.cfg.Progress
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	sold := func() (n int64) {
		for _, in := range insts {
			n += in.orders.Load()
		}
		return n
	}
	draw := func(n int64, rate float64, cr string) {
		const width = 30
		filled := int(min(n, int64(s.cfg.Stock)) * width / int64(s.cfg.Stock))
		bar := strings.Repeat("#", filled) + strings.Repeat(".", width-filled)
		extra := ""
		if n > int64(s.cfg.Stock) {
			extra = "  OVERSOLD!"
		}
		fmt.Fprintf(w, "%s[%s] %d/%d sold  %5.0f orders/s  %5.1fs%s ", cr, bar, n, s.cfg.Stock, rate, time.Since(start).Seconds(), extra)
	}
	final := func() {
		n := sold()
		draw(n, float64(n)/time.Since(start).Seconds(), "\r")
		fmt.Fprintln(w)
	}
	if !s.cfg.Live {
		return func() {
			n := sold()
			draw(n, float64(n)/time.Since(start).Seconds(), "")
			fmt.Fprintln(w)
		}
	}
	wg.Go(func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		type sample struct {
			t time.Time
			n int64
		}
		hist := []sample{{start, 0}} // last ~1s of samples for the rate
		for {
			select {
			case <-done:
				return
			case now := <-tick.C:
				n := sold()
				hist = append(hist, sample{now, n})
				if len(hist) > 11 {
					hist = hist[1:]
				}
				rate := float64(n-hist[0].n) / now.Sub(hist[0].t).Seconds()
				draw(n, rate, "\r")
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		final()
	}
}
