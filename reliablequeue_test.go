package redisson

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// rqFixture is a queue on a server of the test's own, and its client.
type rqFixture struct {
	srv *redistest.Server
	rdb *redis.Client
	c   *Client
	q   *ReliableQueue[string]
}

func newRQFixture(t *testing.T, watchdog time.Duration) *rqFixture {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: watchdog})
	return &rqFixture{srv: srv, rdb: rdb, c: c, q: GetReliableQueue[string](c, "jobs")}
}

// process runs Process in a goroutine until the test ends (or stop is
// called) and returns stop, which waits for Process and returns its error.
func process[T any](t *testing.T, q *ReliableQueue[T], h func(context.Context, *Job[T]) error, o WorkerOptions) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Process(ctx, h, o) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(30 * time.Second):
				err = errors.New("Process did not return within 30s of its ctx ending")
			}
		})
		return err
	}
	t.Cleanup(func() { stop() })
	return stop
}

// waitFor waits (30s at most) until cond holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	redistest.Eventually(t, 30*time.Second, what, cond)
}

func mustStats(t *testing.T, q *ReliableQueue[string]) ReliableQueueStats {
	t.Helper()
	st, err := q.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Every job enqueued is handled once and acked; the stream is empty after.
func TestReliableQueueHandlesEachJobOnce(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	const n = 300
	ids := map[string]string{}
	for i := range n {
		v := fmt.Sprint("job-", i)
		id, added, err := f.q.Enqueue(ctx, v)
		if err != nil || !added {
			t.Fatalf("Enqueue = %q, %v, %v", id, added, err)
		}
		ids[id] = v
	}
	var mu sync.Mutex
	seen := map[string]int{}
	stop := process(t, f.q, func(_ context.Context, j *Job[string]) error {
		mu.Lock()
		defer mu.Unlock()
		if ids[j.ID] != j.Value || j.Attempt != 1 || j.EnqueuedAt.IsZero() || j.FirstDeliveredAt.IsZero() {
			t.Errorf("job %+v: want value %q, attempt 1, times set", j, ids[j.ID])
		}
		seen[j.ID]++
		return nil
	}, WorkerOptions{Concurrency: 8, Prefetch: 4})
	waitFor(t, "every job handled and acked", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(seen) == n && mustStats(t, f.q) == ReliableQueueStats{}
	})
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Process after its ctx ended = %v, want context.Canceled", err)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("job %s handled %d times, want 1", id, k)
		}
	}
	if got := f.rdb.XLen(ctx, "jobs").Val(); got != 0 {
		t.Fatalf("stream holds %d entries after every ack, want 0", got)
	}
}

// A failing job is retried after its back-off, its attempts counted, its
// last error and first delivery kept; a panic is an error too.
func TestReliableQueueRetriesThenSucceeds(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	id, _, err := f.q.Enqueue(ctx, "flaky")
	if err != nil {
		t.Fatal(err)
	}
	type seenJob struct {
		attempt  int
		lastErr  string
		enq, fst time.Time
	}
	got := make(chan seenJob, 10)
	process(t, f.q, func(_ context.Context, j *Job[string]) error {
		if j.ID != id {
			t.Errorf("job id %q on attempt %d, want %q", j.ID, j.Attempt, id)
		}
		got <- seenJob{j.Attempt, j.LastError, j.EnqueuedAt, j.FirstDeliveredAt}
		switch j.Attempt {
		case 1:
			return errors.New("boom 1")
		case 2:
			panic("boom 2")
		}
		return nil
	}, WorkerOptions{Concurrency: 1, Backoff: func(int) time.Duration { return 20 * time.Millisecond }})
	var runs []seenJob
	for len(runs) < 3 {
		select {
		case s := <-got:
			runs = append(runs, s)
		case <-ctx.Done():
			t.Fatalf("runs %+v: want 3", runs)
		}
	}
	wantErr := []string{"", "boom 1", "redisson: job handler panicked: boom 2"}
	for i, r := range runs {
		if r.attempt != i+1 || r.lastErr != wantErr[i] || !r.enq.Equal(runs[0].enq) || !r.fst.Equal(runs[0].fst) {
			t.Errorf("run %d = %+v, want attempt %d, last error %q, enqueue and first delivery of run 1", i, r, i+1, wantErr[i])
		}
	}
	waitFor(t, "the job acked", func() bool { return mustStats(t, f.q) == ReliableQueueStats{} })
}

