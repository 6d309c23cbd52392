package redisson

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// TestAtomicLongOperations walks every AtomicLong call on names spread over
// the cluster and checks the stored decimal string Redisson reads.
func TestAtomicLongOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		for _, name := range spreadNames(t, rdb, 6) {
			a := c.GetAtomicLong(name)
			steps := []struct {
				op   string
				call func() (int64, error)
				want int64
			}{
				{"Get on missing", func() (int64, error) { return a.Get(ctx) }, 0},
				{"IncrementAndGet", func() (int64, error) { return a.IncrementAndGet(ctx) }, 1},
				{"GetAndIncrement", func() (int64, error) { return a.GetAndIncrement(ctx) }, 1},
				{"AddAndGet(10)", func() (int64, error) { return a.AddAndGet(ctx, 10) }, 12},
				{"GetAndAdd(-20)", func() (int64, error) { return a.GetAndAdd(ctx, -20) }, 12},
				{"DecrementAndGet", func() (int64, error) { return a.DecrementAndGet(ctx) }, -9},
				{"GetAndDecrement", func() (int64, error) { return a.GetAndDecrement(ctx) }, -9},
				{"GetAndSet(math.MaxInt64)", func() (int64, error) { return a.GetAndSet(ctx, math.MaxInt64) }, -10},
				{"Get", func() (int64, error) { return a.Get(ctx) }, math.MaxInt64},
				{"GetAndDelete", func() (int64, error) { return a.GetAndDelete(ctx) }, math.MaxInt64},
				{"GetAndDelete on missing", func() (int64, error) { return a.GetAndDelete(ctx) }, 0},
			}
			for _, s := range steps {
				if got, err := s.call(); err != nil || got != s.want {
					t.Fatalf("%s = %d, %v; want %d, nil", s.op, got, err, s.want)
				}
			}
			if ok, err := a.CompareAndSet(ctx, 0, 5); err != nil || !ok {
				t.Fatalf("CompareAndSet(0, 5) on missing = %v, %v; want true, nil", ok, err)
			}
			if ok, err := a.CompareAndSet(ctx, 4, 6); err != nil || ok {
				t.Fatalf("CompareAndSet(4, 6) on 5 = %v, %v; want false, nil", ok, err)
			}
			if err := a.Set(ctx, math.MinInt64); err != nil {
				t.Fatal(err)
			}
			if ok, err := a.CompareAndSet(ctx, math.MinInt64, math.MaxInt64); err != nil || !ok {
				t.Fatalf("CompareAndSet(MinInt64, MaxInt64) = %v, %v; want true, nil", ok, err)
			}
			if raw := rdb.Get(ctx, name).Val(); raw != "9223372036854775807" {
				t.Fatalf("stored %q, want the decimal string Redisson stores", raw)
			}
			if ok, err := a.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	})
}

