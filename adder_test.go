package redisson

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestAdderInstancesCountTogether runs three instances on two clients, on a
// single node and on a cluster: each instance's Sum sees every part, Reset
// zeroes them all, and a closed instance's part leaves the sum.
func TestAdderInstancesCountTogether(t *testing.T) {
	topologies(t, func(t *testing.T, rdb redis.UniversalClient) {
		c1, c2 := newClient(t, rdb, nil), newClient(t, rdb, nil)
		ctx := testCtx(t, time.Minute)
		for _, name := range []string{uniqueName(t, rdb), "{" + uniqueName(t, rdb) + "}:hits"} {
			a, b, x := c1.GetLongAdder(name), c2.GetLongAdder(name), c2.GetLongAdder(name)
			t.Cleanup(func() { a.Close(); b.Close(); x.Close() })
			for _, ad := range []*LongAdder{a, b, x} { // each client subscribed
				if _, err := ad.Sum(ctx); err != nil {
					t.Fatal(err)
				}
			}
			var wg sync.WaitGroup
			for _, ad := range []*LongAdder{a, b, x} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range 1000 {
						ad.Increment()
					}
				}()
			}
			wg.Wait()
			a.Add(5)
			b.Decrement()
			for i, ad := range []*LongAdder{a, b, x} {
				if got, err := ad.Sum(ctx); err != nil || got != 3004 {
					t.Fatalf("%s: instance %d Sum = %d, %v; want 3004", name, i, got, err)
				}
			}
			if err := x.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := a.Sum(ctx); err != nil || got != 2004 {
				t.Fatalf("%s: Sum after one instance closed = %d, %v; want 2004 (its part left with it)", name, got, err)
			}
			if err := b.Reset(ctx); err != nil {
				t.Fatal(err)
			}
			if got, err := a.Sum(ctx); err != nil || got != 0 {
				t.Fatalf("%s: Sum after Reset = %d, %v; want 0", name, got, err)
			}
			d1, d2 := c1.GetDoubleAdder(name+":d"), c2.GetDoubleAdder(name+":d")
			t.Cleanup(func() { d1.Close(); d2.Close() })
			if _, err := d1.Sum(ctx); err != nil { // each client subscribed
				t.Fatal(err)
			}
			if _, err := d2.Sum(ctx); err != nil {
				t.Fatal(err)
			}
			d1.Add(1.5)
			d2.Add(0.25)
			d1.Increment()
			if got, err := d2.Sum(ctx); err != nil || got != 2.75 {
				t.Fatalf("%s: DoubleAdder Sum = %v, %v; want 2.75", name, got, err)
			}
		}
	})
}

// TestAdderFlushedMode: parts move into {name}:adder-flushed on the timer
// and on Close, so that a later instance's Sum still counts them; a crash
// (an instance never closed, its client gone) loses at most the last
// interval.
func TestAdderFlushedMode(t *testing.T) {
	rdb := sharedRedis(t)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), "{"+name+"}:adder-flushed") })
	c1 := newClient(t, rdb, nil)
	a := c1.GetLongAdder(name, WithFlushInterval(20*time.Millisecond))
	for range 100 {
		a.Increment()
	}
	eventually(t, 10*time.Second, "the timer flushed the part", func() bool {
		return rdb.Get(ctx, "{"+name+"}:adder-flushed").Val() == "100"
	})
	a.Add(7)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if v := rdb.Get(ctx, "{"+name+"}:adder-flushed").Val(); v != "107" {
		t.Fatalf("after Close the flushed part is %q; want 107", v)
	}
	if _, err := a.Sum(ctx); !errors.Is(err, ErrHandleClosed) {
		t.Fatalf("Sum after Close = %v; want ErrHandleClosed", err)
	}
	c2 := newClient(t, rdb, nil)
	b := c2.GetLongAdder(name, WithFlushInterval(time.Hour))
	t.Cleanup(func() { b.Close() })
	b.Add(3)
	if got, err := b.Sum(ctx); err != nil || got != 110 {
		t.Fatalf("Sum = %d, %v; want 110 (107 flushed + 3)", got, err)
	}
	if got, err := b.Sum(ctx); err != nil || got != 110 {
		t.Fatalf("second Sum = %d, %v; want 110 (the answer flushed, not doubled)", got, err)
	}
	if err := b.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Sum(ctx); err != nil || got != 0 {
		t.Fatalf("Sum after Reset = %d, %v; want 0", got, err)
	}
	d := c2.GetDoubleAdder(name+":d", WithFlushInterval(time.Hour))
	d.Add(0.5)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), "{"+name+":d}:adder-flushed") })
	if v := rdb.Get(ctx, "{"+name+":d}:adder-flushed").Val(); v != "0.5" {
		t.Fatalf("DoubleAdder's flushed part is %q; want 0.5", v)
	}
}

