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

// TestAtomicDoubleOperations walks every AtomicDouble call on names spread
// over the cluster.
func TestAtomicDoubleOperations(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c := newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		for _, name := range spreadNames(t, rdb, 6) {
			a := c.GetAtomicDouble(name)
			steps := []struct {
				op   string
				call func() (float64, error)
				want float64
			}{
				{"Get on missing", func() (float64, error) { return a.Get(ctx) }, 0},
				{"IncrementAndGet", func() (float64, error) { return a.IncrementAndGet(ctx) }, 1},
				{"GetAndIncrement", func() (float64, error) { return a.GetAndIncrement(ctx) }, 1},
				{"AddAndGet(2.25)", func() (float64, error) { return a.AddAndGet(ctx, 2.25) }, 4.25},
				{"GetAndAdd(-0.5)", func() (float64, error) { return a.GetAndAdd(ctx, -0.5) }, 4.25},
				{"DecrementAndGet", func() (float64, error) { return a.DecrementAndGet(ctx) }, 2.75},
				{"GetAndDecrement", func() (float64, error) { return a.GetAndDecrement(ctx) }, 2.75},
				{"GetAndSet(1e20)", func() (float64, error) { return a.GetAndSet(ctx, 1e20) }, 1.75},
				{"Get", func() (float64, error) { return a.Get(ctx) }, 1e20},
				{"GetAndDelete", func() (float64, error) { return a.GetAndDelete(ctx) }, 1e20},
				{"GetAndDelete on missing", func() (float64, error) { return a.GetAndDelete(ctx) }, 0},
			}
			for _, s := range steps {
				if got, err := s.call(); err != nil || got != s.want {
					t.Fatalf("%s = %v, %v; want %v, nil", s.op, got, err, s.want)
				}
			}
			if ok, err := a.CompareAndSet(ctx, 0, 5); err != nil || !ok {
				t.Fatalf("CompareAndSet(0, 5) on missing = %v, %v; want true, nil", ok, err)
			}
			if ok, err := a.CompareAndSet(ctx, 4, 6); err != nil || ok {
				t.Fatalf("CompareAndSet(4, 6) on 5 = %v, %v; want false, nil", ok, err)
			}
			if raw := rdb.Get(ctx, name).Val(); raw != "5.0" {
				t.Fatalf("stored %q, want the text Redisson writes, 5.0", raw)
			}
			if _, err := a.AddAndGet(ctx, 6); err != nil { // Redis writes "11"
				t.Fatal(err)
			}
			tenth := 0.1
			if ok, err := a.CompareAndSet(ctx, 11, tenth+0.2); err != nil || !ok {
				t.Fatalf("CompareAndSet(11, 0.3...) on \"11\" = %v, %v; want true, nil", ok, err)
			}
			if v, err := a.Get(ctx); err != nil || v != tenth+0.2 {
				t.Fatalf("Get = %v, %v; want 0.30000000000000004", v, err)
			}
			if ok, err := a.Delete(ctx); err != nil || !ok {
				t.Fatalf("Delete = %v, %v", ok, err)
			}
		}
	})
}

