package redissonotel_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/httplimit"
	"github.com/goredisson/redisson/internal/redistest"
	"github.com/goredisson/redisson/redissonotel"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// queueGauge returns the value of an int64 queue gauge for queue, and
// whether it has one.
func queueGauge(rm metricdata.ResourceMetrics, name, queue string) (int64, bool) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, false
	}
	for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		if matches(p.Attributes, []attribute.KeyValue{redissonotel.AttrQueue.String(queue)}) {
			return p.Value, true
		}
	}
	return 0, false
}

// A queue's jobs are counted by what happened to them, per queue; its
// handlers running and their durations too; a registered queue's gauges
// read its Stats.
func TestReliableQueueMetrics(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, &redisson.Options{WatchdogTimeout: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.ToLower(uniqueName(t))
	label := strings.ReplaceAll(name, ":", "_")
	q := redisson.GetReliableQueue[string](c, name)
	rdb := redistest.Shared(t).Client(t)
	t.Cleanup(func() { rdb.Del(context.Background(), name, q.DeadLetterName()) })
	defer tm.obs.RegisterReliableQueue(q)()

	for _, v := range []string{"a", "a"} {
		if _, _, err := q.Enqueue(ctx, v, redisson.JobDedupID("a", time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range []string{"b", "fail"} {
		if _, _, err := q.Enqueue(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	rm := tm.collect(t)
	if n, ok := queueGauge(rm, redissonotel.MetricQueueReady, label); !ok || n != 3 {
		t.Fatalf("ready gauge = %d, %v; want 3", n, ok)
	}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Process(pctx, func(_ context.Context, j *redisson.Job[string]) error {
			if j.Value == "fail" {
				return errors.New("boom")
			}
			return nil
		}, redisson.WorkerOptions{Concurrency: 2, MaxDeliveries: 1})
	}()
	defer func() { stop(); <-done }()
	// An entry that does not decode, as a foreign writer may add.
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"other", "x"}}) // no payload field

	jobs := func(state string) int64 {
		n, _ := counter(tm.collect(t), redissonotel.MetricQueueJobs, redissonotel.AttrQueue.String(label),
			redissonotel.AttrJobState.String(state))
		return n
	}
	if !eventually(30*time.Second, func() bool { return jobs("dead_lettered") == 2 && jobs("succeeded") == 2 }) {
		t.Fatalf("dead_lettered %d, succeeded %d; want 2, 2", jobs("dead_lettered"), jobs("succeeded"))
	}
	for state, want := range map[string]int64{"enqueued": 3, "duplicate": 1, "started": 3, "failed": 1, "undecodable": 1} {
		if n := jobs(state); n != want {
			t.Errorf("jobs %s = %d, want %d", state, n, want)
		}
	}
	rm = tm.collect(t)
	if n, _ := counter(rm, redissonotel.MetricQueueInFlight, redissonotel.AttrQueue.String(label)); n != 0 {
		t.Errorf("in flight = %d after the runs, want 0", n)
	}
	if n, _ := histogram(rm, redissonotel.MetricQueueJobDuration, redissonotel.AttrQueue.String(label)); n != 3 {
		t.Errorf("job duration count = %d, want 3", n)
	}
	for metric, want := range map[string]int64{redissonotel.MetricQueueReady: 0, redissonotel.MetricQueueDead: 2,
		redissonotel.MetricQueuePending: 0, redissonotel.MetricQueueDelayed: 0} {
		if n, ok := queueGauge(rm, metric, label); !ok || n != want {
			t.Errorf("%s = %d, %v; want %d", metric, n, ok, want)
		}
	}
}

// Leaderships are counted as they begin and end, and the leader gauge is 1
// while this process leads.
func TestElectionMetrics(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.ToLower(uniqueName(t))
	e := c.GetElection(name)
	lead, err := e.Campaign(ctx, "me")
	if err != nil {
		t.Fatal(err)
	}
	el := redissonotel.AttrElection.String(strings.ReplaceAll(name, ":", "_"))
	rm := tm.collect(t)
	if n, _ := counter(rm, redissonotel.MetricElectionLeader, el); n != 1 {
		t.Errorf("leader = %d while leading, want 1", n)
	}
	if n, _ := counter(rm, redissonotel.MetricElectionChanges, el, redissonotel.AttrChange.String("elected")); n != 1 {
		t.Errorf("elected changes = %d, want 1", n)
	}
	if err := lead.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	rm = tm.collect(t)
	if n, _ := counter(rm, redissonotel.MetricElectionLeader, el); n != 0 {
		t.Errorf("leader = %d after Resign, want 0", n)
	}
	if n, _ := counter(rm, redissonotel.MetricElectionChanges, el, redissonotel.AttrChange.String("resigned")); n != 1 {
		t.Errorf("resigned changes = %d, want 1", n)
	}
}

// Idempotency decisions are counted by decision; a record of
// httplimit.NewIdempotency is labelled with its middleware's name, any
// other record with none.
func TestIdempotencyMetrics(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mw := strings.ToLower(uniqueName(t))
	r := c.GetIdempotencyRecord(mw + ":{" + strings.Repeat("ab", 32) + "}")
	run, err := r.Begin(ctx, "fp", time.Minute, 0)
	if err != nil || run.State != redisson.IdempotencyRun {
		t.Fatalf("Begin = %+v, %v", run, err)
	}
	if _, err := r.Complete(ctx, run.Token, 200, nil, []byte("x"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, fp := range []string{"fp", "fp", "other"} {
		if _, err := r.Begin(ctx, fp, time.Minute, 0); err != nil {
			t.Fatal(err)
		}
	}
	plain := c.GetIdempotencyRecord(mw + ":plain")
	if _, err := plain.Begin(ctx, "fp", time.Minute, 0); err != nil {
		t.Fatal(err)
	}
	rm := tm.collect(t)
	group := redissonotel.AttrGroup.String(strings.ReplaceAll(mw, ":", "_"))
	for d, want := range map[string]int64{"run": 1, "replay": 2, "mismatch": 1, "busy": 0} {
		if n, _ := counter(rm, redissonotel.MetricIdempotencyDecisions, group, redissonotel.AttrDecision.String(d)); n != want {
			t.Errorf("%s decisions of the middleware = %d, want %d", d, n, want)
		}
	}
	if n, _ := counter(rm, redissonotel.MetricIdempotencyDecisions, redissonotel.AttrDecision.String("run")); n != 2 {
		t.Errorf("run decisions = %d, want 2 (the plain record's too)", n)
	}
	m, _ := findMetric(rm, redissonotel.MetricIdempotencyDecisions)
	for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
		if v, ok := p.Attributes.Value(redissonotel.AttrGroup); ok && v.AsString() != strings.ReplaceAll(mw, ":", "_") {
			t.Errorf("a decision labelled with group %q: only the middleware's name may be one", v.AsString())
		}
	}
}

// A ReliableTopic message that does not decode is counted per topic.
func TestReliableTopicUndecodableCounted(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.ToLower(uniqueName(t))
	rdb := redistest.Shared(t).Client(t)
	topic := redisson.GetReliableTopic[string](c, name)
	got := make(chan string, 2)
	s, err := topic.Subscribe(ctx, func(v string) { got <- v })
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe(ctx)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: name, Values: []any{"m", "\xc1"}})
	if _, err := topic.Publish(ctx, "ok"); err != nil {
		t.Fatal(err)
	}
	<-got
	if n, _ := counter(tm.collect(t), redissonotel.MetricTopicUndecodable, redissonotel.AttrTopic.String(strings.ReplaceAll(name, ":", "_"))); n != 1 {
		t.Fatalf("undecodable = %d, want 1", n)
	}
}

// A request httplimit.NewConcurrency refuses is counted under the
// middleware's name; an admitted one is not.
func TestConcurrencyRejectionsCounted(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	mw := strings.ToLower(uniqueName(t))
	rdb := redistest.Shared(t).Client(t)
	t.Cleanup(func() { rdb.Del(context.Background(), mw+":all", "redisson_sc:{"+mw+":all}") })
	limit, err := httplimit.NewConcurrency(c, mw, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	entered, release := make(chan struct{}), make(chan struct{})
	h := limit(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-release
	}))
	first := make(chan int, 1)
	go func() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
		first <- w.Code
	}()
	<-entered
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
	close(release)
	if code := <-first; code != http.StatusOK || w.Code == http.StatusOK {
		t.Fatalf("codes %d, %d: want the first admitted, the second refused", code, w.Code)
	}
	group := redissonotel.AttrGroup.String(strings.ReplaceAll(mw, ":", "_"))
	if n, _ := counter(tm.collect(t), redissonotel.MetricConcurrencyRejected, group); n != 1 {
		t.Fatalf("rejections = %d, want 1", n)
	}
}

