package writebehind

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// store is a writer that records what it was given.
type store struct {
	mu      sync.Mutex
	data    map[int]int
	calls   int
	maxKeys int
	failN   int // fail this many calls first
	block   chan struct{}
}

func (s *store) write(ctx context.Context, m map[int]int) error {
	if s.block != nil {
		select {
		case <-s.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.failN > 0 {
		s.failN--
		return errors.New("down")
	}
	s.maxKeys = max(s.maxKeys, len(m))
	for k, v := range m {
		s.data[k] = v
	}
	return nil
}

func (s *store) del(_ context.Context, keys []int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range keys {
		delete(s.data, k)
	}
	return nil
}

func cfg(s *store) Config[int, int] {
	return Config[int, int]{Write: s.write, Delete: s.del, BatchSize: 10, Delay: time.Hour, QueueSize: 100,
		MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
}

// TestCloseFlushesEverything: a Delay of an hour, and Close still writes
// every key, coalesced, in batches no larger than BatchSize.
func TestCloseFlushesEverything(t *testing.T) {
	s := &store{data: map[int]int{}}
	q := New(cfg(s))
	ctx := context.Background()
	for round := range 3 {
		for k := range 95 {
			if err := q.Put(ctx, k, k*10+round); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := q.Delete(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if len(s.data) != 93 {
		t.Fatalf("got %d keys written, want 93", len(s.data))
	}
	for k := 2; k < 95; k++ {
		if s.data[k] != k*10+2 {
			t.Fatalf("key %d = %d, want %d (the latest)", k, s.data[k], k*10+2)
		}
	}
	if s.maxKeys > 10 {
		t.Fatalf("a batch of %d keys, want at most 10", s.maxKeys)
	}
	if err := q.Put(ctx, 1, 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Put after Close: got %v, want ErrClosed", err)
	}
}

// TestRetryAfterFailure: the writer fails three times; the batch is written
// on the fourth call, and OnError saw three failures, none dropped.
func TestRetryAfterFailure(t *testing.T) {
	s := &store{data: map[int]int{}, failN: 3}
	c := cfg(s)
	var mu sync.Mutex
	var fails, drops int
	c.OnError = func(_ error, _, _ int, dropped bool) {
		mu.Lock()
		defer mu.Unlock()
		fails++
		if dropped {
			drops++
		}
	}
	c.Delay = time.Millisecond
	q := New(c)
	if err := q.Put(context.Background(), 7, 70); err != nil {
		t.Fatal(err)
	}
	if err := q.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.data[7] != 70 || s.calls != 4 || fails != 3 || drops != 0 {
		t.Fatalf("got data %v, calls %d, failures %d, drops %d; want 70, 4, 3, 0", s.data[7], s.calls, fails, drops)
	}
}

// TestMaxAttemptsDrops: a writer that always fails drops the batch after
// MaxAttempts and the queue goes on.
func TestMaxAttemptsDrops(t *testing.T) {
	s := &store{data: map[int]int{}, failN: 1 << 30}
	c := cfg(s)
	c.MaxAttempts = 2
	var drops int
	c.OnError = func(_ error, keys, _ int, dropped bool) {
		if dropped {
			drops += keys
		}
	}
	q := New(c)
	_ = q.Put(context.Background(), 1, 1)
	if err := q.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s.calls != 2 || drops != 1 {
		t.Fatalf("got %d calls, %d dropped; want 2, 1", s.calls, drops)
	}
}

// TestBoundRespected: with the writer stuck, the queue takes QueueSize keys,
// then Put blocks until ctx ends (or returns ErrFull with FailWhenFull);
// a key already queued is still coalesced.
func TestBoundRespected(t *testing.T) {
	for _, fail := range []bool{false, true} {
		s := &store{data: map[int]int{}, block: make(chan struct{})}
		c := cfg(s)
		c.QueueSize, c.BatchSize, c.FailWhenFull = 5, 2, fail
		q := New(c)
		ctx := context.Background()
		for k := range 5 {
			if err := q.Put(ctx, k, k); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Put(ctx, 4, 44); err != nil {
			t.Fatalf("coalesced Put on a full queue: %v", err)
		}
		if n := q.Len(); n != 5 {
			t.Fatalf("Len = %d, want 5", n)
		}
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		err := q.Put(short, 9, 9)
		cancel()
		want := context.DeadlineExceeded
		if fail {
			want = ErrFull
		}
		if !errors.Is(err, want) {
			t.Fatalf("FailWhenFull %v: Put on a full queue: got %v, want %v", fail, err, want)
		}
		close(s.block)
		if err := q.Put(ctx, 9, 9); err != nil && !fail {
			t.Fatal(err)
		}
		if err := q.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if s.data[4] != 44 || len(s.data) < 5 {
			t.Fatalf("got %v, want keys 0-4 with 4=44", s.data)
		}
	}
}

// TestCloseGivesUp: Close whose ctx ends while the writer is stuck returns
// ErrUnflushed counting the lost keys, and leaves no goroutine.
func TestCloseGivesUp(t *testing.T) {
	s := &store{data: map[int]int{}, block: make(chan struct{})}
	c := cfg(s)
	c.BatchSize = 2
	q := New(c)
	for k := range 5 {
		_ = q.Put(context.Background(), k, k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	err := q.Close(ctx)
	if !errors.Is(err, ErrUnflushed) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want ErrUnflushed and DeadlineExceeded", err)
	}
	if got := err.Error(); got != "writebehind: not flushed: 5 keys lost: context deadline exceeded" {
		t.Fatalf("got %q", got)
	}
}

// TestDelayFlushes: without Flush, a key is written once Delay passed.
func TestDelayFlushes(t *testing.T) {
	s := &store{data: map[int]int{}}
	c := cfg(s)
	c.Delay = 10 * time.Millisecond
	q := New(c)
	defer q.Close(context.Background())
	_ = q.Put(context.Background(), 3, 3)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		s.mu.Lock()
		v := s.data[3]
		s.mu.Unlock()
		if v == 3 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("key not written within 10s of a 10ms Delay")
}
