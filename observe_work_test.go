package redisson

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A worker's handler runs are operations (reliable_queue.run, their error
// as outcome); a job that does not decode is an event before its move to
// the dead letters, never silent.
func TestObserveReliableQueueRunsAndUndecodable(t *testing.T) {
	c, rec, logs := observedClient(t, &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	q := GetReliableQueue[string](c, name)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, q.parts[0].dead, q.parts[0].delayed, q.parts[0].bodies) })
	if _, _, err := q.Enqueue(ctx, "ok"); err != nil {
		t.Fatal(err)
	}
	c.rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{q.payload, "\xc1not msgpack"}})
	if _, _, err := q.Enqueue(ctx, "fail"); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	process(t, q, func(_ context.Context, j *Job[string]) error {
		if j.Value == "fail" {
			return boom
		}
		return nil
	}, WorkerOptions{Concurrency: 1, MaxDeliveries: 1})
	waitFor(t, "two dead letters", func() bool { return mustStats(t, q).Dead == 2 })
	waitFor(t, "two runs", func() bool { return len(rec.opsOf(opRQRun, name)) == 2 })
	runs := rec.opsOf(opRQRun, name)
	ok, failed := 0, 0
	for _, r := range runs {
		switch {
		case r.Outcome == OutcomeOK && r.Err == nil:
			ok++
		case r.Outcome == OutcomeError && errors.Is(r.Err, boom):
			failed++
		}
	}
	if ok != 1 || failed != 1 {
		t.Errorf("runs %+v: want one ok and one error boom", runs)
	}
	ev := rec.eventsOf(EventJobUndecodable)
	if len(ev) != 1 || ev[0].Name != name || ev[0].Kind != reliableQueueKind || !errors.Is(ev[0].Err, ErrCodec) || ev[0].Owner == "" {
		t.Fatalf("job_undecodable events %+v: want one, for the queue, matching ErrCodec", ev)
	}
	if l := logs.find("job_undecodable"); len(l) != 1 {
		t.Errorf("job_undecodable logged %d times, want 1", len(l))
	}
	if d := rec.opsOf(opRQDeadLetter, name); len(d) != 2 {
		t.Errorf("dead_letter operations %d, want 2 (the undecodable job, the failed one)", len(d))
	}
}

// Stats reports the queue's lag: the age of its oldest job not yet
// delivered, on the server's clock.
func TestReliableQueueStatsOldestReady(t *testing.T) {
	c := newClient(t, sharedRedis(t), nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	q := GetReliableQueue[string](c, name)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, q.parts[0].dead, q.parts[0].delayed, q.parts[0].bodies) })
	if st := mustStats(t, q); st.OldestReady != 0 || st.Ready != 0 {
		t.Fatalf("empty queue's stats %+v: want no lag", st)
	}
	// An entry a minute old (its id says so), then a fresh one.
	old := time.Now().Add(-time.Minute).UnixMilli()
	if err := c.rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, ID: strconv.FormatInt(old, 10) + "-0", Values: []any{q.payload, "\xa1a"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := q.Enqueue(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	st := mustStats(t, q)
	if st.Ready != 2 || st.OldestReady < 50*time.Second || st.OldestReady > 10*time.Minute {
		t.Fatalf("stats %+v: want 2 ready, the oldest about a minute old", st)
	}
	// Once the old one is delivered (the group's last delivered id passes
	// it), the lag is the fresh one's.
	if err := c.rdb.XGroupCreate(ctx, name, rqGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: rqGroup, Consumer: "x", Streams: []string{name, ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}
	st = mustStats(t, q)
	if st.Ready != 1 || st.InFlight != 1 || st.OldestReady >= 50*time.Second {
		t.Fatalf("stats %+v: want 1 ready, 1 in flight, the lag of the fresh job", st)
	}
}

// A ReliableTopic message that does not decode is an event (and a count and
// the subscriber's error), never dropped silently.
func TestObserveReliableTopicUndecodable(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, "{"+name+"}:timeout") })
	topic := GetReliableTopic[string](c, name)
	got := make(chan string, 4)
	s, err := topic.Subscribe(ctx, func(v string) { got <- v }, WithSubscriberID("sub1"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe(ctx)
	c.rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"m", "\xc1"}})
	c.rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"x", "\xa2v1"}})
	if _, err := topic.Publish(ctx, "fine"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-got:
		if v != "fine" {
			t.Fatalf("got %q, want fine", v)
		}
	case <-ctx.Done():
		t.Fatal("no message")
	}
	ev := rec.eventsOf(EventMessageUndecodable)
	if len(ev) != 2 {
		t.Fatalf("message_undecodable events %+v: want 2", ev)
	}
	for _, e := range ev {
		if e.Name != name || e.Owner != "sub1" || !errors.Is(e.Err, ErrCodec) {
			t.Errorf("event %+v: want the topic, subscriber sub1, ErrCodec", e)
		}
	}
}

