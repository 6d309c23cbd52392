package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// reliableName is a unique topic name whose two keys are deleted when the
// test ends.
func reliableName(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	name := uniqueName(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), suffixName(name, "timeout")) })
	return name
}

// collector gathers what a handler receives.
type collector[T any] struct {
	mu  sync.Mutex
	got []T
	ch  chan struct{}
}

func newCollector[T any]() *collector[T] { return &collector[T]{ch: make(chan struct{}, 1<<16)} }

func (c *collector[T]) add(v T) {
	c.mu.Lock()
	c.got = append(c.got, v)
	c.mu.Unlock()
	c.ch <- struct{}{}
}

// wait returns the first n values received, failing after a generous bound.
func (c *collector[T]) wait(t *testing.T, n int) []T {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		c.mu.Lock()
		if len(c.got) >= n {
			out := append([]T(nil), c.got...)
			c.mu.Unlock()
			return out
		}
		have := len(c.got)
		c.mu.Unlock()
		select {
		case <-c.ch:
		case <-timeout:
			t.Fatalf("received %d of %d messages", have, n)
		}
	}
}

func seq(from, to int) []int {
	var out []int
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func sameInts(t *testing.T, what string, got, want []int) {
	t.Helper()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// Two subscribers each receive every message in publish order; Publish
// counts them; what both consumed is trimmed.
func TestReliableTopicFanOutInOrder(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb))
	var cols []*collector[int]
	for range 2 {
		col := newCollector[int]()
		s, err := topic.Subscribe(ctx, col.add)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		cols = append(cols, col)
	}
	if n, err := topic.CountSubscribers(ctx); err != nil || n != 2 {
		t.Fatalf("CountSubscribers = %d, %v; want 2", n, err)
	}
	for i := range 200 {
		n, err := topic.Publish(ctx, i)
		if err != nil || n != 2 {
			t.Fatalf("Publish = %d, %v; want 2", n, err)
		}
	}
	for i, col := range cols {
		sameInts(t, fmt.Sprintf("subscriber %d", i), col.wait(t, 200), seq(0, 200))
	}
	waitFor(t, "the consumed entries trimmed", func() bool {
		topic.Publish(ctx, 200) // trims what both consumed
		n, _ := topic.Size(ctx)
		return n <= 2
	})
}