// TestAtomicDoubleRedissonText checks the text Set writes against what the
// real Redisson client wrote (the RAtomicDouble recording and the codec
// fixtures), and that Get reads what Redisson and Redis write.
func TestAtomicDoubleRedissonText(t *testing.T) {
	tenth := 0.1 // not a constant: 0.1 + 0.2 in float64 arithmetic
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{1.5, "1.5"}, {10, "10.0"}, {3, "3.0"}, {1e20, "100000000000000000000"}, {1e-7, "0.00000010"},
		{tenth + 0.2, "0.30000000000000004"}, {-2.5, "-2.5"}, {0.1, "0.1"}, {math.Copysign(0, -1), "0.0"},
		{0, "0.0"}, {7, "7.0"}, {100, "100.0"}, {0.001, "0.001"}, {1.5e-5, "0.000015"},
		{1234567.5, "1234567.5"}, {1e7, "10000000"}, {1.234e10, "12340000000"}, {-1e-7, "-0.00000010"},
	} {
		if got := formatJavaDouble(tc.v); got != tc.want {
			t.Errorf("formatJavaDouble(%v) = %q; want %q", tc.v, got, tc.want)
		}
	}
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	a := c.GetAtomicDouble(name)
	for raw, want := range map[string]float64{"1": 1, "1.5e3": 1500, "4.5": 4.5, "11.1": 11.1, "0.00000010": 1e-7,
		"100000000000000000000": 1e20} {
		rdb.Set(ctx, name, raw, 0)
		if got, err := a.Get(ctx); err != nil || got != want {
			t.Errorf("Get of %q = %v, %v; want %v (as Redisson reads it)", raw, got, err, want)
		}
	}
	// Redisson's steps replayed as it sends them, read by Go, and Go's writes
	// read back as Redisson reads them.
	rdb.Set(ctx, name, "1.5", 0)     // d.set(1.5)
	rdb.IncrByFloat(ctx, name, 2.25) // d.addAndGet(2.25)
	if v, err := a.Get(ctx); err != nil || v != 3.75 {
		t.Fatalf("Get after Redisson's set and addAndGet = %v, %v; want 3.75", v, err)
	}
	if _, err := a.GetAndSet(ctx, -2.5); err != nil {
		t.Fatal(err)
	}
	if raw := rdb.Get(ctx, name).Val(); raw != "-2.5" {
		t.Fatalf("GetAndSet(-2.5) stored %q; Redisson's GETSET stores -2.5", raw)
	}
	if _, err := a.IncrementAndGet(ctx); err != nil {
		t.Fatal(err)
	}
	if raw := rdb.Get(ctx, name).Val(); raw != "-1.5" {
		t.Fatalf("IncrementAndGet stored %q; Redisson's INCRBYFLOAT stores -1.5", raw)
	}
}

