package redisson

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goredisson/redisson/internal/redistest"
	"github.com/redis/go-redis/v9"
)

// A queue of 4 partitions: jobs given a JobPartitionKey are first
// delivered in their enqueue order per key (one handler, so the start
// order is the delivery order); jobs without one go round the partitions;
// partition 0 is the stream at the queue's name, the others' ids name
// their partition; Stats counts all of them.
func TestReliableQueuePartitionOrder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	q := GetReliableQueue[string](c, "jobs", WithPartitions(4))
	ctx := testCtx(t, time.Minute)
	if q.Partitions() != 4 || strings.Join(q.PartitionNames(), " ") != "jobs jobs:p1 jobs:p2 jobs:p3" {
		t.Fatalf("partitions %d %v", q.Partitions(), q.PartitionNames())
	}
	const keys, per = 8, 40
	for i := range per {
		for k := range keys {
			if _, _, err := q.Enqueue(ctx, fmt.Sprintf("k%d-%d", k, i), JobPartitionKey(fmt.Sprint("k", k))); err != nil {
				t.Fatal(err)
			}
		}
	}
	prefixes := map[string]int{}
	for range 8 { // round robin: two in each partition
		id, _, err := q.Enqueue(ctx, "free")
		if err != nil {
			t.Fatal(err)
		}
		prefixes[rqPartOfID(id)]++
	}
	if len(prefixes) != 4 || prefixes["p0"] != 2 {
		t.Fatalf("round robin put jobs in %v", prefixes)
	}
	for _, name := range q.PartitionNames() {
		if n := rdb.XLen(ctx, name).Val(); n == 0 {
			t.Fatalf("partition %s is empty", name)
		}
	}
	if st := mustStats(t, q); st.Ready != keys*per+8 {
		t.Fatalf("Stats = %+v, want %d ready", st, keys*per+8)
	}
	var mu sync.Mutex
	next := map[string]int{}
	var bad []string
	done := make(chan struct{})
	handled := 0
	process(t, q, func(_ context.Context, j *Job[string]) error {
		mu.Lock()
		defer mu.Unlock()
		if j.Value != "free" {
			k, i, _ := strings.Cut(j.Value, "-")
			if want := fmt.Sprint(next[k]); i != want {
				bad = append(bad, j.Value+" before "+k+"-"+want)
			}
			next[k]++
		}
		if handled++; handled == keys*per+8 {
			close(done)
		}
		return nil
	}, WorkerOptions{Concurrency: 1, Prefetch: 4})
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("jobs not handled")
	}
	if len(bad) > 0 {
		t.Fatalf("out of order within a partition: %v", bad)
	}
	waitFor(t, "every job acked", func() bool { st := mustStats(t, q); return st.Ready+st.InFlight == 0 })
	info, err := c.InspectReliableQueue(ctx, "jobs")
	if err != nil || info.Partitions != 4 || len(info.Workers) != 1 {
		t.Fatalf("Inspect = %+v, %v", info, err)
	}
}

