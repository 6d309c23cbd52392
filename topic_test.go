package redisson

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

type topicEvent struct {
	ID   int    `msgpack:"id" json:"id"`
	Text string `msgpack:"text" json:"text"`
}

// recv reads n values from ch or fails after a generous bound.
func recv[T any](t *testing.T, ch <-chan T, n int) []T {
	t.Helper()
	var got []T
	timeout := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case v, ok := <-ch:
			if !ok {
				t.Fatalf("channel closed after %d of %d messages", len(got), n)
			}
			got = append(got, v)
		case <-timeout:
			t.Fatalf("received %d of %d messages", len(got), n)
		}
	}
	return got
}

// Three local subscribers of one topic share one Redis subscription, each
// gets every message in publish order, and Publish counts the client once.
func TestTopicLocalSubscribersShareOneSubscription(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	topic := GetTopic[topicEvent](c, name)

	chans := make([]chan topicEvent, 3)
	for i := range chans {
		ch := make(chan topicEvent, 100)
		chans[i] = ch
		s, err := topic.Subscribe(ctx, func(e topicEvent) { ch <- e })
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
	}
	if n := rdb.PubSubNumSub(ctx, name).Val()[name]; n != 1 {
		t.Fatalf("PUBSUB NUMSUB = %d; want 1 (one Redis subscription for 3 local subscribers)", n)
	}
	for i := 0; i < 50; i++ {
		n, err := topic.Publish(ctx, topicEvent{ID: i, Text: "e"})
		if err != nil || n != 1 {
			t.Fatalf("Publish = %d, %v; want 1 receiving client", n, err)
		}
	}
	for i, ch := range chans {
		got := recv(t, ch, 50)
		for j, e := range got {
			if e.ID != j || e.Text != "e" {
				t.Fatalf("subscriber %d message %d = %+v; want id %d in order", i, j, e, j)
			}
		}
	}
}