// After MaxDeliveries failures a job is a dead letter with its last error;
// it can be listed, requeued (and then succeed) and purged.
func TestReliableQueueDeadLetters(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	id, _, _ := f.q.Enqueue(ctx, "doomed")
	var mu sync.Mutex
	fail := true
	handled := 0
	stop := process(t, f.q, func(_ context.Context, j *Job[string]) error {
		mu.Lock()
		defer mu.Unlock()
		handled++
		if fail {
			return fmt.Errorf("attempt %d failed", j.Attempt)
		}
		return nil
	}, WorkerOptions{Concurrency: 2, MaxDeliveries: 3, Backoff: func(int) time.Duration { return time.Millisecond }})
	waitFor(t, "a dead letter", func() bool { return mustStats(t, f.q).Dead == 1 })
	dl, err := f.q.DeadLetters(ctx, "", 10)
	if err != nil || len(dl) != 1 {
		t.Fatalf("DeadLetters = %+v, %v; want one", dl, err)
	}
	d := dl[0]
	if d.JobID != id || d.Value != "doomed" || d.Err != nil || d.Reason != "attempt 3 failed" || d.Attempts != 3 || d.DiedAt.Before(d.EnqueuedAt) {
		t.Fatalf("dead letter %+v: want job %s, value doomed, reason 'attempt 3 failed', 3 attempts", d, id)
	}
	mu.Lock()
	if handled != 3 {
		t.Errorf("handled %d times, want 3", handled)
	}
	fail = false
	mu.Unlock()
	if ok, err := f.q.RequeueDeadLetter(ctx, d.ID); !ok || err != nil {
		t.Fatalf("RequeueDeadLetter = %v, %v", ok, err)
	}
	waitFor(t, "the requeued job acked", func() bool { return mustStats(t, f.q) == ReliableQueueStats{} })
	stop()
	// Purge: two dead letters written by the script path, then gone.
	for range 2 {
		f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: f.q.DeadLetterName(), Values: []any{"rq:err", "x"}})
	}
	if n, err := f.q.PurgeDeadLetters(ctx); n != 2 || err != nil {
		t.Fatalf("PurgeDeadLetters = %d, %v; want 2", n, err)
	}
	if f.rdb.Exists(ctx, f.q.DeadLetterName()).Val() != 0 {
		t.Fatal("dead letters still exist after a purge")
	}
}

// RequeueDeadLetters moves every dead letter back, in batches.
func TestReliableQueueRequeueAll(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	payload, _ := encodeValue(f.q.codec, f.q.object, "again")
	for i := range 250 {
		f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: f.q.DeadLetterName(), Values: []any{f.q.payload, payload, "rq:err", "e", "rq:id", fmt.Sprint("j", i)}})
	}
	n, err := f.q.RequeueDeadLetters(ctx)
	if n != 250 || err != nil {
		t.Fatalf("RequeueDeadLetters = %d, %v; want 250", n, err)
	}
	if st := mustStats(t, f.q); st.Ready != 250 || st.Dead != 0 {
		t.Fatalf("stats %+v, want 250 ready, no dead letter", st)
	}
	msgs := f.rdb.XRange(ctx, "jobs", "-", "+").Val()
	if msgs[0].Values["rq:id"] != "j0" || msgs[0].Values["rq:err"] != nil {
		t.Fatalf("requeued entry %v: want job id j0 and no error", msgs[0].Values)
	}
}