// Dead letters, deduplication and bad options of a partitioned queue: a
// dedup id keeps to one partition; dead letters of every partition are
// listed (paged one by one across partitions), requeued by id and purged;
// WithPartitions out of range is ErrInvalidOption and writes nothing.
func TestReliableQueuePartitionDeadLetters(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	for _, n := range []int{-1, maxRQPartitions + 1} {
		bad := GetReliableQueue[string](c, "bad", WithPartitions(n))
		if _, _, err := bad.Enqueue(ctx, "x"); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("Enqueue with %d partitions: %v", n, err)
		}
		if err := bad.Process(ctx, func(context.Context, *Job[string]) error { return nil }, WorkerOptions{Concurrency: 1}); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("Process with %d partitions: %v", n, err)
		}
		if _, err := bad.Stats(ctx); !errors.Is(err, ErrInvalidOption) {
			t.Fatalf("Stats with %d partitions: %v", n, err)
		}
	}
	if n := rdb.DBSize(ctx).Val(); n != 0 {
		t.Fatalf("bad options wrote %d keys", n)
	}

	q := GetReliableQueue[string](c, "jobs", WithPartitions(3))
	id1, added1, err1 := q.Enqueue(ctx, "a", JobDedupID("same", time.Minute))
	id2, added2, err2 := q.Enqueue(ctx, "b", JobDedupID("same", time.Minute))
	if err1 != nil || err2 != nil || !added1 || added2 || id1 != id2 {
		t.Fatalf("dedup: %q %v %v; %q %v %v", id1, added1, err1, id2, added2, err2)
	}
	for i := range 11 {
		if _, _, err := q.Enqueue(ctx, fmt.Sprint("fail-", i)); err != nil {
			t.Fatal(err)
		}
	}
	stop := process(t, q, func(_ context.Context, j *Job[string]) error {
		if strings.HasPrefix(j.Value, "fail-") {
			return errors.New("no")
		}
		return nil
	}, WorkerOptions{Concurrency: 4, MaxDeliveries: 1})
	waitFor(t, "11 dead letters", func() bool { return mustStats(t, q).Dead == 11 })
	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Fatal(err)
	}
	var all []DeadLetter[string]
	after := ""
	for {
		page, err := q.DeadLetters(ctx, after, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		all = append(all, page...)
		after = page[0].ID
	}
	seen := map[string]bool{}
	parts := map[string]bool{}
	for _, d := range all {
		if seen[d.Value] || d.Reason != "no" {
			t.Fatalf("dead letters %+v", all)
		}
		seen[d.Value] = true
		p := rqPartOfID(d.ID)
		parts[p] = true
		if jp := rqPartOfID(d.JobID); jp != p {
			t.Fatalf("dead letter %s of job %s", d.ID, d.JobID)
		}
	}
	if len(all) != 11 || len(parts) != 3 {
		t.Fatalf("%d dead letters over %d partitions: %+v", len(all), len(parts), all)
	}
	last := all[len(all)-1]
	if !strings.HasPrefix(last.ID, "p2/") {
		t.Fatalf("last dead letter %s, want partition 2's", last.ID)
	}
	if ok, err := q.RequeueDeadLetter(ctx, last.ID); err != nil || !ok {
		t.Fatalf("RequeueDeadLetter(%s) = %v, %v", last.ID, ok, err)
	}
	for _, id := range []string{last.ID, "p3/1-0", "p0/1-0", "px/1-0", "p01/1-0"} {
		if ok, err := q.RequeueDeadLetter(ctx, id); err != nil || ok {
			t.Fatalf("RequeueDeadLetter(%s) = %v, %v", id, ok, err)
		}
	}
	if n := rdb.XLen(ctx, "jobs:p2").Val(); n != 1 {
		t.Fatalf("partition 2 holds %d jobs, want the requeued one", n)
	}
	if n, err := q.RequeueDeadLetters(ctx); err != nil || n != 10 {
		t.Fatalf("RequeueDeadLetters = %d, %v", n, err)
	}
	if st := mustStats(t, q); st.Ready != 11 || st.Dead != 0 {
		t.Fatalf("Stats = %+v", st)
	}
	stop = process(t, q, func(context.Context, *Job[string]) error { return errors.New("no") }, WorkerOptions{Concurrency: 4, MaxDeliveries: 1})
	waitFor(t, "11 dead letters again", func() bool { return mustStats(t, q).Dead == 11 })
	_ = stop()
	if n, err := q.PurgeDeadLetters(ctx); err != nil || n != 11 {
		t.Fatalf("PurgeDeadLetters = %d, %v", n, err)
	}
}