// A slow subscriber does not hold back another one.
func TestReliableTopicSlowHandlerDelaysOnlyItself(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb))
	release := make(chan struct{})
	slow, err := topic.Subscribe(ctx, func(int) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	defer close(release)
	fast := newCollector[int]()
	s, err := topic.Subscribe(ctx, fast.add)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 20 {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	sameInts(t, "fast subscriber", fast.wait(t, 20), seq(0, 20))
	if n := slow.Handled(); n > 1 {
		t.Fatalf("slow subscriber handled %d; want at most 1 (its handler is blocked)", n)
	}
	// The slow subscriber's unread messages are kept.
	if n, _ := topic.Size(ctx); n < 19 {
		t.Fatalf("Size = %d while the slow subscriber has 19+ unread; want >= 19", n)
	}
}

// Channel delivers in order and closes after cancel.
func TestReliableTopicChannel(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[string](c, reliableName(t, rdb))
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b", "c"} {
		if _, err := topic.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := recv(t, ch, 3); fmt.Sprint(got) != "[a b c]" {
		t.Fatalf("got %v, want [a b c]", got)
	}
	cancel()
	for range ch {
	}
	waitFor(t, "the random-id subscriber removed", func() bool {
		n, _ := topic.CountSubscribers(ctx)
		return n == 0
	})
}

// Entries that do not decode are reported and skipped, and the subscriber
// goes on.
func TestReliableTopicUndecodableReported(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := reliableName(t, rdb)
	topic := GetReliableTopic[string](c, name)
	var mu sync.Mutex
	var errs []error
	col := newCollector[string]()
	s, err := topic.Subscribe(ctx, col.add, WithSubscriberErrors(func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"m", "\xc1"}})    // not msgpack
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"x", "\xa2v1"}})  // no field m
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"m", "\xa3ok1"}}) // fine
	if _, err := topic.Publish(ctx, "ok2"); err != nil {
		t.Fatal(err)
	}
	if got := col.wait(t, 2); fmt.Sprint(got) != "[ok1 ok2]" {
		t.Fatalf("got %v, want [ok1 ok2]", got)
	}
	if n := s.DecodeErrors(); n != 2 {
		t.Fatalf("DecodeErrors = %d, want 2", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 2 || !errors.Is(errs[0], ErrCodec) || !errors.Is(errs[1], ErrCodec) {
		t.Fatalf("errors reported = %v; want 2 ErrCodec", errs)
	}
}

// Bad input is refused with its sentinel and leaves Redis unchanged.
func TestReliableTopicBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := reliableName(t, rdb)
	timeouts := suffixName(name, "timeout")
	topic := GetReliableTopic[string](c, name)
	for _, tc := range []struct {
		what string
		err  error
		call func() error
	}{
		{"nil handler", ErrInvalidOption, func() error { _, err := topic.Subscribe(ctx, nil); return err }},
		{"empty id", ErrInvalidOption, func() error {
			_, err := topic.Subscribe(ctx, func(string) {}, WithSubscriberID(""))
			return err
		}},
		{"short timeout", ErrInvalidSubscriberTimeout, func() error {
			_, err := topic.Subscribe(ctx, func(string) {}, WithSubscriberTimeout(time.Millisecond))
			return err
		}},
		{"max length -2", ErrInvalidRetention, func() error {
			_, err := GetReliableTopic[string](c, name, WithRetention(-2, 0)).Publish(ctx, "x")
			return err
		}},
		{"negative max age", ErrInvalidRetention, func() error {
			_, err := GetReliableTopic[string](c, name, WithRetention(-1, -time.Second)).Publish(ctx, "x")
			return err
		}},
		{"cancelled context", context.Canceled, func() error {
			cctx, cancel := context.WithCancel(ctx)
			cancel()
			_, err := topic.Subscribe(cctx, func(string) {})
			return err
		}},
		{"empty name", ErrEmptyName, func() error { _, err := GetReliableTopic[string](c, "").Publish(ctx, "x"); return err }},
	} {
		if err := tc.call(); !errors.Is(err, tc.err) {
			t.Fatalf("%s: got %v, want %v", tc.what, err, tc.err)
		}
		if n := rdb.Exists(ctx, name, timeouts).Val(); n != 0 {
			t.Fatalf("%s: %d keys written, want none", tc.what, n)
		}
	}
	// A key of another type, the stream's or the zset's.
	for _, key := range []string{name, timeouts} {
		rdb.Set(ctx, key, "foreign", 0)
		calls := map[string]func() error{
			"Publish":   func() error { _, err := topic.Publish(ctx, "x"); return err },
			"Subscribe": func() error { _, err := topic.Subscribe(ctx, func(string) {}); return err },
		}
		if key == name {
			calls["Size"] = func() error { _, err := topic.Size(ctx); return err }
			calls["CountSubscribers"] = func() error { _, err := topic.CountSubscribers(ctx); return err }
		}
		for what, call := range calls {
			if err := call(); !errors.Is(err, ErrWrongType) {
				t.Fatalf("%s with %s a string: got %v, want ErrWrongType", what, key, err)
			}
		}
		if v := rdb.Get(ctx, key).Val(); v != "foreign" {
			t.Fatalf("%s = %q after the calls, want it unchanged", key, v)
		}
		if n := rdb.Exists(ctx, name, timeouts).Val(); n != 1 {
			t.Fatalf("%d keys exist, want only the foreign one", n)
		}
		rdb.Del(ctx, key)
	}
}

// BenchmarkReliableTopic measures Publish with one subscriber registered
// (one script: append, sweep, trim) and a publish through to the handler of
// a subscriber in the same process (its read, and its acknowledgement
// script once per batch).
//
//	go test -run '^$' -bench BenchmarkReliableTopic -benchmem .
func BenchmarkReliableTopic(b *testing.B) {
	b.Run("PublishToHandler", func(b *testing.B) {
		benchPublishToHandler(b, func(ctx context.Context, c *Client, handler func(topicEvent)) (func(context.Context, topicEvent) error, func()) {
			t := GetReliableTopic[topicEvent](c, "bench:rtopic")
			s, err := t.Subscribe(ctx, handler)
			if err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, e topicEvent) error { _, err := t.Publish(ctx, e); return err }, s.Close
		})
	})
}