// A registered topic's gauges: its subscribers and the largest lag.
func TestReliableTopicGauges(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.ToLower(uniqueName(t))
	rdb := redistest.Shared(t).Client(t)
	t.Cleanup(func() { rdb.Del(context.Background(), name) })
	defer tm.obs.RegisterReliableTopic(c, name)()
	topic := redisson.GetReliableTopic[string](c, name)
	for _, v := range []string{"a", "b", "c"} {
		if _, err := topic.Publish(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	// Two subscribers that have read nothing: one from the start, one
	// from the second message.
	rdb.XGroupCreate(ctx, name, "behind", "0")
	first, _ := rdb.XRangeN(ctx, name, "-", "+", 1).Result()
	rdb.XGroupCreate(ctx, name, "ahead", first[0].ID)
	rm := tm.collect(t)
	label := redissonotel.AttrTopic.String(strings.ReplaceAll(name, ":", "_"))
	if n, ok := topicGauge(rm, redissonotel.MetricTopicSubscribers, label); !ok || n != 2 {
		t.Errorf("subscribers = %d, %v; want 2", n, ok)
	}
	if n, ok := topicGauge(rm, redissonotel.MetricTopicLag, label); !ok || n != 3 {
		t.Errorf("lag = %d, %v; want 3 (the subscriber from the start)", n, ok)
	}
}

func topicGauge(rm metricdata.ResourceMetrics, name string, want attribute.KeyValue) (int64, bool) {
	m, ok := findMetric(rm, name)
	if !ok {
		return 0, false
	}
	for _, p := range m.Data.(metricdata.Gauge[int64]).DataPoints {
		if matches(p.Attributes, []attribute.KeyValue{want}) {
			return p.Value, true
		}
	}
	return 0, false
}

// A Scheduler's instants are counted per scheduler: those this process
// fired, and those whose run failed.
func TestSchedulerFiresCounted(t *testing.T) {
	tm := newTelemetry(t)
	c := newClient(t, tm.obs, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := strings.ToLower(uniqueName(t))
	s := c.GetScheduler(name)
	if err := s.Add(ctx, redisson.JobSpec{Name: "tick", Every: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	runs := make(chan struct{}, 100)
	var n atomic.Int64
	s.Handle("tick", func(context.Context, redisson.JobRun) error {
		defer func() { runs <- struct{}{} }()
		if n.Add(1) == 1 {
			return errors.New("first run fails")
		}
		return nil
	})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- s.Run(rctx) }()
	for range 3 {
		select {
		case <-runs:
		case <-ctx.Done():
			t.Fatal("the job did not run 3 times")
		}
	}
	stop()
	<-done
	sc := redissonotel.AttrSchedule.String(strings.ReplaceAll(name, ":", "_"))
	rm := tm.collect(t)
	if n, _ := counter(rm, redissonotel.MetricSchedulerFires, sc, redissonotel.AttrFire.String("fired")); n < 3 {
		t.Errorf("fired = %d, want at least 3", n)
	}
	if n, _ := counter(rm, redissonotel.MetricSchedulerFires, sc, redissonotel.AttrFire.String("failed")); n != 1 {
		t.Errorf("failed = %d, want 1", n)
	}
}