// On a 3-master Cluster a queue's partitions spread over the masters, and
// a worker consumes all of them; Inspect reads them all.
func TestReliableQueueClusterPartitions(t *testing.T) {
	cl := redistest.SharedCluster(t)
	rdb := cl.Client(t)
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	ctx := testCtx(t, time.Minute)
	name := uniqueName(t, rdb)
	q := GetReliableQueue[string](c, name, WithPartitions(12))
	t.Cleanup(func() {
		for i := range q.parts {
			p := &q.parts[i]
			rdb.Del(context.Background(), p.stream, p.delayed, p.bodies, p.dead)
		}
		rdb.Del(context.Background(), rqPartitionsKey(name))
	})
	masters := map[string]bool{}
	for _, s := range q.PartitionNames() {
		node, err := rdb.MasterForKey(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		masters[node.Options().Addr] = true
	}
	if len(masters) < 2 {
		t.Fatalf("12 partitions on %d masters", len(masters))
	}
	const n = 120
	for i := range n {
		if _, _, err := q.Enqueue(ctx, fmt.Sprint("j", i), JobDelay(time.Duration(i%2)*time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	got := map[string]int{}
	process(t, q, func(_ context.Context, j *Job[string]) error {
		mu.Lock()
		got[j.Value]++
		mu.Unlock()
		return nil
	}, WorkerOptions{Concurrency: 4})
	waitFor(t, "every job handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
	waitFor(t, "every job acked", func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.Ready+st.InFlight+st.Delayed == 0
	})
	for v, k := range got {
		if k != 1 {
			t.Fatalf("job %s handled %d times", v, k)
		}
	}
	info, err := c.InspectReliableQueue(ctx, name)
	if err != nil || info.Partitions != 12 || info.Ready+info.InFlight != 0 {
		t.Fatalf("Inspect = %+v, %v", info, err)
	}
}

// rqPartOfID is the partition an id names: "p0", or its "p<i>" prefix.
func rqPartOfID(id string) string {
	if p, _, ok := strings.Cut(id, "/"); ok {
		return p
	}
	return "p0"
}

// A worker of a queue with more partitions than the blocking reads its
// pool spares (PoolSize 4: 2 blocking reads, 8 partitions) picks up the
// jobs enqueued on an idle queue in every partition, and its other calls
// still find connections.
func TestReliableQueuePartitionsBeyondPool(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 4 })
	c := newClient(t, rdb, &Options{WatchdogTimeout: time.Second})
	q := GetReliableQueue[string](c, "jobs", WithPartitions(8))
	ctx := testCtx(t, time.Minute)
	var mu sync.Mutex
	got := map[string]int{}
	process(t, q, func(_ context.Context, j *Job[string]) error {
		time.Sleep(5 * time.Millisecond)
		mu.Lock()
		got[j.Value]++
		mu.Unlock()
		return nil
	}, WorkerOptions{Concurrency: 2})
	// The loops wait for jobs: 2 in blocking reads, 6 pausing.
	admin := srv.Client(t)
	most := 0
	for range 30 {
		info := admin.Info(ctx, "clients").Val()
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "blocked_clients:"); ok {
				var b int
				fmt.Sscan(v, &b)
				most = max(most, b)
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if most < 1 || most > 2 {
		t.Fatalf("%d blocking reads at most, want 1 or 2 (half the pool)", most)
	}
	const n = 64
	for i := range n {
		if _, _, err := q.Enqueue(ctx, fmt.Sprint("j", i)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "every job handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == n
	})
	waitFor(t, "every job acked", func() bool { st := mustStats(t, q); return st.Ready+st.InFlight == 0 })
	for v, k := range got {
		if k != 1 {
			t.Fatalf("job %s handled %d times", v, k)
		}
	}
}

// At a trickle (each job enqueued once the last is handled) a partitioned
// queue's worker receives every job by its partition's blocking read and
// checks for more with a plain XREADGROUP, not the fetch script: scripts
// run are the enqueue and the settle of each job plus the periodic
// reclaims (one per partition per second at most) and a margin of a
// tenth of the jobs, where a fetch per job would add one script per job.
func TestReliableQueuePartitionTrickleScripts(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	admin := srv.Client(t)
	c := newClient(t, rdb, nil)
	q := GetReliableQueue[string](c, "trickle", WithPartitions(2))
	ctx := testCtx(t, time.Minute)
	handled := make(chan struct{}, 1)
	process(t, q, func(context.Context, *Job[string]) error {
		handled <- struct{}{}
		return nil
	}, WorkerOptions{Concurrency: 4})
	time.Sleep(300 * time.Millisecond) // the partitions' loops reach their blocking reads
	if err := admin.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const jobs = 100
	start := time.Now()
	for i := range jobs {
		if _, _, err := q.Enqueue(ctx, fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-handled:
		case <-ctx.Done():
			t.Fatalf("job %d not handled", i)
		}
	}
	waitFor(t, "every job acked", func() bool { // by plain commands: Stats would run a script
		n := int64(0)
		for _, s := range q.PartitionNames() {
			n += admin.XPending(ctx, s, rqGroup).Val().Count
		}
		return n == 0
	})
	elapsed := time.Since(start)
	stats, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	scripts := 0
	for _, line := range strings.Split(stats, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if ok && (name == "evalsha" || name == "eval") {
			var n int
			if _, err := fmt.Sscanf(rest, "calls=%d", &n); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			scripts += n
		}
	}
	reclaims := 2 * (int(elapsed/time.Second) + 2)
	if want := 2*jobs + reclaims + jobs/10; scripts > want {
		t.Fatalf("%d scripts for %d jobs in %v, want at most %d (enqueue, settle, reclaims)", scripts, jobs, elapsed.Round(time.Millisecond), want)
	}
	t.Logf("%d scripts for %d jobs in %v", scripts, jobs, elapsed.Round(time.Millisecond))
}
