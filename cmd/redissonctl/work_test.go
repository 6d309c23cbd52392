package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goredisson/redisson"
	"github.com/goredisson/redisson/internal/redistest"
)

// A reliable queue: its state, its dead letters, and the operator's
// requeue and purge, confirmed or refused.
func TestReliableQueueCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()
	cl := newClient(t, rdb)
	n := name(t, rdb)
	q := redisson.GetReliableQueue[string](cl, n)
	t.Cleanup(func() {
		rdb.Del(context.Background(), q.DeadLetterName(), "redisson_rq_delayed:{"+n+"}", "redisson_rq_jobs:{"+n+"}")
	})
	runIn(t, "", addr, "inspect", "reliablequeue", n).want(t, exitNotFound, "inspect of no queue")
	for _, v := range []string{"hold", "bad"} {
		if _, _, err := q.Enqueue(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	held := make(chan struct{})
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Process(pctx, func(ctx context.Context, j *redisson.Job[string]) error {
			if j.Value == "hold" {
				close(held)
				<-ctx.Done()
				return ctx.Err()
			}
			return errors.New("boom: the payment service said no")
		}, redisson.WorkerOptions{Concurrency: 2, MaxDeliveries: 1, ShutdownTimeout: time.Millisecond})
	}()
	defer func() { stop(); <-done }()
	<-held
	st := func() redisson.ReliableQueueStats {
		s, err := q.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if !eventuallyTrue(func() bool { return st().Dead == 1 }) {
		t.Fatalf("no dead letter: %+v", st())
	}

	r := runIn(t, "", addr, "inspect", "reliablequeue", n)
	r.want(t, exitOK, "inspect reliablequeue")
	for _, want := range []string{"in flight", "dead letters", "WORKER", "LEASE LEFT (of 30.0s)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect reliablequeue output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = runIn(t, "", addr, "-json", "inspect", "reliablequeue", n)
	r.want(t, exitOK, "inspect reliablequeue -json")
	var info redisson.ReliableQueueInfo
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatalf("JSON %q: %v", r.stdout, err)
	}
	if info.InFlight != 1 || info.Dead != 1 || len(info.Jobs) != 1 || len(info.Workers) != 1 {
		t.Fatalf("JSON %+v: want one job in flight at one worker, one dead letter", info)
	}

	r = runIn(t, "", addr, "inspect", "deadletters", n)
	r.want(t, exitOK, "inspect deadletters")
	if !strings.Contains(r.stdout, "boom: the payment service said no") || !strings.Contains(r.stdout, `"bad"`) {
		t.Errorf("dead letters lack the reason or the value:\n%s", r.stdout)
	}

	r = runIn(t, "n\n", addr, "requeue", "deadletters", n)
	r.want(t, exitRefused, "requeue refused")
	if !strings.Contains(r.stderr, "redissonctl: requeue dead letters of") {
		t.Errorf("requeue refused: stderr %q", r.stderr)
	}
	if st().Dead != 1 {
		t.Fatal("a refused requeue moved the dead letter")
	}
	r = runIn(t, "y\n", addr, "requeue", "deadletters", n)
	r.want(t, exitOK, "requeue confirmed")
	if !strings.Contains(r.stdout, "requeued 1 dead letters") {
		t.Errorf("requeue output %q", r.stdout)
	}
	// The handler fails it again: dead once more.
	if !eventuallyTrue(func() bool { return st().Dead == 1 }) {
		t.Fatalf("the requeued job did not come back dead: %+v", st())
	}
	runIn(t, "", addr, "requeue", "deadletters", n, "0-1").want(t, exitRefused, "requeue of one without -yes and no answer")
	runIn(t, "", addr, "-yes", "requeue", "deadletters", n, "0-1").want(t, exitNotFound, "requeue of an unknown id")

	runIn(t, "", addr, "purge", "deadletters", n).want(t, exitRefused, "purge without -yes and no answer")
	r = runIn(t, "", addr, "-yes", "-json", "purge", "deadletters", n)
	r.want(t, exitOK, "purge -yes")
	if !strings.Contains(r.stdout, `"purged":1`) {
		t.Errorf("purge output %q", r.stdout)
	}
	runIn(t, "", addr, "-yes", "purge", "deadletters", n).want(t, exitNotFound, "purge of no dead letters")

	for _, args := range [][]string{{"requeue"}, {"purge", "deadletters"}, {"purge", "deadletters", n, "x"},
		{"requeue", "queue", n}, {"inspect", "idempotency", n}, {"-lease", "0", "inspect", "reliablequeue", n}} {
		r := runIn(t, "", append([]string{addr}, args...)...)
		r.want(t, exitUsage, strings.Join(args, " "))
		r.oneLineError(t, strings.Join(args, " "))
	}
}

// A reliable topic: its subscribers with their lag; an idempotency key's
// record found by the middleware's name and the key.
func TestReliableTopicAndIdempotencyCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()
	cl := newClient(t, rdb)
	n := name(t, rdb)
	t.Cleanup(func() { rdb.Del(context.Background(), "{"+n+"}:timeout") })
	topic := redisson.GetReliableTopic[string](cl, n)
	got := make(chan string, 1)
	s, err := topic.Subscribe(ctx, func(v string) { got <- v }, redisson.WithSubscriberID("billing"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unsubscribe(ctx)
	if _, err := topic.Publish(ctx, "m"); err != nil {
		t.Fatal(err)
	}
	<-got
	r := runIn(t, "", addr, "inspect", "reliabletopic", n)
	r.want(t, exitOK, "inspect reliabletopic")
	if row := rowOf(r.stdout, "billing"); len(row) < 3 {
		t.Errorf("no subscriber row for billing:\n%s", r.stdout)
	}

	rec := cl.GetIdempotencyRecord(idempotencyRecord(n, "tenant-1", "key-1"))
	run, err := rec.Begin(ctx, "POST /orders abc", time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Del(context.Background(), rec.Name()) })
	if _, err := rec.Complete(ctx, run.Token, 201, []byte(`{}`), []byte(`{"id":7}`), time.Hour); err != nil {
		t.Fatal(err)
	}
	runIn(t, "", addr, "inspect", "idempotency", n, "key-1").want(t, exitNotFound, "inspect idempotency without the scope")
	r = runIn(t, "", addr, "-scope", "tenant-1", "inspect", "idempotency", n, "key-1")
	r.want(t, exitOK, "inspect idempotency")
	for _, want := range []string{"done", "201", "POST /orders abc", `"{\"id\":7}"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect idempotency output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, run.Token) {
		t.Errorf("inspect idempotency shows the run's token:\n%s", r.stdout)
	}
}

// eventuallyTrue polls cond for up to 30s.
func eventuallyTrue(cond func() bool) bool {
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// A partitioned reliable queue: inspect counts every partition (as many
// as the workers recorded), and the dead-letter commands see, requeue and
// purge every partition's dead letters.
func TestReliableQueueCommandsPartitioned(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv := redistest.Shared(t)
	rdb := srv.Client(t)
	addr := "-redis=" + srv.Addr()
	cl := newClient(t, rdb)
	n := name(t, rdb)
	q := redisson.GetReliableQueue[string](cl, n, redisson.WithPartitions(3))
	t.Cleanup(func() {
		for _, s := range q.PartitionNames() {
			rdb.Del(context.Background(), s, "redisson_rq_dead:{"+s+"}", "redisson_rq_delayed:{"+s+"}", "redisson_rq_jobs:{"+s+"}")
		}
		rdb.Del(context.Background(), "redisson_rq_partitions:{"+n+"}")
	})
	for i := range 6 { // in turn: two in each partition
		if _, _, err := q.Enqueue(ctx, "bad"+strings.Repeat("!", i)); err != nil {
			t.Fatal(err)
		}
	}
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Process(pctx, func(context.Context, *redisson.Job[string]) error {
			return errors.New("boom")
		}, redisson.WorkerOptions{Concurrency: 2, MaxDeliveries: 1})
	}()
	dead := func() int64 {
		s, err := q.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s.Dead
	}
	if !eventuallyTrue(func() bool { return dead() == 6 }) {
		t.Fatalf("%d dead letters, want 6", dead())
	}
	stop()
	<-done

	r := runIn(t, "", addr, "-json", "inspect", "reliablequeue", n)
	r.want(t, exitOK, "inspect reliablequeue -json")
	var info redisson.ReliableQueueInfo
	if err := json.Unmarshal([]byte(r.stdout), &info); err != nil {
		t.Fatalf("JSON %q: %v", r.stdout, err)
	}
	if info.Partitions != 3 || info.Dead != 6 || len(info.Workers) != 1 {
		t.Fatalf("JSON %+v: want 3 partitions, 6 dead letters, one worker", info)
	}
	r = runIn(t, "", addr, "inspect", "deadletters", n)
	r.want(t, exitOK, "inspect deadletters")
	for _, want := range []string{"p1/", "p2/", `"bad!!!!!"`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dead letters lack %q:\n%s", want, r.stdout)
		}
	}
	r = runIn(t, "", addr, "-yes", "requeue", "deadletters", n)
	r.want(t, exitOK, "requeue")
	if !strings.Contains(r.stdout, "requeued 6 dead letters") {
		t.Errorf("requeue output %q", r.stdout)
	}
	if d := dead(); d != 0 {
		t.Fatalf("%d dead letters left after requeue", d)
	}
}
