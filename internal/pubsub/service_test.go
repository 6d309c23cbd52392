package pubsub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// These tests run the engine on a real redis-server with no Client: the
// service is built from a go-redis client and a Config alone.

var errTestClosed = errors.New("test: service closed")

// newService returns a service over rdb, closed when the test ends, and the
// channel its reports arrive on.
func newService(t *testing.T, rdb redis.UniversalClient, linger time.Duration) (*Service, <-chan Report) {
	t.Helper()
	reports := make(chan Report, 64)
	p := New(Config{
		Redis: rdb, Health: 100 * time.Millisecond, Linger: linger, Closed: errTestClosed,
		Report: func(r Report) {
			select {
			case reports <- r:
			default:
			}
		},
	})
	t.Cleanup(p.Close)
	return p, reports
}

// recorder is a Listener that records what it is told.
type recorder struct {
	msgs    chan string
	resumed chan struct{}
	lost    chan struct{}
}

func newRecorder() *recorder {
	return &recorder{msgs: make(chan string, 16), resumed: make(chan struct{}, 16), lost: make(chan struct{}, 16)}
}

func (r *recorder) Message(payload string) { r.msgs <- payload }
func (r *recorder) Lost()                  { r.lost <- struct{}{} }
func (r *recorder) Resumed()               { r.resumed <- struct{}{} }
func (r *recorder) Resubscribed()          {}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func numSub(ctx context.Context, rdb *redis.Client, channel string) int64 {
	return rdb.PubSubNumSub(ctx, channel).Val()[channel]
}