// Entries a foreign writer added without a payload field, or with one that
// does not decode, go to the dead letters at once with their fields; the
// good jobs around them are handled.
func TestReliableQueueForeignEntriesDeadLettered(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"other", "field"}})
	f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{f.q.payload, "\xc1not msgpack"}})
	// Java's RStream<String, String> with MsgPackJacksonCodec: both encoded.
	f.rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []any{"\xa7payload", "\xa5hello"}})
	got := make(chan string, 4)
	process(t, f.q, func(_ context.Context, j *Job[string]) error { got <- j.Value; return nil }, WorkerOptions{Concurrency: 1})
	if v := <-got; v != "hello" {
		t.Fatalf("handled %q, want hello", v)
	}
	waitFor(t, "two dead letters", func() bool { return mustStats(t, f.q).Dead == 2 })
	dl, err := f.q.DeadLetters(ctx, "", 10)
	if err != nil || len(dl) != 2 {
		t.Fatalf("DeadLetters = %v, %v", dl, err)
	}
	if !errors.Is(dl[0].Err, ErrCodec) || dl[0].Fields["other"] != "field" || dl[0].Reason == "" {
		t.Errorf("dead letter of the entry without payload: %+v", dl[0])
	}
	if !errors.Is(dl[1].Err, ErrCodec) || dl[1].Fields[f.q.payload] != "\xc1not msgpack" || dl[1].Attempts != 1 {
		t.Errorf("dead letter of the undecodable entry: %+v", dl[1])
	}
	more, err := f.q.DeadLetters(ctx, dl[0].ID, 10)
	if err != nil || len(more) != 1 || more[0].ID != dl[1].ID {
		t.Fatalf("DeadLetters after the first = %v, %v; want the second", more, err)
	}
}

// A delayed job is not delivered before its due time on the server's clock.
func TestReliableQueueDelay(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	got := make(chan *Job[string], 2)
	process(t, f.q, func(_ context.Context, j *Job[string]) error { got <- j; return nil }, WorkerOptions{Concurrency: 1})
	const delay = 400 * time.Millisecond
	id, added, err := f.q.Enqueue(ctx, "later", JobDelay(delay))
	if err != nil || !added || len(id) != 32 {
		t.Fatalf("Enqueue = %q, %v, %v; want a 32-digit id", id, added, err)
	}
	if st := mustStats(t, f.q); st.Delayed != 1 {
		t.Fatalf("stats %+v right after a delayed Enqueue, want 1 delayed", st)
	}
	if _, _, err := f.q.Enqueue(ctx, "now"); err != nil {
		t.Fatal(err)
	}
	first, second := <-got, <-got
	if first.Value != "now" || second.Value != "later" || second.ID != id {
		t.Fatalf("handled %q then %q (id %s), want now then later (%s)", first.Value, second.Value, second.ID, id)
	}
	if lag := second.FirstDeliveredAt.Sub(second.EnqueuedAt); lag < delay-20*time.Millisecond {
		t.Fatalf("delayed job delivered %v after its enqueue, want >= %v", lag, delay)
	}
}

// A second Enqueue with the same deduplication id within the window adds
// nothing and reports the first job's id.
func TestReliableQueueDedup(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	id1, added1, err1 := f.q.Enqueue(ctx, "a", JobDedupID("order-1", time.Minute))
	id2, added2, err2 := f.q.Enqueue(ctx, "b", JobDedupID("order-1", time.Minute))
	if err1 != nil || err2 != nil || !added1 || added2 || id1 != id2 {
		t.Fatalf("Enqueue twice = (%s %v %v), (%s %v %v); want added then not, one id", id1, added1, err1, id2, added2, err2)
	}
	if n := f.rdb.XLen(ctx, "jobs").Val(); n != 1 {
		t.Fatalf("%d entries, want 1", n)
	}
	id3, added3, _ := f.q.Enqueue(ctx, "c", JobDedupID("order-2", time.Minute), JobDelay(time.Hour))
	id4, added4, _ := f.q.Enqueue(ctx, "c", JobDedupID("order-2", time.Minute))
	if !added3 || added4 || id3 != id4 {
		t.Fatalf("delayed dedup: %s %v, %s %v", id3, added3, id4, added4)
	}
}

// The enqueue script run twice with one call marker (a go-redis resend)
// adds one job and reports the first result both times.
func TestReliableQueueEnqueueResendAddsOnce(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	marker := f.q.parts[0].callPre + "resent"
	keys := []string{f.q.name, f.q.parts[0].delayed, f.q.parts[0].bodies, marker, marker}
	var ids []any
	for range 2 {
		res, err := f.c.scripts.run(ctx, scriptRQEnqueue, keys, f.q.payload, "\xa1x", 0, "", 60000, 0).Slice()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res...)
	}
	if ids[0] != int64(1) || ids[2] != int64(1) || ids[1] != ids[3] {
		t.Fatalf("replies %v, want {1, id} twice", ids)
	}
	if n := f.rdb.XLen(ctx, "jobs").Val(); n != 1 {
		t.Fatalf("%d entries after a resent enqueue, want 1", n)
	}
}

