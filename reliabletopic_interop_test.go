package redisson

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Java side of these tests is a stand-in built from the recording
// (reference/redisson-real/transcripts/RReliableTopic.md): raw commands
// writing and reading exactly what Redisson 4.7 does with
// MsgPackJacksonCodec. A publisher appends an entry with field m; a
// subscriber is a zset entry id -> expiry ms in {name}:timeout and a
// consumer group named id created at 0 with MKSTREAM, read with
// XREADGROUP GROUP id consumer ... STREAMS name >.
type javaReliable struct {
	rdb      redis.UniversalClient
	name, id string
}

func (j javaReliable) publish(ctx context.Context, encoded string) error {
	return j.rdb.XAdd(ctx, &redis.XAddArgs{Stream: j.name, ID: "*", Values: []any{"m", encoded}}).Err()
}

func (j javaReliable) subscribe(ctx context.Context, expiry time.Time) error {
	if err := j.rdb.ZAdd(ctx, suffixName(j.name, "timeout"), redis.Z{Score: float64(expiry.UnixMilli()), Member: j.id}).Err(); err != nil {
		return err
	}
	return j.rdb.XGroupCreateMkStream(ctx, j.name, j.id, "0").Err()
}

// read reads what the Java subscriber has not read and acknowledges it.
func (j javaReliable) read(ctx context.Context) ([]string, error) {
	res, err := j.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: j.id, Consumer: "consumer",
		Streams: []string{j.name, ">"}, Count: 1000, Block: -1}).Result()
	if err == redis.Nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range res[0].Messages {
		out = append(out, fmt.Sprint(m.Values["m"]))
		if err := j.rdb.XAck(ctx, j.name, j.id, m.ID).Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// A Java publisher's entries reach a Go subscriber, and a Go publisher's
// reach a Java subscriber byte for byte as Redisson writes them; the Go
// publisher keeps what the Java subscriber has not read and counts it.
func TestReliableTopicInteropBothWays(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := reliableName(t, rdb)
	java := javaReliable{rdb: rdb, name: name, id: "b4d901affd26bb3f35b4448fc78358a1"}
	topic := GetReliableTopic[any](c, name)

	// Java -> Go: "m1" and Long 7 as recorded.
	col := newCollector[any]()
	s, err := topic.Subscribe(ctx, col.add)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := java.publish(ctx, "\xa2m1"); err != nil {
		t.Fatal(err)
	}
	if err := java.publish(ctx, "\x92\xaejava.lang.Long\x07"); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(col.wait(t, 2)); got != "[m1 7]" {
		t.Fatalf("Go subscriber got %s, want [m1 7]", got)
	}

	// Go -> Java: the Java subscriber joins; Publish counts both.
	if err := java.subscribe(ctx, time.Now().Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	for i, v := range []any{"m0", int64(42)} {
		n, err := topic.Publish(ctx, v)
		if err != nil || n != 2 {
			t.Fatalf("Publish %d = %d, %v; want 2 subscribers", i, n, err)
		}
	}
	// The Java subscriber's group was created at 0: it first reads what
	// the stream still holds, then the two messages, never trimmed for it.
	got, err := java.read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) < 2 || got[len(got)-2] != "\xa2m0" || got[len(got)-1] != "\x92\xaejava.lang.Long*" {
		t.Fatalf("Java subscriber read %q; want it to end with the recorded bytes \\xa2m0, \\x92\\xaejava.lang.Long*", got)
	}
	col.wait(t, 4)
	waitFor(t, "what both consumed trimmed", func() bool {
		s.Close() // a random id: removed, and what it consumed trimmed
		n, _ := topic.Size(ctx)
		return n == 0
	})

	// The Java subscriber stops refreshing: the Go publisher keeps what it
	// has not read until its expiry, then removes its group.
	topic.Publish(ctx, "unread")
	if n, _ := topic.Size(ctx); n != 1 {
		t.Fatalf("Size = %d with one message the Java subscriber has not read; want 1", n)
	}
	rdb.ZAdd(ctx, suffixName(name, "timeout"), redis.Z{Score: float64(time.Now().Add(-time.Second).UnixMilli()), Member: java.id})
	n, err := topic.Publish(ctx, "after")
	if err != nil || n != 0 {
		t.Fatalf("Publish after the Java subscriber expired = %d, %v; want 0", n, err)
	}
	if groups := rdb.XInfoGroups(ctx, name).Val(); len(groups) != 0 {
		t.Fatalf("groups after expiry = %v, want none", groups)
	}
	if rdb.ZScore(ctx, suffixName(name, "timeout"), java.id).Err() != redis.Nil {
		t.Fatal("the expired Java subscriber is still in the timeout zset")
	}
}

// What Go's Subscribe writes is what Redisson's addListener writes: the
// zset entry (expiry = server time + timeout) and a group created at 0.
func TestReliableTopicInteropSubscriberLayout(t *testing.T) {
	rdb := sharedRedis(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := reliableName(t, rdb)
	topic := GetReliableTopic[string](c, name)
	if _, err := topic.Publish(ctx, "before"); err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	col := newCollector[string]()
	s, err := topic.Subscribe(ctx, col.add, WithSubscriberID("go-subscriber"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// As with Redisson (group at 0), the message kept for the next
	// subscriber is delivered.
	if got := col.wait(t, 1); got[0] != "before" {
		t.Fatalf("got %v, want [before]", got)
	}
	score, err := rdb.ZScore(ctx, suffixName(name, "timeout"), "go-subscriber").Result()
	if err != nil {
		t.Fatal(err)
	}
	exp := time.UnixMilli(int64(score))
	if exp.Before(before.Add(9*time.Minute)) || exp.After(time.Now().Add(11*time.Minute)) {
		t.Fatalf("expiry %v; want about 10 minutes from now", exp)
	}
	groups := rdb.XInfoGroups(ctx, name).Val()
	if len(groups) != 1 || groups[0].Name != "go-subscriber" {
		t.Fatalf("groups = %+v; want one named go-subscriber", groups)
	}
	entries := rdb.XRange(ctx, name, "-", "+").Val()
	for _, e := range entries {
		if len(e.Values) != 1 || e.Values["m"] == nil {
			t.Fatalf("entry %s = %v; want the one field m", e.ID, e.Values)
		}
	}
}