// A leadership is reported when it starts and once when it ends, with its
// term and why it ended.
func TestObserveLeadership(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	e := c.GetElection(name)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name, e.record, prefixName("redisson_lock_token", name)) })
	lead, err := e.Campaign(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	el := rec.eventsOf(EventLeaderElected)
	if len(el) != 1 || el[0].Name != name || int64(el[0].Count) != lead.Term() || el[0].Owner == "" {
		t.Fatalf("leader_elected events %+v: want one with term %d", el, lead.Term())
	}
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	ended := rec.eventsOf(EventLeadershipEnded)
	if len(ended) != 1 || !errors.Is(ended[0].Err, ErrResigned) || int64(ended[0].Count) != lead.Term() || ended[0].Owner != el[0].Owner {
		t.Fatalf("leadership_ended events %+v: want one, ErrResigned, term %d", ended, lead.Term())
	}
	// A leadership ended by the client's Close is reported too.
	c2, rec2, _ := observedClient(t, nil)
	if _, err := c2.GetElection(name).Campaign(ctx, "other"); err != nil {
		t.Fatal(err)
	}
	c2.Close()
	ended = rec2.eventsOf(EventLeadershipEnded)
	if len(ended) != 1 || !errors.Is(ended[0].Err, ErrClientClosed) {
		t.Fatalf("leadership_ended events after Close %+v: want one, ErrClientClosed", ended)
	}
}

// Begin's decisions are told apart by outcome: run acquired, replay ok,
// mismatch denied, busy timed out.
func TestObserveIdempotencyDecisions(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name) })
	r := c.GetIdempotencyRecord(name)
	run, err := r.Begin(ctx, "fp", time.Minute, 0)
	if err != nil || run.State != IdempotencyRun {
		t.Fatalf("Begin = %+v, %v; want a run", run, err)
	}
	if res, err := r.Begin(ctx, "fp", time.Minute, 0); err != nil || res.State != IdempotencyBusy {
		t.Fatalf("Begin during the run = %+v, %v; want busy", res, err)
	}
	if ok, err := r.Complete(ctx, run.Token, 200, nil, []byte("done"), time.Minute); err != nil || !ok {
		t.Fatalf("Complete = %v, %v", ok, err)
	}
	if res, err := r.Begin(ctx, "fp", time.Minute, 0); err != nil || res.State != IdempotencyReplay {
		t.Fatalf("Begin after = %+v, %v; want a replay", res, err)
	}
	if res, err := r.Begin(ctx, "other", time.Minute, 0); err != nil || res.State != IdempotencyMismatch {
		t.Fatalf("Begin with another fingerprint = %+v, %v; want a mismatch", res, err)
	}
	var got []Outcome
	for _, op := range rec.opsOf(opIdemBegin, name) {
		got = append(got, op.Outcome)
	}
	want := []Outcome{OutcomeAcquired, OutcomeTimedOut, OutcomeOK, OutcomeDenied}
	if len(got) != len(want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
}

// WithOperationGroup's mark reaches Operation.Group of the calls under it,
// and only those.
func TestObserveOperationGroup(t *testing.T) {
	c, rec, _ := observedClient(t, nil)
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, c.rdb)
	t.Cleanup(func() { c.rdb.Del(context.Background(), name) })
	b := GetBucket[string](c, name)
	if _, _, err := b.Get(WithOperationGroup(ctx, "api")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Get(ctx); err != nil {
		t.Fatal(err)
	}
	ops := rec.opsOf(opBucketGet, name)
	if len(ops) != 2 || ops[0].Group != "api" || ops[1].Group != "" {
		t.Fatalf("bucket.get records %+v: want the group on the first only", ops)
	}
}
