package redisson

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// rqWorker is one Process call: a fetch loop (Process's goroutine) that
// receives jobs into a buffer of Concurrency+Prefetch slots, and
// Concurrency handler goroutines that run and settle them
// (rqworker_job.go). Every received job is leased from its receipt: the
// client's watchdog renews it with rq_renew until it is settled.
type rqWorker[T any] struct {
	q        *ReliableQueue[T]
	handler  func(context.Context, *Job[T]) error
	opts     WorkerOptions
	consumer string
	spec     *renewSpec
	reclaim  time.Duration
	shared   bool // several partitions' fetch loops share the slots
	// blockers bounds the partitions' blocking reads (each holds a
	// connection of go-redis's pool while it waits): half the pool.
	blockers chan struct{}

	slots chan struct{}   // a token per job received and not yet settled
	jobs  chan *Job[T]    // received, not yet started
	stop  chan struct{}   // closed when Process's ctx ends (or the client closes)
	base  context.Context // the handlers' parent: Process's values, not its cancellation
	kill  context.CancelCauseFunc
	wg    sync.WaitGroup
}

// Process runs handler for the queue's jobs, Concurrency at a time, until
// ctx ends or the client closes; then it shuts down gracefully: it stops
// receiving jobs, gives back at once the ones received but not started,
// lets the running handlers finish for up to ShutdownTimeout, then cancels
// their contexts (cause ErrWorkerStopped) and waits for them to return.
//
// A handler returning nil acks its job: the job leaves the queue. An error
// (a panic is one, matching ErrJobPanicked) makes the job due again after
// Backoff, or moves it to the dead letters, with the error's text, once it
// has had MaxDeliveries deliveries. A job whose payload does not decode
// into T, or that has no payload field (a foreign writer's entry), moves to
// the dead letters at once, never dropped. The handler's ctx ends with
// cause ErrJobLeaseLost when the worker lost the job's lease (see
// ReliableQueue): the job is then left to the worker that takes it over.
// Jobs are received in stream order; with Concurrency above 1 they run
// concurrently, so they may finish in any order. A partitioned queue's
// worker runs a fetch loop per partition, feeding the same handlers: jobs
// are received in order within each partition, in no order across them,
// and up to one job per partition more than Concurrency+Prefetch may be
// received ahead.
//
// Process returns an error matching ctx.Err() after a shutdown caused by
// ctx; ErrClientClosed after one caused by Client.Close; ErrInvalidOption
// for a nil handler or an option out of range, and ErrWrongType when the
// queue's keys hold another type (before it receives anything); and
// ErrEmptyName, ErrInvalidName. Redis errors while it runs are reported
// as events (Options.Logger, Observer) and retried.
func (q *ReliableQueue[T]) Process(ctx context.Context, handler func(context.Context, *Job[T]) error, opts WorkerOptions) error {
	if err := q.check(); err != nil {
		return err
	}
	if q.badPay != nil {
		return q.badPay
	}
	if handler == nil {
		return q.wrap(invalidOption(ErrInvalidOption, "handler", "nil", "a function"))
	}
	opts, err := opts.resolve(q.c.opts.WatchdogTimeout)
	if err != nil {
		return q.wrap(err)
	}
	// A partitioned queue's worker has a slot more per partition: each
	// partition's loop waits for new jobs holding one (see fetchLoop), and
	// the others must still find Concurrency+Prefetch.
	buf := opts.Concurrency + opts.Prefetch
	if len(q.parts) > 1 {
		buf += len(q.parts)
	}
	w := &rqWorker[T]{
		q:        q,
		handler:  handler,
		opts:     opts,
		consumer: q.c.id + ":" + q.c.newRequest(),
		spec:     &renewSpec{what: reliableQueueKind, script: scriptRQRenew},
		reclaim:  max(min(opts.Lease/4, time.Second), 10*time.Millisecond),
		shared:   len(q.parts) > 1,
		blockers: make(chan struct{}, max(poolSize(q.c.rdb)/2, 1)),
		slots:    make(chan struct{}, buf),
		jobs:     make(chan *Job[T], buf),
		stop:     make(chan struct{}),
	}
	for i := range q.parts {
		if err := w.init(ctx, &q.parts[i]); err != nil {
			return err
		}
	}
	if w.shared {
		w.recordPartitions(ctx)
	}
	w.base, w.kill = context.WithCancelCause(context.WithoutCancel(ctx))
	defer w.kill(nil)
	for range opts.Concurrency {
		w.wg.Go(w.handle)
	}
	stopped := context.AfterFunc(ctx, func() { close(w.stop) })
	var cause error
	if w.shared {
		var loops sync.WaitGroup
		causes := make([]error, len(q.parts))
		for i := range q.parts {
			loops.Go(func() { causes[i] = w.fetchLoop(ctx, &q.parts[i]) })
		}
		loops.Wait()
		cause = causes[0]
	} else {
		cause = w.fetchLoop(ctx, &q.parts[0])
	}
	if stopped() {
		close(w.stop) // the client closed first
	}
	w.shutdown()
	return cause
}