// Channel delivers in order and is closed by cancel; the last subscriber
// leaving unsubscribes in Redis (after the linger).
func TestTopicChannelAndCancel(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{SubscriptionLinger: time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	topic := GetTopic[string](c, name, WithCodec(StringCodec{}))
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"a", "b", "c"} {
		if _, err := topic.Publish(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(recv(t, ch, 3)); got != "[a b c]" {
		t.Fatalf("got %s; want [a b c]", got)
	}
	cancel()
	cancel() // idempotent
	select {
	case _, ok := <-ch:
		if ok {
			t.Fatal("message delivered after cancel")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("channel not closed after cancel")
	}
	eventually(t, 10*time.Second, "unsubscribed in Redis", func() bool {
		return rdb.PubSubNumSub(ctx, name).Val()[name] == 0 && c.pubsub.stats().channels == 0
	})
}

// A handler that blocks delays only its own subscriber: the other one gets
// every message, and the blocked one drops (and counts) what overflows its
// buffer instead of blocking the connection.
func TestTopicSlowHandlerDoesNotBlockOthers(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	topic := GetTopic[int](c, name)
	other := GetTopic[int](c, name+":other")

	release := make(chan struct{})
	blocked, err := topic.Subscribe(ctx, func(int) { <-release }, WithBuffer(4))
	if err != nil {
		t.Fatal(err)
	}
	defer blocked.Close()
	fast := make(chan int, 1000)
	s, err := topic.Subscribe(ctx, func(v int) { fast <- v })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	otherCh := make(chan int, 10)
	s2, err := other.Subscribe(ctx, func(v int) { otherCh <- v })
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()

	const n = 200
	for i := 0; i < n; i++ {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.Publish(ctx, 7); err != nil {
		t.Fatal(err)
	}
	got := recv(t, fast, n)
	for i, v := range got {
		if v != i {
			t.Fatalf("fast subscriber message %d = %d", i, v)
		}
	}
	if v := recv(t, otherCh, 1)[0]; v != 7 {
		t.Fatalf("other topic got %d; want 7", v)
	}
	// The blocked subscriber holds 1 message in its handler and 4 in its
	// buffer; the rest were dropped for it alone.
	if d := blocked.Dropped(); d < n-6 || d > n-4 {
		t.Fatalf("blocked subscriber dropped %d; want about %d", d, n-5)
	}
	if s.Dropped() != 0 {
		t.Fatalf("fast subscriber dropped %d", s.Dropped())
	}
	close(release)
}

// A message that does not decode is skipped and reported to the error
// handler as an ErrCodec error naming the topic and codec; later messages
// still arrive.
func TestTopicUndecodableMessage(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	topic := GetTopic[int64](c, name)
	errs := make(chan error, 10)
	got := make(chan int64, 10)
	s, err := topic.Subscribe(ctx, func(v int64) { got <- v }, WithErrorHandler(func(err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rdb.Publish(ctx, name, "\xa5hello") // a msgpack string, not an integer
	if _, err := topic.Publish(ctx, 42); err != nil {
		t.Fatal(err)
	}
	if v := recv(t, got, 1)[0]; v != 42 {
		t.Fatalf("got %d; want 42", v)
	}
	err = recv(t, errs, 1)[0]
	if !errors.Is(err, ErrCodec) {
		t.Fatalf("error %v; want ErrCodec", err)
	}
	if want := fmt.Sprintf("topic %q: msgpack codec", name); !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not name %s", err, want)
	}
	if s.DecodeErrors() != 1 {
		t.Fatalf("DecodeErrors = %d; want 1", s.DecodeErrors())
	}
}

// Subscriptions come back after the pub/sub connection is killed: a
// message published after the reconnection is delivered.
func TestTopicSurvivesClientKill(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{PubSubHealthCheck: 200 * time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := "topic:" + t.Name()
	topic := GetTopic[string](c, name)
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	subscribed := func() bool { return rdb.PubSubNumSub(ctx, name).Val()[name] == 1 }
	for round := 0; round < 2; round++ {
		if n, err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result(); err != nil || n != 1 {
			t.Fatalf("CLIENT KILL TYPE pubsub = %d, %v; want 1", n, err)
		}
		eventually(t, 15*time.Second, "re-subscribed", subscribed)
		msg := fmt.Sprint("after kill ", round)
		if _, err := topic.Publish(ctx, msg); err != nil {
			t.Fatal(err)
		}
		if got := recv(t, ch, 1)[0]; got != msg {
			t.Fatalf("got %q; want %q", got, msg)
		}
	}
}

// Values published by another writer with Redisson's StringCodec (plain
// UTF-8) arrive on a StringCodec topic, and what the topic publishes is
// the plain text a Java subscriber with StringCodec expects.
func TestTopicStringCodecInterop(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	topic := GetTopic[string](c, name, WithCodec(StringCodec{}))
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cancel()
	raw := rdb.Subscribe(ctx, name)
	defer raw.Close()
	if _, err := raw.Receive(ctx); err != nil { // subscription confirmed
		t.Fatal(err)
	}
	if n := rdb.Publish(ctx, name, "from java").Val(); n != 2 {
		t.Fatalf("PUBLISH reached %d clients; want 2", n)
	}
	if got := recv(t, ch, 1)[0]; got != "from java" {
		t.Fatalf("got %q", got)
	}
	if _, err := raw.ReceiveMessage(ctx); err != nil { // its own copy
		t.Fatal(err)
	}
	if _, err := topic.Publish(ctx, "from go"); err != nil {
		t.Fatal(err)
	}
	m, err := raw.ReceiveMessage(ctx)
	if err != nil || m.Payload != "from go" {
		t.Fatalf("raw subscriber got %v, %v; want \"from go\"", m, err)
	}
}

// Bad input is refused with documented errors, and nothing is subscribed.
func TestTopicBadInput(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	if _, err := GetTopic[int](c, "").Publish(ctx, 1); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name Publish: %v", err)
	}
	if _, err := GetTopic[int](c, "").Subscribe(ctx, func(int) {}); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("empty name Subscribe: %v", err)
	}
	if _, err := GetTopic[int](c, name).Subscribe(ctx, nil); !errors.Is(err, ErrInvalidOption) {
		t.Fatalf("nil handler: %v", err)
	}
	if _, _, err := GetTopic[int](c, name).Channel(ctx, WithBuffer(0)); !errors.Is(err, ErrInvalidBuffer) {
		t.Fatalf("buffer 0: %v", err)
	}
	if _, err := GetTopic[func()](c, name).Publish(ctx, func() {}); !errors.Is(err, ErrCodec) {
		t.Fatalf("unencodable message: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := GetTopic[int](c, name).Subscribe(cctx, func(int) {}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: %v", err)
	}
	eventually(t, 10*time.Second, "no channel left", func() bool { return c.pubsub.stats().channels == 0 })
	c.Close()
	if _, err := GetTopic[int](c, name).Publish(ctx, 1); !errors.Is(err, ErrClientClosed) {
		t.Fatalf("closed client: %v", err)
	}
	if n := rdb.PubSubNumSub(ctx, name).Val()[name]; n != 0 {
		t.Fatalf("%d subscriptions left", n)
	}
}

// On a 3-master cluster, plain and sharded topics with names on every
// master deliver to subscribers of two clients; the sharded ones are
// SSUBSCRIBEd on the master serving their slot, with one connection per
// master at most.
func TestTopicCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	a := newClient(t, rdb, nil)
	b := newClient(t, cl.Client(t), nil)
	ctx := testCtx(t, time.Minute)
	for _, sharded := range []bool{false, true} {
		t.Run(fmt.Sprintf("sharded=%v", sharded), func(t *testing.T) {
			if sharded {
				redistest.RequireServer(t, 7, "sharded pub/sub (SSUBSCRIBE, SPUBLISH)")
			}
			get := GetTopic[string]
			if sharded {
				get = GetShardedTopic[string]
			}
			var names []string
			masters := map[string]bool{}
			for i := 0; len(masters) < 3 || len(names) < 9; i++ {
				n := fmt.Sprintf("%s:%v:%d", uniqueName(t, rdb), sharded, i)
				node, err := rdb.MasterForKey(ctx, n)
				if err != nil {
					t.Fatal(err)
				}
				masters[node.Options().Addr] = true
				names = append(names, n)
			}
			var cancels []func()
			chans := map[string][]<-chan string{}
			for _, n := range names {
				for _, c := range []*Client{a, b} {
					ch, cancel, err := get(c, n).Channel(ctx)
					if err != nil {
						t.Fatal(err)
					}
					cancels = append(cancels, cancel)
					chans[n] = append(chans[n], ch)
				}
			}
			for _, n := range names {
				count, err := get(a, n).Publish(ctx, "m:"+n)
				if err != nil {
					t.Fatal(err)
				}
				if sharded && count != 2 {
					t.Fatalf("SPUBLISH %s reached %d clients; want 2", n, count)
				}
				for _, ch := range chans[n] {
					if got := recv(t, ch, 1)[0]; got != "m:"+n {
						t.Fatalf("topic %s got %q", n, got)
					}
				}
				if sharded {
					node, _ := rdb.MasterForKey(ctx, n)
					if k := node.PubSubShardNumSub(ctx, n).Val()[n]; k != 2 {
						t.Fatalf("SHARDNUMSUB %s on its master = %d; want 2", n, k)
					}
				}
			}
			if sharded && (a.pubsub.stats().connections > 4 || a.pubsub.stats().connections < 3) {
				t.Fatalf("client a uses %d pub/sub connections; want one per master (3) plus the plain one", a.pubsub.stats().connections)
			}
			for _, cancel := range cancels {
				cancel()
			}
		})
	}
}

// BenchmarkTopic measures Publish (one round trip) and the delivery of a
// published message to a subscriber's handler (publish to handler, same
// process): round trips and allocs per message.
//
//	go test -run '^$' -bench BenchmarkTopic -benchmem .
func BenchmarkTopic(b *testing.B) {
	b.Run("Publish", func(b *testing.B) {
		benchTyped(b, func(ctx context.Context, c *Client) func() error {
			t := GetTopic[topicEvent](c, "bench:topic")
			return func() error {
				_, err := t.Publish(ctx, topicEvent{ID: 1, Text: "paid"})
				return err
			}
		})
	})
	b.Run("PublishToHandler", func(b *testing.B) {
		benchPublishToHandler(b, func(ctx context.Context, c *Client, handler func(topicEvent)) (func(context.Context, topicEvent) error, func()) {
			t := GetTopic[topicEvent](c, "bench:topic:delivered")
			s, err := t.Subscribe(ctx, handler)
			if err != nil {
				b.Fatal(err)
			}
			return func(ctx context.Context, e topicEvent) error { _, err := t.Publish(ctx, e); return err }, s.Close
		})
	})
}

// benchPublishToHandler measures a publish through to a handler in the same
// process: subscribe subscribes handler and returns the publish call and the
// subscription's close.
func benchPublishToHandler(b *testing.B, subscribe func(ctx context.Context, c *Client, handler func(topicEvent)) (func(context.Context, topicEvent) error, func())) {
	got := make(chan topicEvent, 1)
	var stop func()
	benchTyped(b, func(ctx context.Context, c *Client) func() error {
		publish, closeSub := subscribe(ctx, c, func(e topicEvent) { got <- e })
		stop = closeSub
		return func() error {
			if err := publish(ctx, topicEvent{ID: 1, Text: "paid"}); err != nil {
				return err
			}
			<-got
			return nil
		}
	})
	stop()
}

// A handler that closes its own subscription, and a handler
// blocked while the client closes, both end (goleak checks the rest).
func TestTopicSubscriptionEndsOnSelfCloseAndClientClose(t *testing.T) {
	rdb := sharedRedis(t)
	c, err := New(rdb, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testCtx(t, time.Minute)
	topic := GetTopic[int](c, "test:topic:"+t.Name())
	var self *TopicSubscription
	selfReady := make(chan struct{})
	self, err = topic.Subscribe(ctx, func(int) { <-selfReady; self.Close() })
	if err != nil {
		t.Fatal(err)
	}
	close(selfReady)
	release := make(chan struct{})
	blocked, err := topic.Subscribe(ctx, func(int) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	ch, cancel, err := topic.Channel(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = cancel
	for i := 0; i < 3; i++ {
		if _, err := topic.Publish(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-self.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("self-closing subscriber still running")
	}
	if v := <-ch; v != 0 {
		t.Fatalf("Channel got %d; want 0", v)
	}
	c.Close()
	close(release)
	select {
	case <-blocked.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("blocked subscriber still running after client Close")
	}
	for range ch { // closed after client Close
	}
	blocked.Close()
	cancel()
}
