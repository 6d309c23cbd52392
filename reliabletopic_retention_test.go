package redisson

import (
	"context"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// Without subscribers the topic keeps at most WithRetention's length; a
// new subscriber receives what is kept.
func TestReliableTopicRetentionByLength(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb), WithRetention(5, 0))
	for i := range 10 {
		if n, err := topic.Publish(ctx, i); err != nil || n != 0 {
			t.Fatalf("Publish = %d, %v; want 0", n, err)
		}
	}
	if n, _ := topic.Size(ctx); n != 5 {
		t.Fatalf("Size = %d, want 5", n)
	}
	col := newCollector[int]()
	s, err := topic.Subscribe(ctx, col.add)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameInts(t, "new subscriber", col.wait(t, 5), seq(5, 10))
}

// Without subscribers the topic keeps nothing older than WithRetention's
// age (on the server's clock).
func TestReliableTopicRetentionByAge(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb), WithRetention(-1, time.Second))
	for i := range 3 {
		topic.Publish(ctx, i)
	}
	time.Sleep(1500 * time.Millisecond) // only a lower bound matters
	topic.Publish(ctx, 3)
	if n, _ := topic.Size(ctx); n != 1 {
		t.Fatalf("Size = %d, want 1 (the three older than a second trimmed)", n)
	}
}

// Retention never trims what a registered subscriber has not consumed: a
// subscriber with a stable id closed and resubscribed within its timeout
// receives everything published meanwhile, even with a retention of 0.
func TestReliableTopicResumeKeepsUnread(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb), WithRetention(0, time.Millisecond))
	col := newCollector[int]()
	s, err := topic.Subscribe(ctx, col.add, WithSubscriberID("stable"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Resumed() {
		t.Fatal("Resumed = true for a new subscriber")
	}
	for i := range 5 {
		topic.Publish(ctx, i)
	}
	col.wait(t, 5)
	s.Close()
	<-s.Done()
	for i := 5; i < 30; i++ {
		if n, err := topic.Publish(ctx, i); err != nil || n != 1 {
			t.Fatalf("Publish while the subscriber is away = %d, %v; want 1", n, err)
		}
	}
	time.Sleep(20 * time.Millisecond)
	topic.Publish(ctx, 30)
	if n, _ := topic.Size(ctx); n != 26 {
		t.Fatalf("Size = %d, want the 26 unread kept", n)
	}
	s, err = topic.Subscribe(ctx, col.add, WithSubscriberID("stable"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Resumed() {
		t.Fatal("Resumed = false within the timeout")
	}
	sameInts(t, "resumed subscriber", col.wait(t, 31), seq(0, 31))
}

// A subscriber whose timeout ran out is removed (its group destroyed) by
// the next publish; subscribing again under its id starts afresh.
func TestReliableTopicExpiredSubscriberRemoved(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := reliableName(t, rdb)
	topic := GetReliableTopic[int](c, name, WithRetention(0, 0))
	s, err := topic.Subscribe(ctx, func(int) {}, WithSubscriberID("short"), WithSubscriberTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	<-s.Done()
	topic.Publish(ctx, 1)
	if n, _ := topic.CountSubscribers(ctx); n != 1 {
		t.Fatalf("CountSubscribers = %d within the timeout, want 1", n)
	}
	time.Sleep(1500 * time.Millisecond)
	if n, err := topic.Publish(ctx, 2); err != nil || n != 0 {
		t.Fatalf("Publish after the timeout = %d, %v; want 0", n, err)
	}
	if n, _ := topic.Size(ctx); n != 0 {
		t.Fatalf("Size = %d after the expired subscriber's removal, want 0 (retention 0)", n)
	}
	if rdb.Exists(ctx, suffixName(name, "timeout")).Val() != 0 {
		t.Fatal("the timeout zset still holds the expired subscriber")
	}
	s, err = topic.Subscribe(ctx, func(int) {}, WithSubscriberID("short"), WithSubscriberTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Resumed() {
		t.Fatal("Resumed = true after the timeout ran out")
	}
}

// A live subscriber refreshes its expiry: with a three-second timeout it
// stays registered while idle for longer than that.
func TestReliableTopicLiveSubscriberRefreshes(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	topic := GetReliableTopic[int](c, reliableName(t, rdb))
	col := newCollector[int]()
	s, err := topic.Subscribe(ctx, col.add, WithSubscriberTimeout(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 4 {
		time.Sleep(time.Second)
		if n, err := topic.Publish(ctx, i); err != nil || n != 1 {
			t.Fatalf("Publish after %d s idle = %d, %v; want 1", i+1, n, err)
		}
	}
	sameInts(t, "live subscriber", col.wait(t, 4), seq(0, 4))
}

// On Redis Cluster both keys share the name's slot (with or without a hash
// tag in the name), and publish, subscribe, trimming and expiry work there.
func TestReliableTopicCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	for _, name := range []string{reliableName(t, rdb), "{" + reliableName(t, rdb) + "}:events"} {
		t.Cleanup(func() { rdb.Del(context.Background(), name, suffixName(name, "timeout")) })
		if hashSlot(name) != hashSlot(suffixName(name, "timeout")) {
			t.Fatalf("%s: keys in different slots", name)
		}
		topic := GetReliableTopic[int](c, name, WithRetention(0, 0))
		col := newCollector[int]()
		s, err := topic.Subscribe(ctx, col.add, WithSubscriberID("cluster"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for i := range 50 {
			if n, err := topic.Publish(ctx, i); err != nil || n != 1 {
				t.Fatalf("%s: Publish = %d, %v; want 1", name, n, err)
			}
		}
		sameInts(t, name, col.wait(t, 50), seq(0, 50))
		if err := s.Unsubscribe(ctx); err != nil {
			t.Fatal(err)
		}
		if n, _ := topic.CountSubscribers(ctx); n != 0 {
			t.Fatalf("%s: CountSubscribers after Unsubscribe = %d, want 0", name, n)
		}
		if n, _ := topic.Size(ctx); n != 0 {
			t.Fatalf("%s: Size after the last subscriber left = %d, want 0 (retention 0)", name, n)
		}
	}
}