// TestAdderFlushedRoundTrips counts round trips in flushed mode: 2 million
// increments across 8 goroutines make at most 0.01 round trips each (one
// flush per interval, none per increment).
func TestAdderFlushedRoundTrips(t *testing.T) {
	rdb := sharedRedis(t)
	h := newBenchHook(rdb)
	c := newClient(t, rdb, nil)
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), "{"+name+"}:adder-flushed") })
	a := c.GetLongAdder(name, WithFlushInterval(10*time.Millisecond))
	ctx := testCtx(t, time.Minute)
	a.Sum(ctx) // subscribed
	rt0 := h.roundTrips()
	const n = 2_000_000
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range n / 8 {
				a.Increment()
			}
		}()
	}
	wg.Wait()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	trips := h.roundTrips() - rt0
	t.Logf("%d round trips for %d increments (%.2g each)", trips, n, float64(trips)/n)
	if float64(trips)/n > 0.01 {
		t.Fatalf("%d round trips for %d increments; want at most 0.01 each", trips, n)
	}
	if v := rdb.Get(ctx, "{"+name+"}:adder-flushed").Val(); v != "2000000" {
		t.Fatalf("flushed part %q; want 2000000", v)
	}
}

// TestAdderBadInput: an empty name, a negative flush interval, a closed
// client and a closed instance give their errors; a cancelled Sum leaves no
// key behind.
func TestAdderBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	closed := newClient(t, rdb, nil)
	closed.Close()
	name := uniqueName(t, rdb)
	shut := c.GetLongAdder(name)
	shut.Close()
	cases := []struct {
		what string
		l    *LongAdder
		d    *DoubleAdder
		want error
	}{
		{"empty name", c.GetLongAdder(""), c.GetDoubleAdder(""), ErrEmptyName},
		{"negative flush interval", c.GetLongAdder(name, WithFlushInterval(-time.Second)),
			c.GetDoubleAdder(name, WithFlushInterval(-time.Second)), ErrInvalidOption},
		{"closed client", closed.GetLongAdder(name), closed.GetDoubleAdder(name), ErrClientClosed},
		{"closed instance", shut, nil, ErrHandleClosed},
	}
	for _, tc := range cases {
		if _, err := tc.l.Sum(ctx); !errors.Is(err, tc.want) {
			t.Errorf("%s: LongAdder.Sum = %v; want %v", tc.what, err, tc.want)
		}
		if err := tc.l.Reset(ctx); !errors.Is(err, tc.want) {
			t.Errorf("%s: LongAdder.Reset = %v; want %v", tc.what, err, tc.want)
		}
		if tc.d != nil {
			if _, err := tc.d.Sum(ctx); !errors.Is(err, tc.want) {
				t.Errorf("%s: DoubleAdder.Sum = %v; want %v", tc.what, err, tc.want)
			}
		}
		tc.l.Close()
		if tc.d != nil {
			tc.d.Close()
		}
	}
	// A receiver that never answers (a PSUBSCRIBE client counts as one, as
	// in Redisson): Sum waits until ctx ends, then leaves nothing behind.
	ps := rdb.PSubscribe(ctx, "{"+name+"}:adder-*")
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	a := c.GetLongAdder(name)
	defer a.Close()
	a.Add(1)
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if _, err := a.Sum(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Sum with a silent receiver = %v; want DeadlineExceeded", err)
	}
	if keys := rdb.Keys(ctx, "{"+name+"}*").Val(); len(keys) != 0 {
		t.Fatalf("a cancelled Sum left %v", keys)
	}
}

// BenchmarkLongAdderIncrement measures in-memory increments from parallel
// goroutines (the issue asks for at least 1 M per second per process).
func BenchmarkLongAdderIncrement(b *testing.B) {
	rdb := sharedRedis(b)
	c := newClient(b, rdb, nil)
	a := c.GetLongAdder(uniqueName(b, rdb), WithFlushInterval(100*time.Millisecond))
	b.Cleanup(func() { a.Close() })
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Increment()
		}
	})
}

// BenchmarkDoubleAdderAdd is BenchmarkLongAdderIncrement for DoubleAdder.
func BenchmarkDoubleAdderAdd(b *testing.B) {
	rdb := sharedRedis(b)
	c := newClient(b, rdb, nil)
	a := c.GetDoubleAdder(uniqueName(b, rdb), WithFlushInterval(100*time.Millisecond))
	b.Cleanup(func() { a.Close() })
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.Add(0.5)
		}
	})
}