// Bad input is a clear sentinel and leaves Redis unchanged.
func TestReliableQueueBadInput(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	h := func(context.Context, *Job[string]) error { return nil }
	for _, o := range []WorkerOptions{{}, {Concurrency: -1}, {Concurrency: 1, Prefetch: -1}, {Concurrency: 1, Lease: time.Millisecond},
		{Concurrency: 1, MaxDeliveries: -1}, {Concurrency: 1, ShutdownTimeout: -1}, {Concurrency: 1, FetchCooldown: 2 * time.Second}} {
		if err := f.q.Process(ctx, h, o); !errors.Is(err, ErrInvalidOption) {
			t.Errorf("Process(%+v) = %v, want ErrInvalidOption", o, err)
		}
	}
	if err := f.q.Process(ctx, nil, WorkerOptions{Concurrency: 1}); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("Process(nil handler) = %v, want ErrInvalidOption", err)
	}
	if _, _, err := f.q.Enqueue(ctx, "x", JobDelay(-time.Second)); !errors.Is(err, ErrNegativeDuration) {
		t.Errorf("Enqueue(JobDelay(-1s)) = %v, want ErrNegativeDuration", err)
	}
	if _, _, err := f.q.Enqueue(ctx, "x", JobDedupID("", time.Second)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("Enqueue(JobDedupID(\"\")) = %v, want ErrInvalidOption", err)
	}
	if _, _, err := f.q.Enqueue(ctx, "x", JobDedupID("a", 0)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("Enqueue(JobDedupID(a, 0)) = %v, want ErrInvalidOption", err)
	}
	if _, err := f.q.DeadLetters(ctx, "", 0); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("DeadLetters(count 0) = %v, want ErrInvalidOption", err)
	}
	if keys := f.rdb.Keys(ctx, "*").Val(); len(keys) != 0 {
		t.Fatalf("keys %v after refused calls, want none", keys)
	}
	f.rdb.Set(ctx, "jobs", "a string", 0)
	f.rdb.Set(ctx, f.q.DeadLetterName(), "another", 0)
	if _, _, err := f.q.Enqueue(ctx, "x"); !errors.Is(err, ErrWrongType) {
		t.Errorf("Enqueue on a string key = %v, want ErrWrongType", err)
	}
	if err := f.q.Process(ctx, h, WorkerOptions{Concurrency: 1}); !errors.Is(err, ErrWrongType) {
		t.Errorf("Process on a string key = %v, want ErrWrongType", err)
	}
	if _, err := f.q.PurgeDeadLetters(ctx); !errors.Is(err, ErrWrongType) {
		t.Errorf("PurgeDeadLetters on a string key = %v, want ErrWrongType", err)
	}
	if _, err := f.q.RequeueDeadLetters(ctx); !errors.Is(err, ErrWrongType) {
		t.Errorf("RequeueDeadLetters on a string key = %v, want ErrWrongType", err)
	}
	if _, err := f.q.Stats(ctx); !errors.Is(err, ErrWrongType) {
		t.Errorf("Stats on a string key = %v, want ErrWrongType", err)
	}
	if v := f.rdb.Get(ctx, "jobs").Val(); v != "a string" || len(f.rdb.Keys(ctx, "*").Val()) != 2 {
		t.Fatalf("Redis changed: jobs = %q, keys %v", v, f.rdb.Keys(ctx, "*").Val())
	}
	var nilq *ReliableQueue[*int] = GetReliableQueue[*int](f.c, "ptrs")
	if _, _, err := nilq.Enqueue(ctx, nil); !errors.Is(err, ErrNilValue) {
		t.Errorf("Enqueue(nil) = %v, want ErrNilValue", err)
	}
	if _, _, err := GetReliableQueue[string](f.c, "").Enqueue(ctx, "x"); !errors.Is(err, ErrEmptyName) {
		t.Errorf("Enqueue on an empty name = %v, want ErrEmptyName", err)
	}
}

