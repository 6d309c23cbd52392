package redisson

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
)

// InspectReliableQueue shows the counts, the lag, the workers and their
// jobs in flight; a queue with no key is ErrNotFound; bad input its
// sentinel.
func TestInspectReliableQueue(t *testing.T) {
	c := newClient(t, sharedRedis(t), &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	q := GetReliableQueue[string](c, name)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, q.parts[0].dead, q.parts[0].delayed, q.parts[0].bodies) })
	if _, err := c.InspectReliableQueue(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectReliableQueue of nothing = %v, want ErrNotFound", err)
	}
	if _, err := c.InspectReliableQueue(ctx, ""); !errors.Is(err, ErrEmptyName) {
		t.Fatalf("InspectReliableQueue(\"\") = %v, want ErrEmptyName", err)
	}
	// A queue whose jobs were all done: its stream and group remain.
	empty := name + ":empty"
	t.Cleanup(func() { c.rdb.Del(context.Background(), empty) })
	if err := c.rdb.XGroupCreateMkStream(ctx, empty, rqGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if info, err := c.InspectReliableQueue(ctx, empty); err != nil || info.Ready != 0 || info.OldestReady != 0 {
		t.Fatalf("InspectReliableQueue of an empty queue = %+v, %v; want found, nothing ready", info, err)
	}
	for _, v := range []string{"hold", "wait"} {
		if _, _, err := q.Enqueue(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := q.Enqueue(ctx, "later", JobDelay(time.Hour)); err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	process(t, q, func(ctx context.Context, j *Job[string]) error {
		if j.Value == "hold" {
			close(started)
			<-release
			return nil
		}
		<-ctx.Done()
		return ctx.Err()
	}, WorkerOptions{Concurrency: 1})
	defer close(release)
	<-started
	info, err := c.InspectReliableQueue(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if info.InFlight != 1 || info.Ready != 1 || info.Delayed != 1 || info.Dead != 0 {
		t.Fatalf("info %+v: want 1 in flight, 1 ready, 1 delayed", info)
	}
	if info.OldestReady <= 0 || info.OldestReady > time.Minute {
		t.Errorf("OldestReady %v: want the age of the waiting job", info.OldestReady)
	}
	if d := info.NextDue.Sub(info.ServerTime); d < 50*time.Minute || d > time.Hour+time.Minute {
		t.Errorf("NextDue %v after the server time, want about an hour", d)
	}
	if len(info.Workers) != 1 || info.Workers[0].InFlight != 1 {
		t.Fatalf("workers %+v: want one holding one job", info.Workers)
	}
	if len(info.Jobs) != 1 || info.Jobs[0].Consumer != info.Workers[0].Consumer || info.Jobs[0].Deliveries != 1 {
		t.Fatalf("jobs %+v: want the held one, of the worker", info.Jobs)
	}
	c.rdb.Set(ctx, name+":str", "x", time.Minute)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name+":str") })
	if _, err := c.InspectReliableQueue(ctx, name+":str"); !errors.Is(err, ErrWrongType) {
		t.Fatalf("InspectReliableQueue of a string = %v, want ErrWrongType", err)
	}
}

// InspectReliableTopic shows each subscriber's pending messages and lag.
func TestInspectReliableTopic(t *testing.T) {
	c := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, suffixName(name, "timeout")) })
	if _, err := c.InspectReliableTopic(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectReliableTopic of nothing = %v, want ErrNotFound", err)
	}
	topic := GetReliableTopic[string](c, name)
	got := make(chan string, 8)
	s, err := topic.Subscribe(ctx, func(v string) { got <- v }, WithSubscriberID("live"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe(ctx)
	// A subscriber that stopped reading: a group of its own with a lag.
	if err := c.rdb.XGroupCreate(ctx, name, "stopped", "$").Err(); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b"} {
		if _, err := topic.Publish(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	<-got
	<-got
	info, err := c.InspectReliableTopic(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	if info.Length < 1 || info.LastID == "" || len(info.Subscribers) != 2 {
		t.Fatalf("info %+v: want messages and two subscribers", info)
	}
	for _, sub := range info.Subscribers {
		switch sub.ID {
		case "live":
			if sub.Expires.Before(info.ServerTime) {
				t.Errorf("live subscriber %+v: want an expiry ahead", sub)
			}
		case "stopped":
			if sub.Lag != 2 && sub.Lag != -1 {
				t.Errorf("stopped subscriber %+v: want a lag of 2", sub)
			}
		default:
			t.Errorf("unexpected subscriber %+v", sub)
		}
	}
}

// InspectIdempotencyRecord shows a run, then its stored result; never the
// run's token.
func TestInspectIdempotencyRecord(t *testing.T) {
	c := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name) })
	if _, err := c.InspectIdempotencyRecord(ctx, name); !errors.Is(err, ErrNotFound) {
		t.Fatalf("InspectIdempotencyRecord of nothing = %v, want ErrNotFound", err)
	}
	r := c.GetIdempotencyRecord(name)
	run, err := r.Begin(ctx, "GET /x", time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	info, err := c.InspectIdempotencyRecord(ctx, name)
	if err != nil || info.State != "running" || info.Fingerprint != "GET /x" || info.TTL <= 0 || info.TTL > time.Minute {
		t.Fatalf("InspectIdempotencyRecord while running = %+v, %v", info, err)
	}
	if _, err := r.Complete(ctx, run.Token, 201, []byte(`{"A":["b"]}`), []byte("body"), time.Hour); err != nil {
		t.Fatal(err)
	}
	info, err = c.InspectIdempotencyRecord(ctx, name)
	if err != nil || info.State != "done" || info.Status != 201 || string(info.Body) != "body" || info.Header != `{"A":["b"]}` ||
		info.TTL < 50*time.Minute {
		t.Fatalf("InspectIdempotencyRecord when done = %+v, %v", info, err)
	}
}

// On Cluster the inspections and the lag read the queue's and topic's own
// node (XINFO routed by its key, not by its subcommand).
func TestInspectReliableCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	q := GetReliableQueue[string](c, name)
	t.Cleanup(func() { rdb.Del(context.Background(), name, q.parts[0].dead, q.parts[0].delayed, q.parts[0].bodies) })
	if _, _, err := q.Enqueue(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreate(ctx, name, rqGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	st, err := q.Stats(ctx)
	if err != nil || st.Ready != 1 || st.OldestReady < 0 || st.OldestReady > time.Minute {
		t.Fatalf("Stats = %+v, %v; want one ready job", st, err)
	}
	info, err := c.InspectReliableQueue(ctx, name)
	if err != nil || info.Ready != 1 || info.InFlight != 0 {
		t.Fatalf("InspectReliableQueue = %+v, %v; want one ready job", info, err)
	}
	topic := name + ":topic"
	t.Cleanup(func() { rdb.Del(context.Background(), topic) })
	if _, err := GetReliableTopic[string](c, topic).Publish(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreate(ctx, topic, "sub", "0").Err(); err != nil {
		t.Fatal(err)
	}
	ti, err := c.InspectReliableTopic(ctx, topic)
	if err != nil || ti.Length != 1 || len(ti.Subscribers) != 1 {
		t.Fatalf("InspectReliableTopic = %+v, %v; want one message, one subscriber", ti, err)
	}
}