// TestAtomicDoubleConcurrent adds from several goroutines and clients: no
// addition is lost.
func TestAtomicDoubleConcurrent(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	var wg sync.WaitGroup
	for range 4 {
		a := newClient(t, sharedRedis(t), nil).GetAtomicDouble(name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := a.AddAndGet(ctx, 0.5); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n, err := newClient(t, rdb, nil).GetAtomicDouble(name).Get(ctx); err != nil || n != 100 {
		t.Fatalf("Get after 4x50 additions of 0.5 = %v, %v; want 100", n, err)
	}
}

func atomicDoubleCalls(ctx context.Context, a *AtomicDouble) []namedCall {
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

// TestAtomicDoubleBadInput: empty name, closed client, NaN and infinities,
// a hash, text that is no number and a sum that would be infinite give
// their errors and leave Redis unchanged.
func TestAtomicDoubleBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	for _, nc := range atomicDoubleCalls(ctx, c.GetAtomicDouble("")) {
		if err := nc.call(); !errors.Is(err, ErrEmptyName) {
			t.Errorf("empty name: %s = %v; want ErrEmptyName", nc.op, err)
		}
	}
	for _, nc := range atomicDoubleCalls(ctx, closed.GetAtomicDouble(uniqueName(t, rdb))) {
		if err := nc.call(); !errors.Is(err, ErrClientClosed) {
			t.Errorf("closed client: %s = %v; want ErrClientClosed", nc.op, err)
		}
	}
	name := uniqueName(t, rdb)
	a := c.GetAtomicDouble(name)
	if err := a.Set(ctx, 2); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		for op, call := range map[string]func() error{
			"Set":                  func() error { return a.Set(ctx, bad) },
			"GetAndSet":            func() error { return second(a.GetAndSet(ctx, bad)) },
			"AddAndGet":            func() error { return second(a.AddAndGet(ctx, bad)) },
			"GetAndAdd":            func() error { return second(a.GetAndAdd(ctx, bad)) },
			"CompareAndSet":        func() error { return second(a.CompareAndSet(ctx, 2, bad)) },
			"CompareAndSet expect": func() error { return second(a.CompareAndSet(ctx, bad, 1)) },
		} {
			if err := call(); !errors.Is(err, ErrInvalidNumber) {
				t.Errorf("%s(%v) = %v; want ErrInvalidNumber", op, bad, err)
			}
		}
	}
	if raw := rdb.Get(ctx, name).Val(); raw != "2.0" {
		t.Fatalf("refused calls left %q; want 2.0", raw)
	}
	if err := a.Set(ctx, math.MaxFloat64); err != nil {
		t.Fatal(err)
	}
	if _, err := a.AddAndGet(ctx, math.MaxFloat64); !errors.Is(err, ErrInvalidNumber) {
		t.Errorf("AddAndGet(MaxFloat64) on MaxFloat64 = %v; want ErrInvalidNumber", err)
	}
	if v, _ := a.Get(ctx); v != math.MaxFloat64 {
		t.Errorf("after a refused addition Get = %v; want MaxFloat64", v)
	}
	for _, setup := range []struct {
		what string
		put  func(name string)
	}{
		{"hash", func(name string) { rdb.HSet(ctx, name, "f", "1") }},
		{"text", func(name string) { rdb.Set(ctx, name, "hello", 0) }},
		{"inf", func(name string) { rdb.Set(ctx, name, "inf", 0) }},
		{"empty", func(name string) { rdb.Set(ctx, name, "", 0) }},
	} {
		name := uniqueName(t, rdb)
		setup.put(name)
		before := keyState(t, rdb, name)
		for _, nc := range atomicDoubleCalls(ctx, c.GetAtomicDouble(name)) {
			if nc.op == "Delete" {
				continue
			}
			if err := nc.call(); !errors.Is(err, ErrWrongType) {
				t.Errorf("%s at key: %s = %v; want ErrWrongType", setup.what, nc.op, err)
			}
			if after := keyState(t, rdb, name); after != before {
				t.Fatalf("%s at key: %s changed Redis: %s -> %s", setup.what, nc.op, before, after)
			}
		}
	}
}

// TestAtomicDoubleOneRoundTrip counts the round trips of each call once its
// script is loaded: one each.
func TestAtomicDoubleOneRoundTrip(t *testing.T) {
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	a := c.GetAtomicDouble(uniqueName(t, rdb))
	for range 2 { // the first pass loads the scripts
		for _, nc := range atomicDoubleCalls(ctx, a) {
			rt0 := h.roundTrips()
			if err := nc.call(); err != nil {
				t.Fatalf("%s: %v", nc.op, err)
			}
			if n := h.roundTrips() - rt0; n != 1 && rt0 > 0 {
				t.Errorf("%s made %d round trips; want 1", nc.op, n)
			}
		}
	}
}

// go-redis resends a call whose reply was lost: every changing call of an
// AtomicDouble takes effect once all the same and reports its first result.
func TestAtomicDoubleExactlyOnceAcrossLostReplies(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr(), PoolSize: 1, MaxRetries: 3})
	t.Cleanup(func() { viaProxy.Close() })
	c := newClient(t, viaProxy, nil)
	ctx := testCtx(t, 30*time.Second)
	warm := c.GetAtomicDouble("warm") // load the scripts: a NOSCRIPT reply is no lost reply
	warm.IncrementAndGet(ctx)
	warm.CompareAndSet(ctx, 1, 2)
	warm.GetAndSet(ctx, 3)
	warm.GetAndDelete(ctx)

	a := c.GetAtomicDouble(uniqueName(t, direct))
	reports := func(want float64) func(float64, error) error {
		return func(got float64, err error) error {
			if err == nil && got != want {
				err = fmt.Errorf("reported %v; want %v", got, want)
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
		{"AddAndGet(0.5)", func() error { return reports(1.5)(a.AddAndGet(ctx, 0.5)) }, "1.5"},
		{"GetAndAdd(2)", func() error { return reports(1.5)(a.GetAndAdd(ctx, 2)) }, "3.5"},
		{"CompareAndSet(3.5, 10)", func() error {
			ok, err := a.CompareAndSet(ctx, 3.5, 10)
			if err == nil && !ok {
				err = errors.New("reported false; want true")
			}
			return err
		}, "10.0"},
		{"GetAndSet(3)", func() error { return reports(10)(a.GetAndSet(ctx, 3)) }, "3.0"},
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