// recordPartitions records the partitions consumed (docs/keys.md) for
// inspections; a failure is reported as an event (nothing depends on it).
func (w *rqWorker[T]) recordPartitions(ctx context.Context) {
	w.q.c.trip(ctx, 1)
	err := w.q.c.rdb.Set(ctx, rqPartitionsKey(w.q.name), len(w.q.parts), 0).Err()
	if err != nil {
		w.q.c.emit.emit(Event{Type: EventJobFetchFailed, Kind: reliableQueueKind, Name: w.q.name, Owner: w.consumer, Err: w.q.wrap(err)})
	}
}

// init checks partition p's keys' types and creates its consumer group. A
// failure other than ErrWrongType (Redis unreachable or loading) is
// reported as an event and retried until ctx ends or the client closes.
func (w *rqWorker[T]) init(ctx context.Context, p *rqPart) error {
	for fails := 1; ; fails++ {
		w.q.c.trip(ctx, 1)
		err := w.q.wrap(w.q.c.scripts.run(ctx, scriptRQInit, []string{p.stream, p.dead}, rqGroup).Err())
		if err == nil || errors.Is(err, ErrWrongType) {
			return err
		}
		if ctx.Err() != nil || w.q.c.closed.Load() {
			return err
		}
		w.q.c.emit.emit(Event{Type: EventJobFetchFailed, Kind: reliableQueueKind, Name: p.stream, Owner: w.consumer, Err: err})
		t := time.NewTimer(min(time.Duration(fails)*50*time.Millisecond, time.Second))
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-w.q.c.closing:
		}
		t.Stop()
	}
}

// fetchLoop receives partition p's jobs until stop is closed or the client
// closes, and returns the error Process returns.
func (w *rqWorker[T]) fetchLoop(ctx context.Context, p *rqPart) error {
	lastReclaim := time.Time{}
	var dueAt time.Time // when the next delayed job is due, as the last fetch saw it; zero: none
	fails := 0
	// caughtUp: the last block read every new job there was (fewer than it
	// asked for), so the next round may block again at once, without the
	// fetch script, until a reclaim or a delayed job is due. At a steady
	// trickle of jobs that halves the round trips per job.
	caughtUp := false
	// more: a partition's blocking read (one slot, see below) took a job,
	// so more may wait; the next round reads them with XREADGROUP without
	// BLOCK rather than the fetch script (at a trickle that halves the
	// commands per job), unless a reclaim or a delayed job is due.
	more := false
	// linger: the last round took jobs, but fewer than it had room for:
	// the next waits FetchCooldown first, so that the jobs enqueued
	// meanwhile come in one read.
	linger := false
	for {
		if linger && w.opts.FetchCooldown > 0 && !w.pause(w.opts.FetchCooldown) {
			break
		}
		n := w.takeSlots()
		if n == 0 {
			break
		}
		reclaim := time.Since(lastReclaim) >= w.reclaim
		dueNow := !dueAt.IsZero() && !time.Now().Before(dueAt)
		got, err := 0, error(nil)
		read := more && !reclaim && !dueNow
		if read {
			got, err = w.block(p, n, -1) // no BLOCK
		} else if !caughtUp || reclaim || dueNow {
			var due time.Duration
			got, due, err = w.fetch(p, n, reclaim)
			if err == nil && reclaim {
				lastReclaim = time.Now()
			}
			if err == nil {
				dueAt = time.Time{}
				if due >= 0 {
					dueAt = time.Now().Add(due)
				}
			}
		}
		caughtUp = read && err == nil && got < n
		more = false
		if err == nil && got == 0 && w.running() {
			wait := w.reclaim - time.Since(lastReclaim)
			if !dueAt.IsZero() {
				wait = min(wait, time.Until(dueAt))
			}
			if wait >= time.Millisecond { // BLOCK 0 would wait for ever
				if w.shared {
					// The other partitions' loops need the slots more
					// than a read that may wait for long: it keeps one.
					w.giveSlots(n - 1)
					n = 1
				}
				got, err = w.blockOrPause(p, n, wait)
				caughtUp = err == nil && got > 0 && got < n
				more = w.shared && err == nil && got > 0 && got == n
			}
		}
		w.giveSlots(n - got)
		linger = err == nil && got > 0 && got < n
		if err != nil {
			fails++
			w.failed(p, err)
			if !w.pause(min(time.Duration(fails)*50*time.Millisecond, time.Second)) {
				break
			}
			continue
		}
		fails = 0
	}
	if w.q.c.closed.Load() && ctx.Err() == nil {
		return ErrClientClosed
	}
	return fmt.Errorf("redisson: %s %q: worker stopped: %w", w.q.kind, w.q.name, ctx.Err())
}

