package redisson

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"testing"
	"time"
)

// eventLog collects a MapCache's events as "kind key=value old=old".
type eventLog struct{ ch chan string }

func newEventLog() *eventLog { return &eventLog{ch: make(chan string, 1000)} }

func (l *eventLog) record(kind string) func(MapCacheEvent[string, any]) {
	return func(ev MapCacheEvent[string, any]) {
		l.ch <- fmt.Sprintf("%s %s=%v old=%v", kind, ev.Key, ev.Value, ev.OldValue)
	}
}

// next returns the next n events, sorted (the four kinds arrive on four
// subscriptions, in no order between them).
func (l *eventLog) next(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(20 * time.Second)
	for len(got) < n {
		select {
		case e := <-l.ch:
			got = append(got, e)
		case <-timeout:
			t.Fatalf("after 20s: %d events %q, want %d", len(got), got, n)
		}
	}
	sort.Strings(got)
	return got
}

// none checks that no event arrives for a while.
func (l *eventLog) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case e := <-l.ch:
		t.Errorf("unexpected event %q", e)
	case <-time.After(d):
	}
}

// listenAll subscribes log to the four kinds of m's events.
func listenAll(t *testing.T, ctx context.Context, m *MapCache[string, any], log *eventLog) {
	t.Helper()
	for kind, on := range map[string]func(context.Context, func(MapCacheEvent[string, any])) (func(), error){
		"created": m.OnCreated, "updated": m.OnUpdated, "removed": m.OnRemoved, "expired": m.OnExpired,
	} {
		stop, err := on(ctx, log.record(kind))
		if err != nil {
			t.Fatalf("On %s: %v", kind, err)
		}
		t.Cleanup(stop)
	}
}

// The event payloads of the recording (transcripts/RMapCache.md), hex.
const (
	recCreatedE1X   = "0300000000000000a265310200000000000000a178"                               // created e1=x (step 23)
	recUpdatedE1YX  = "0300000000000000a265310200000000000000a1790200000000000000a178"           // updated e1=y old x (step 24)
	recRemovedA1    = "0200000000000000a161010000000000000001"                                   // removed a=1 (step 29)
	recExpiredK2V2  = "0300000000000000a26b320300000000000000a27632"                             // expired k2=v2 (step 21)
	recExpiredK4L42 = "0300000000000000a26b34110000000000000092ae6a6176612e6c616e672e4c6f6e672a" // expired k4=42L (step 22)
)

// TestMapCacheListenersReceiveEachEvent checks that writes of this library
// publish Redisson's payloads (byte for byte the recorded ones for the same
// key and values) on Redisson's channels, and that the listeners decode
// them: created, updated with the old value, removed, expired by the
// eviction pass, and removed by the max size.
func TestMapCacheListenersReceiveEachEvent(t *testing.T) {
	rdb := sharedRedis(t)
	c := mapCacheClient(t, rdb, 20*time.Millisecond)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	keys := mapCacheKeys(name)
	m := GetMapCache[string, any](c, name)
	log := newEventLog()
	listenAll(t, ctx, m, log)
	if got := rdb.HGet(ctx, keys[mcOptions], "has-listeners").Val(); got != "1" {
		t.Fatalf("has-listeners = %q, want 1", got)
	}
	raw := rdb.Subscribe(ctx, keys[mcCreated:]...)
	t.Cleanup(func() { raw.Close() })
	for range 4 {
		if _, err := raw.Receive(ctx); err != nil {
			t.Fatal(err)
		}
	}
	payloads := raw.Channel()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, _, err := m.PutWithTTL(ctx, "e1", "x", time.Minute, 0)
	must(err)
	_, _, err = m.PutWithTTL(ctx, "e1", "y", time.Minute, 0)
	must(err)
	for i, want := range []struct{ channel, hex string }{{keys[mcCreated], recCreatedE1X}, {keys[mcUpdated], recUpdatedE1YX}} {
		select {
		case p := <-payloads:
			if p.Channel != want.channel || hex.EncodeToString([]byte(p.Payload)) != want.hex {
				t.Errorf("message %d: %s %x, want %s %s (the recording's)", i, p.Channel, p.Payload, want.channel, want.hex)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d not published", i)
		}
	}
	if got, want := log.next(t, 2), []string{"created e1=x old=<nil>", "updated e1=y old=x"}; !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}

	_, _, err = m.Remove(ctx, "e1")
	must(err)
	_, _, err = m.PutWithTTL(ctx, "short", "s", 100*time.Millisecond, 0)
	must(err)
	if got, want := log.next(t, 3), []string{"created short=s old=<nil>", "expired short=s old=<nil>", "removed e1=y old=<nil>"}; !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}

	must(m.SetMaxSize(ctx, 1))
	_, err = m.FastPut(ctx, "a", "1")
	must(err)
	_, err = m.FastPut(ctx, "b", "2")
	must(err)
	if got, want := log.next(t, 3), []string{"created a=1 old=<nil>", "created b=2 old=<nil>", "removed a=1 old=<nil>"}; !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	log.none(t, 200*time.Millisecond)
}