// A worker whose job's lease was taken over cannot settle it: its ack
// reports ErrJobLeaseLost and changes nothing; the new owner's ack works.
func TestReliableQueueStaleWorkerCannotAck(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	if err := f.c.scripts.run(ctx, scriptRQInit, []string{f.q.name, f.q.parts[0].dead}, rqGroup).Err(); err != nil {
		t.Fatal(err)
	}
	id, _, _ := f.q.Enqueue(ctx, "contested")
	f.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: rqGroup, Consumer: "A", Streams: []string{"jobs", ">"}, Count: 1})
	f.rdb.XClaim(ctx, &redis.XClaimArgs{Stream: "jobs", Group: rqGroup, Consumer: "B", Messages: []string{id}})
	keys := []string{f.q.name, f.q.parts[0].delayed, f.q.parts[0].bodies, f.q.parts[0].dead}
	settle := func(consumer, how string) int64 {
		n, err := f.c.scripts.run(ctx, scriptRQSettle, keys, rqGroup, consumer, id, how, id, 1, 0, "e", 1, "").Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, how := range []string{"ack", "retry", "dead"} {
		if n := settle("A", how); n != 0 {
			t.Fatalf("stale %s = %d, want 0 (lease lost)", how, n)
		}
	}
	if st := mustStats(t, f.q); st.InFlight != 1 || st.Delayed != 0 || st.Dead != 0 {
		t.Fatalf("stats %+v after the stale calls, want the job in flight only", st)
	}
	if n := settle("B", "ack"); n != 1 {
		t.Fatalf("owner's ack = %d, want 1", n)
	}
	if n := settle("B", "ack"); n != 2 {
		t.Fatalf("owner's ack resent = %d, want 2 (already settled)", n)
	}
}

// A late call of an earlier delivery cannot settle or renew a job the same
// worker has since taken over again (its lease ended, its fetch claimed it
// back: the same consumer, a higher delivery count): found by the 1,000,000
// job Cluster soak, where a go-redis resend of delivery 1's ack ran after
// delivery 2 had started, and both acks were accepted.
func TestReliableQueueLateAckOfEarlierDeliveryRefused(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	if err := f.c.scripts.run(ctx, scriptRQInit, []string{f.q.name, f.q.parts[0].dead}, rqGroup).Err(); err != nil {
		t.Fatal(err)
	}
	id, _, _ := f.q.Enqueue(ctx, "twice")
	f.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: rqGroup, Consumer: "A", Streams: []string{"jobs", ">"}, Count: 1})
	f.rdb.XClaim(ctx, &redis.XClaimArgs{Stream: "jobs", Group: rqGroup, Consumer: "A", Messages: []string{id}}) // delivery 2, to A again
	keys := []string{f.q.name, f.q.parts[0].delayed, f.q.parts[0].bodies, f.q.parts[0].dead}
	settle := func(how string, delivery int) int64 {
		n, err := f.c.scripts.run(ctx, scriptRQSettle, keys, rqGroup, "A", id, how, id, 1, 0, "e", 1, "", delivery).Int64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	renew := func(delivery int) int64 {
		r, err := f.c.scripts.run(ctx, scriptRQRenew, []string{f.q.name}, 1000, rqGroup, "A", id, delivery).Int64Slice()
		if err != nil || len(r) != 1 {
			t.Fatalf("renew = %v, %v", r, err)
		}
		return r[0]
	}
	if n := renew(1); n != 0 {
		t.Fatalf("renewal of delivery 1 = %d, want 0 (lease lost)", n)
	}
	for _, how := range []string{"ack", "retry", "dead"} {
		if n := settle(how, 1); n != 0 {
			t.Fatalf("delivery 1's %s = %d, want 0 (lease lost)", how, n)
		}
	}
	if st := mustStats(t, f.q); st.InFlight != 1 || st.Delayed != 0 || st.Dead != 0 {
		t.Fatalf("stats %+v after delivery 1's calls, want the job in flight only", st)
	}
	if n := renew(2); n != 1 {
		t.Fatalf("renewal of delivery 2 = %d, want 1", n)
	}
	if n := settle("ack", 2); n != 1 {
		t.Fatalf("delivery 2's ack = %d, want 1", n)
	}
}