// A waiter subscribed through the engine is woken by a message its policy
// counts, and the channel is unsubscribed when its last subscription
// leaves (no linger).
func TestServiceSubscribeWaitWake(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	p, _ := newService(t, rdb, 0)
	ctx := testCtx(t)
	const channel = "test:pubsub:wake"
	if sharded, err := p.ObjectsSharded(ctx); sharded || err != nil {
		t.Fatalf("ObjectsSharded outside Cluster = %v, %v; want false, nil", sharded, err)
	}
	if sharded, known := p.Known(); sharded || !known {
		t.Fatalf("Known after the probe = %v, %v; want false, true", sharded, known)
	}
	sub, err := p.Subscribe(ctx, Object{Name: channel}, lockPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if !sub.Ready(ctx, 10*time.Second) {
		t.Fatal("subscription not confirmed")
	}
	if !p.Listening(channel) || numSub(ctx, rdb, channel) != 1 {
		t.Fatal("the channel is not subscribed in Redis")
	}
	done := make(chan error, 1)
	go func() {
		ok, err := sub.Wait(ctx, 10*time.Second)
		if err == nil && !ok {
			err = errors.New("wait timed out")
		}
		done <- err
	}()
	eventually(t, 5*time.Second, "waiter queued", func() bool { return p.Waiters(Object{Name: channel}) == 1 })
	if err := rdb.Publish(ctx, channel, "x").Err(); err != nil { // ignored by the policy
		t.Fatal(err)
	}
	if err := rdb.Publish(ctx, channel, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sub.Close()
	eventually(t, 5*time.Second, "channel dropped", func() bool {
		return p.Stats().Channels == 0 && numSub(ctx, rdb, channel) == 0
	})
	if p.Listening(channel) {
		t.Fatal("still listening after the last subscription left")
	}
}

// Listeners get every message in order; a second listener joining a
// confirmed channel is told Resumed at once and shares the subscription.
func TestServiceListenersShareOneSubscription(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	p, _ := newService(t, rdb, 0)
	ctx := testCtx(t)
	const channel = "test:pubsub:listen"
	a, b := newRecorder(), newRecorder()
	sa, err := p.Listen(ctx, Key{Name: channel}, a)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-sa.Confirmed():
	case <-time.After(10 * time.Second):
		t.Fatal("listener's subscription not confirmed")
	}
	<-a.resumed
	sb, err := p.Listen(ctx, Key{Name: channel}, b)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.resumed:
	default:
		t.Fatal("a listener joining a confirmed channel was not told Resumed")
	}
	if n := numSub(ctx, rdb, channel); n != 1 {
		t.Fatalf("PUBSUB NUMSUB = %d; want 1", n)
	}
	for _, m := range []string{"1", "2", "3"} {
		rdb.Publish(ctx, channel, m)
	}
	for _, r := range []*recorder{a, b} {
		for _, want := range []string{"1", "2", "3"} {
			select {
			case got := <-r.msgs:
				if got != want {
					t.Fatalf("message %q; want %q", got, want)
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("message %q not delivered", want)
			}
		}
	}
	sa.Close()
	rdb.Publish(ctx, channel, "4")
	if got := <-b.msgs; got != "4" {
		t.Fatalf("message %q; want 4", got)
	}
	select {
	case got := <-a.msgs:
		t.Fatalf("closed listener got %q", got)
	default:
	}
	sb.Close()
	eventually(t, 5*time.Second, "channel dropped", func() bool { return numSub(ctx, rdb, channel) == 0 })
}

// A channel whose last subscription left stays subscribed for the linger:
// Join finds it without I/O meanwhile; it is dropped when the linger ends.
func TestServiceLingerAndJoin(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	p, _ := newService(t, rdb, 300*time.Millisecond)
	ctx := testCtx(t)
	ch := Object{Name: "test:pubsub:linger"}
	if sub, _, _ := p.Join(ch); sub != nil {
		t.Fatal("Join found a channel nobody subscribed")
	}
	sub, err := p.Subscribe(ctx, ch, lockPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if !sub.Ready(ctx, 10*time.Second) {
		t.Fatal("subscription not confirmed")
	}
	sub.Close()
	again, queued, _ := p.Join(ch)
	if again == nil || queued {
		t.Fatalf("Join during the linger = %v, queued %v; want a subscription, nobody queued", again, queued)
	}
	again.Close()
	eventually(t, 5*time.Second, "lingering channel dropped", func() bool {
		return !p.Listening(ch.Name) && numSub(ctx, rdb, ch.Name) == 0
	})
}

// Close ends every wait with Config.Closed, and later subscriptions fail
// with it.
func TestServiceCloseEndsWaits(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	p, _ := newService(t, rdb, 0)
	ctx := testCtx(t)
	ch := Object{Name: "test:pubsub:close"}
	sub, err := p.Subscribe(ctx, ch, lockPolicy)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := sub.Wait(ctx, 0); done <- err }()
	eventually(t, 10*time.Second, "waiter queued", func() bool { return p.Waiters(ch) == 1 })
	p.Close()
	if err := <-done; !errors.Is(err, errTestClosed) {
		t.Fatalf("wait after Close = %v; want Config.Closed", err)
	}
	if _, err := p.Subscribe(ctx, ch, lockPolicy); !errors.Is(err, errTestClosed) {
		t.Fatalf("Subscribe after Close = %v; want Config.Closed", err)
	}
	p.Close() // a second Close does nothing
}

// A killed connection is reported lost, go-redis dials it again, the
// channel is confirmed anew (listeners told Lost, then Resumed) and the
// waiters are woken to poll once, since a message may have been missed.
func TestServiceReconnectReportsAndWakes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	p, reports := newService(t, rdb, 0)
	ctx := testCtx(t)
	ch := Object{Name: "test:pubsub:reconnect"}
	sub, err := p.Subscribe(ctx, ch, lockPolicy)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	r := newRecorder()
	ls, err := p.Listen(ctx, Key{Name: ch.Name}, r)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if !sub.Ready(ctx, 10*time.Second) {
		t.Fatal("subscription not confirmed")
	}
	<-r.resumed
	done := make(chan error, 1)
	go func() {
		ok, err := sub.Wait(ctx, 20*time.Second)
		if err == nil && !ok {
			err = errors.New("wait timed out")
		}
		done <- err
	}()
	eventually(t, 10*time.Second, "waiter queued", func() bool { return p.Waiters(ch) == 1 })
	if err := rdb.Do(ctx, "client", "kill", "type", "pubsub").Err(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter after the reconnect: %v", err)
	}
	select {
	case <-r.lost:
	case <-time.After(10 * time.Second):
		t.Fatal("listener not told Lost")
	}
	select {
	case <-r.resumed:
	case <-time.After(10 * time.Second):
		t.Fatal("listener not told Resumed")
	}
	seen := map[ReportKind]bool{}
	for !seen[Lost] || !seen[Replaced] {
		select {
		case rep := <-reports:
			seen[rep.Kind] = true
			if rep.Kind == Lost && rep.Err == nil {
				t.Fatal("Lost report without its error")
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("reports %v; want Lost and Replaced", seen)
		}
	}
	if p.Stats().Redialed == 0 {
		t.Fatal("Stats().Redialed = 0 after a re-dial")
	}
}