// TestMapCacheListenersHearRedissonWriters publishes the recorded messages
// of a Java Redisson client, byte for byte, on the map's channels, and
// checks what the listeners make of them.
func TestMapCacheListenersHearRedissonWriters(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	keys := mapCacheKeys(name)
	m := GetMapCache[string, any](c, name)
	log := newEventLog()
	listenAll(t, ctx, m, log)
	publish := func(channel int, hexPayload string) {
		t.Helper()
		b, _ := hex.DecodeString(hexPayload)
		if err := rdb.Publish(ctx, keys[channel], b).Err(); err != nil {
			t.Fatal(err)
		}
	}
	publish(mcCreated, recCreatedE1X)
	publish(mcUpdated, recUpdatedE1YX)
	publish(mcRemoved, recRemovedA1)
	publish(mcExpired, recExpiredK2V2)
	publish(mcExpired, recExpiredK4L42)
	publish(mcCreated, "0300000000000000a26531") // cut short: skipped
	want := []string{"created e1=x old=<nil>", "expired k2=v2 old=<nil>", "expired k4=42 old=<nil>", "removed a=1 old=<nil>", "updated e1=y old=x"}
	if got := log.next(t, 5); !equalStrings(got, want) {
		t.Errorf("events %q, want %q", got, want)
	}
	log.none(t, 200*time.Millisecond)
}

// TestMapCacheUnsubscribe checks that an unsubscribed listener hears no
// more events and that the channel is unsubscribed in Redis once its last
// local listener left.
func TestMapCacheUnsubscribe(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, &Options{SubscriptionLinger: time.Millisecond})
	ctx := testCtx(t, time.Minute)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, any](c, name)
	log := newEventLog()
	stop, err := m.OnCreated(ctx, log.record("created"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastPut(ctx, "a", "1"); err != nil {
		t.Fatal(err)
	}
	log.next(t, 1)
	stop()
	stop() // twice is harmless
	eventually(t, 10*time.Second, "the channel unsubscribed", func() bool {
		return rdb.PubSubNumSub(ctx, mapCacheKeys(name)[mcCreated]).Val()[mapCacheKeys(name)[mcCreated]] == 0
	})
	if _, err := m.FastPut(ctx, "b", "2"); err != nil {
		t.Fatal(err)
	}
	log.none(t, 200*time.Millisecond)
}

// TestMapCacheListenerCallsUnsubscribe checks that a listener may
// unsubscribe itself from its callback, and that Close then joins its
// goroutine.
func TestMapCacheListenerCallsUnsubscribe(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	m := GetMapCache[string, any](c, mapCacheName(t, rdb))
	var stop func()
	called := make(chan struct{}, 10)
	stop, err := m.OnCreated(ctx, func(MapCacheEvent[string, any]) {
		stop()
		called <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.FastPut(ctx, "a", "1"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-called:
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
	c.Close() // waits for the listener's goroutine
}

// TestMapCacheListenerCancelledContext checks that a listener asked for
// with an ended context is refused with the context's error and leaves
// nothing behind: no option written, no channel subscribed, no goroutine.
func TestMapCacheListenerCancelledContext(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	name := mapCacheName(t, rdb)
	m := GetMapCache[string, any](c, name)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.OnExpired(ctx, func(MapCacheEvent[string, any]) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("OnExpired with a cancelled context: got %v, want context.Canceled", err)
	}
	if after := nameState(t, rdb, name); after != "" {
		t.Errorf("keys written: %s", after)
	}
	if n := c.pubsub.stats().channels; n != 0 {
		t.Errorf("%d channels subscribed, want 0", n)
	}
	c.Close() // joins any listener goroutine: none may be counted
}