// Graceful shutdown: jobs received but not started go back at once; a
// running handler has ShutdownTimeout, then its ctx ends with
// ErrWorkerStopped and its job goes back, not counted as an attempt.
func TestReliableQueueShutdownGivesJobsBack(t *testing.T) {
	f := newRQFixture(t, time.Second)
	ctx := testCtx(t, time.Minute)
	for i := range 3 {
		f.q.Enqueue(ctx, fmt.Sprint(i))
	}
	started := make(chan struct{}, 3)
	causes := make(chan error, 3)
	stop := process(t, f.q, func(hctx context.Context, j *Job[string]) error {
		started <- struct{}{}
		<-hctx.Done()
		causes <- context.Cause(hctx)
		return hctx.Err()
	}, WorkerOptions{Concurrency: 1, Prefetch: 2, ShutdownTimeout: 100 * time.Millisecond})
	<-started
	waitFor(t, "three jobs received", func() bool { return mustStats(t, f.q).InFlight == 3 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Process = %v", err)
	}
	if c := <-causes; !errors.Is(c, ErrWorkerStopped) {
		t.Fatalf("handler's cause = %v, want ErrWorkerStopped", c)
	}
	if st := mustStats(t, f.q); st.Ready != 3 || st.InFlight != 0 || st.Delayed != 0 || st.Dead != 0 {
		t.Fatalf("stats %+v after shutdown, want 3 ready", st)
	}
	got := make(chan int, 3)
	process(t, f.q, func(_ context.Context, j *Job[string]) error { got <- j.Attempt; return nil }, WorkerOptions{Concurrency: 3})
	for range 3 {
		if a := <-got; a != 1 {
			t.Fatalf("attempt %d after a shutdown, want 1", a)
		}
	}
}

// A handler whose worker is cut off from Redis has its ctx ended with
// ErrJobLeaseLost before another worker receives the job; the cut-off
// worker does not ack it.
func TestReliableQueuePartitionedWorkerToldFirst(t *testing.T) {
	srv := redistest.Start(t)
	proxy := redistest.NewProxy(t, srv.Addr())
	direct := srv.Client(t)
	viaProxy := redis.NewClient(&redis.Options{Addr: proxy.Addr()})
	t.Cleanup(func() { viaProxy.Close() })
	const lease = 600 * time.Millisecond
	cut := GetReliableQueue[string](newClient(t, viaProxy, &Options{WatchdogTimeout: lease}), "jobs")
	live := GetReliableQueue[string](newClient(t, direct, &Options{WatchdogTimeout: lease}), "jobs")
	ctx := testCtx(t, time.Minute)
	id, _, _ := live.Enqueue(ctx, "x")
	told := make(chan time.Time, 1)
	var cause error
	running := make(chan struct{})
	process(t, cut, func(hctx context.Context, j *Job[string]) error {
		close(running)
		<-hctx.Done()
		cause = context.Cause(hctx)
		told <- time.Now()
		return nil // claims success: must not be acked
	}, WorkerOptions{Concurrency: 1})
	<-running
	time.Sleep(2 * lease) // renewals keep it leased meanwhile
	proxy.Partition(true)
	received := make(chan *Job[string], 1)
	process(t, live, func(_ context.Context, j *Job[string]) error { received <- j; return nil }, WorkerOptions{Concurrency: 1})
	j := <-received
	at := time.Now()
	select {
	case toldAt := <-told:
		t.Logf("cut-off handler told %v before the job reached another worker", at.Sub(toldAt))
	default:
		t.Fatal("another worker received the job before the cut-off handler's ctx ended")
	}
	if !errors.Is(cause, ErrJobLeaseLost) || !errors.Is(cause, ErrLeaseLost) {
		t.Fatalf("cause %v, want ErrJobLeaseLost", cause)
	}
	if j.ID != id || j.Attempt != 2 {
		t.Fatalf("taken over job %s attempt %d, want %s attempt 2", j.ID, j.Attempt, id)
	}
	proxy.Partition(false)
	waitFor(t, "the job acked once", func() bool { return mustStats(t, live) == ReliableQueueStats{} })
}

// On Redis Cluster every key of the queue is in its name's slot: jobs are
// enqueued now and delayed, handled, retried and dead-lettered there.
func TestReliableQueueCluster(t *testing.T) {
	rdb := redistest.SharedCluster(t).Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	name := uniqueName(t, rdb)
	q := GetReliableQueue[int](c, name)
	ctx := testCtx(t, time.Minute)
	t.Cleanup(func() { rdb.Del(context.Background(), q.name, q.parts[0].delayed, q.parts[0].bodies, q.parts[0].dead) })
	for _, k := range []string{q.parts[0].delayed, q.parts[0].bodies, q.parts[0].dead, q.parts[0].callPre + "1", q.parts[0].dedupPr + "x"} {
		if hashSlot(k) != hashSlot(name) {
			t.Fatalf("key %s in slot %d, the name in %d", k, hashSlot(k), hashSlot(name))
		}
	}
	const n = 60
	for i := range n {
		var opts []EnqueueOption
		if i%10 == 0 {
			opts = append(opts, JobDelay(50*time.Millisecond), JobDedupID(fmt.Sprint(i), time.Minute))
		}
		if _, _, err := q.Enqueue(ctx, i, opts...); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[int]int{}
	process(t, q, func(_ context.Context, j *Job[int]) error {
		mu.Lock()
		defer mu.Unlock()
		seen[j.Value]++
		if j.Value == 7 || (j.Value == 8 && j.Attempt == 1) {
			return errors.New("no")
		}
		return nil
	}, WorkerOptions{Concurrency: 4, MaxDeliveries: 2, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	waitFor(t, "every job done", func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st == ReliableQueueStats{Dead: 1}
	})
	mu.Lock()
	defer mu.Unlock()
	for i := range n {
		want := 1
		if i == 7 || i == 8 {
			want = 2
		}
		if seen[i] != want {
			t.Errorf("job %d handled %d times, want %d", i, seen[i], want)
		}
	}
}

// With ReplicaAck, an Enqueue returns once the replica has the job; one
// that too few replicas acknowledged reports ErrNotReplicated and keeps
// the job, and enqueuing it again with its dedup id adds nothing.
func TestReliableQueueEnqueueReplicaAck(t *testing.T) {
	master, replica := startReplicated(t)
	rdb, rrep := master.Client(t), replica.Client(t)
	ctx := testCtx(t, time.Minute)
	q := GetReliableQueue[string](newClient(t, rdb, &Options{ReplicaAck: ReplicaAck{Replicas: 1, Timeout: 5 * time.Second}}), "acked")
	for i := range 10 {
		id, _, err := q.Enqueue(ctx, fmt.Sprint(i))
		if err != nil {
			t.Fatal(err)
		}
		if len(rrep.XRange(ctx, "acked", id, id).Val()) != 1 {
			t.Fatalf("job %s not on the replica when Enqueue returned", id)
		}
	}
	strict := GetReliableQueue[string](newClient(t, rdb, &Options{ReplicaAck: ReplicaAck{Replicas: 2, Timeout: 100 * time.Millisecond}}), "strict")
	id, added, err := strict.Enqueue(ctx, "x", JobDedupID("x", time.Minute))
	if !errors.Is(err, ErrNotReplicated) || id == "" || !added {
		t.Fatalf("Enqueue with 2 replicas asked, 1 present = %q, %v, %v; want the id, true, ErrNotReplicated", id, added, err)
	}
	id2, added2, _ := strict.Enqueue(ctx, "x", JobDedupID("x", time.Minute))
	if id2 != id || added2 {
		t.Fatalf("Enqueue again = %q, %v; want %q, false", id2, added2, id)
	}
}

// An Observer sees each job's enqueue and ack (a duplicate enqueue denied),
// each with its round trip.
func TestReliableQueueObserved(t *testing.T) {
	srv := redistest.Start(t)
	c, rec, _ := observedClientOn(t, srv.Client(t), &Options{WatchdogTimeout: time.Second})
	q := GetReliableQueue[string](c, "observed")
	ctx := testCtx(t, time.Minute)
	q.Enqueue(ctx, "a", JobDedupID("a", time.Minute))
	q.Enqueue(ctx, "a", JobDedupID("a", time.Minute))
	q.Enqueue(ctx, "b")
	process(t, q, func(context.Context, *Job[string]) error { return nil }, WorkerOptions{Concurrency: 1})
	waitFor(t, "two acks recorded", func() bool { return len(rec.opsOf(opRQAck, "observed")) == 2 })
	enq := rec.opsOf(opRQEnqueue, "observed")
	if len(enq) != 3 || enq[0].Outcome != OutcomeOK || enq[1].Outcome != OutcomeDenied {
		t.Fatalf("enqueue records %+v: want ok, denied, ok", enq)
	}
	for _, op := range append(enq, rec.opsOf(opRQAck, "observed")...) {
		if op.RoundTrips < 1 || op.Err != nil {
			t.Errorf("record %+v: want a round trip and no error", op)
		}
	}
}