// TestAtomicLongConcurrent increments from several goroutines and clients:
// no increment is lost.
func TestAtomicLongConcurrent(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	var wg sync.WaitGroup
	for range 4 {
		a := newClient(t, sharedRedis(t), nil).GetAtomicLong(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := a.IncrementAndGet(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := newClient(t, rdb, nil).GetAtomicLong(name).Get(ctx); err != nil || n != 200 {
		t.Fatalf("Get after 4x50 increments = %d, %v; want 200", n, err)
	}
}

// TestAtomicLongBadInput: empty name, closed client, a hash, a non-integer
// string and an overflow give their errors and leave Redis unchanged.
func TestAtomicLongBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	for _, nc := range atomicCalls(ctx, c.GetAtomicLong("")) {
		if err := nc.call(); !errors.Is(err, ErrEmptyName) {
			t.Errorf("empty name: %s = %v; want ErrEmptyName", nc.op, err)
		}
	}
	for _, nc := range atomicCalls(ctx, closed.GetAtomicLong(uniqueName(t, rdb))) {
		if err := nc.call(); !errors.Is(err, ErrClientClosed) {
			t.Errorf("closed client: %s = %v; want ErrClientClosed", nc.op, err)
		}
	}
	for _, setup := range []struct {
		what string
		put  func(name string)
	}{
		{"hash", func(name string) { rdb.HSet(ctx, name, "f", "1") }},
		{"text", func(name string) { rdb.Set(ctx, name, "hello", 0) }},
		{"float", func(name string) { rdb.Set(ctx, name, "1.5", 0) }},
		{"leading zero", func(name string) { rdb.Set(ctx, name, "007", 0) }},
		{"beyond int64", func(name string) { rdb.Set(ctx, name, "9223372036854775808", 0) }},
	} {
		name := uniqueName(t, rdb)
		setup.put(name)
		before := keyState(t, rdb, name)
		for _, nc := range atomicCalls(ctx, c.GetAtomicLong(name)) {
			if nc.op == "Delete" {
				continue
			}
			if nc.op == "Get" && setup.what == "leading zero" {
				continue // GET parses "007" as 7, as Redisson's Long.parseLong does
			}
			if err := nc.call(); !errors.Is(err, ErrWrongType) {
				t.Errorf("%s at key: %s = %v; want ErrWrongType", setup.what, nc.op, err)
			}
			if after := keyState(t, rdb, name); after != before {
				t.Fatalf("%s at key: %s changed Redis: %s -> %s", setup.what, nc.op, before, after)
			}
		}
	}
	a := c.GetAtomicLong(uniqueName(t, rdb))
	if err := a.Set(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	if _, err := a.IncrementAndGet(ctx); err == nil {
		t.Errorf("IncrementAndGet past MaxInt64 = nil error; want a Redis overflow error")
	}
	if n, _ := a.Get(ctx); n != math.MaxInt64 {
		t.Errorf("after a failed overflow, Get = %d; want MaxInt64", n)
	}
}

func atomicCalls(ctx context.Context, a *AtomicLong) []namedCall {
	return []namedCall{
		{"Get", func() error { return second(a.Get(ctx)) }},
		{"Set", func() error { return a.Set(ctx, 1) }},
		{"GetAndSet", func() error { return second(a.GetAndSet(ctx, 1)) }},
		{"AddAndGet", func() error { return second(a.AddAndGet(ctx, 1)) }},
		{"GetAndAdd", func() error { return second(a.GetAndAdd(ctx, 1)) }},
		{"IncrementAndGet", func() error { return second(a.IncrementAndGet(ctx)) }},
		{"DecrementAndGet", func() error { return second(a.DecrementAndGet(ctx)) }},
		{"CompareAndSet", func() error { return second(a.CompareAndSet(ctx, 0, 1)) }},
		{"GetAndDelete", func() error { return second(a.GetAndDelete(ctx)) }},
		{"Delete", func() error { return second(a.Delete(ctx)) }},
	}
}

// TestAtomicLongOverflowIsNotInvalidPermits checks that an AtomicLong overflow is not a
// semaphore's "invalid number of permits".
func TestAtomicLongOverflowIsNotInvalidPermits(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	a := c.GetAtomicLong(uniqueName(t, rdb))
	if err := a.Set(ctx, math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	_, err := a.IncrementAndGet(ctx)
	if err == nil || errors.Is(err, ErrInvalidPermits) {
		t.Fatalf("IncrementAndGet past MaxInt64 = %v; want an overflow error that is not ErrInvalidPermits", err)
	}
}

// go-redis resends a call whose reply was lost (the proxy drops the reply
// after Redis ran the call). Every changing call of an AtomicLong must take
// effect once all the same, report its first result, and leave the value a
// decimal string at the name.
func TestAtomicLongExactlyOnceAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	warm := c.GetAtomicLong("warm") // load the scripts: a NOSCRIPT reply is no lost reply
	warm.IncrementAndGet(ctx)
	warm.CompareAndSet(ctx, 1, 2)
	warm.GetAndSet(ctx, 3)
	warm.GetAndDelete(ctx)

	a := c.GetAtomicLong(uniqueName(t, direct))
	reports := func(want int64) func(int64, error) error {
		return func(got int64, err error) error {
			if err == nil && got != want {
				err = fmt.Errorf("reported %d; want %d", got, want)
			}
			return err
		}
	}
	steps := []struct {
		name string
		do   func() error
		want string
	}{
		{"IncrementAndGet", func() error { return reports(1)(a.IncrementAndGet(ctx)) }, "1"},
		{"AddAndGet(5)", func() error { return reports(6)(a.AddAndGet(ctx, 5)) }, "6"},
		{"GetAndAdd(2)", func() error { return reports(6)(a.GetAndAdd(ctx, 2)) }, "8"},
		{"DecrementAndGet", func() error { return reports(7)(a.DecrementAndGet(ctx)) }, "7"},
		{"AddAndGet(2^60)", func() error { return reports(1<<60 + 7)(a.AddAndGet(ctx, 1<<60)) }, "1152921504606846983"},
		{"AddAndGet(-2^60)", func() error { return reports(7)(a.AddAndGet(ctx, -1<<60)) }, "7"},
		{"CompareAndSet(7, 10)", func() error {
			ok, err := a.CompareAndSet(ctx, 7, 10)
			if err == nil && !ok {
				err = errors.New("reported false; want true")
			}
			return err
		}, "10"},
		{"GetAndSet(3)", func() error { return reports(10)(a.GetAndSet(ctx, 3)) }, "3"},
		{"GetAndDelete", func() error { return reports(3)(a.GetAndDelete(ctx)) }, ""},
	}
	for _, st := range steps {
		dropped := proxy.Dropped()
		proxy.DropNextReply()
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if proxy.Dropped() != dropped+1 {
			t.Fatalf("%s: no reply was dropped", st.name)
		}
		if got := direct.Get(ctx, a.Name()).Val(); got != st.want {
			t.Fatalf("%s with a lost reply left %q; want %q", st.name, got, st.want)
		}
	}
}