// blockOrPause is block, for a partition's loop when a blocking read is
// free (else it waits up to 250ms, for a fetch again); it is block for an
// unpartitioned queue.
func (w *rqWorker[T]) blockOrPause(p *rqPart, n int, wait time.Duration) (int, error) {
	if !w.shared {
		return w.block(p, n, wait)
	}
	select {
	case w.blockers <- struct{}{}:
		defer func() { <-w.blockers }()
		return w.block(p, n, wait)
	default:
		w.pause(min(wait, rqPollPause))
		return 0, nil
	}
}

// rqPollPause is how long a partition's loop that found no blocking read
// free waits before it fetches again.
const rqPollPause = 250 * time.Millisecond

// poolSize is the connection pool size of rdb (of each node, on a
// Cluster); go-redis's default when rdb tells none.
func poolSize(rdb redis.UniversalClient) int {
	n := 0
	switch c := rdb.(type) {
	case *redis.Client:
		n = c.Options().PoolSize
	case *redis.ClusterClient:
		n = c.Options().PoolSize
	case *redis.Ring:
		n = c.Options().PoolSize
	}
	if n <= 0 {
		n = 10 * runtime.GOMAXPROCS(0)
	}
	return n
}

// running reports whether the worker has not been told to stop.
func (w *rqWorker[T]) running() bool {
	select {
	case <-w.stop:
		return false
	case <-w.q.c.closing:
		return false
	default:
		return true
	}
}

// pause waits d, or until the worker must stop (reporting false).
func (w *rqWorker[T]) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stop:
	case <-w.q.c.closing:
	}
	return false
}

// takeSlots waits for a free slot and takes every free one (at most 100);
// 0 when the worker must stop.
func (w *rqWorker[T]) takeSlots() int {
	select {
	case w.slots <- struct{}{}:
	case <-w.stop:
		return 0
	case <-w.q.c.closing:
		return 0
	}
	n := 1
	for n < 100 {
		select {
		case w.slots <- struct{}{}:
			n++
			continue
		default:
		}
		break
	}
	return n
}

// giveSlots frees n slots.
func (w *rqWorker[T]) giveSlots(n int) {
	for range n {
		<-w.slots
	}
}

// failed reports a failed fetch of partition p as an event; a missing
// group (the stream was deleted) is created again.
func (w *rqWorker[T]) failed(p *rqPart, err error) {
	w.q.c.emit.emit(Event{Type: EventJobFetchFailed, Kind: reliableQueueKind, Name: p.stream, Owner: w.consumer,
		Err: err})
	if isNoGroup(err) {
		_ = w.init(w.background(), p)
	}
}

// background is the context of the worker's own calls: not cancelled by
// Process's ctx (a reply that carries received jobs must be read), bounded
// by the lease.
func (w *rqWorker[T]) background() context.Context {
	return context.WithoutCancel(context.Background())
}

// fetch runs rq_fetch on partition p for at most n jobs (taking over those
// whose lease ended when reclaim) and hands them to the handlers; it
// returns how many it handed over and how long until the next delayed job
// is due (-1: none).
func (w *rqWorker[T]) fetch(p *rqPart, n int, reclaim bool) (int, time.Duration, error) {
	lease := int64(0)
	if reclaim {
		lease = w.opts.Lease.Milliseconds()
	}
	ctx, cancel := context.WithTimeout(w.background(), w.opts.Lease)
	defer cancel()
	sent := time.Now()
	res, err := w.q.c.scripts.run(ctx, scriptRQFetch, p.keys, rqGroup, w.consumer, n, lease, w.opts.MaxDeliveries).Slice()
	if err != nil {
		return 0, -1, err
	}
	if len(res) != 3 {
		return 0, -1, w.q.errorf("%w: fetch reply %v", ErrUnexpectedReply, res)
	}
	due, _ := res[1].(int64)
	entries, _ := res[2].([]any)
	got := 0
	for _, e := range entries {
		f, ok := e.([]any)
		if !ok || len(f) != 3 {
			continue
		}
		id, _ := f[0].(string)
		deliveries, _ := f[1].(int64)
		fields, _ := f[2].([]any)
		if w.receive(p, id, int(deliveries), fields, sent) {
			got++
		}
	}
	if due < 0 {
		return got, -1, nil
	}
	return got, time.Duration(due) * time.Millisecond, nil
}

// block waits up to wait for new jobs of partition p with XREADGROUP BLOCK
// (the pickup of a job enqueued on an idle queue) and hands them to the
// handlers; a negative wait reads without BLOCK.
func (w *rqWorker[T]) block(p *rqPart, n int, wait time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(w.background(), wait+w.opts.Lease)
	defer cancel()
	sent := time.Now()
	streams, err := w.q.c.rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: rqGroup, Consumer: w.consumer, Streams: []string{p.stream, ">"}, Count: int64(n), Block: wait,
	}).Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	got := 0
	for _, s := range streams {
		for _, m := range s.Messages {
			fields := make([]any, 0, 2*len(m.Values))
			for k, v := range m.Values {
				fields = append(fields, k, v)
			}
			if w.receive(p, m.ID, 1, fields, sent) {
				got++
			}
		}
	}
	return got, nil
}
