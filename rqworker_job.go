package redisson

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The rq:* metadata fields of a job entry (docs/keys.md).
const (
	rqFieldID    = "rq:id"
	rqFieldAtt   = "rq:att"
	rqFieldEnq   = "rq:enq"
	rqFieldFirst = "rq:first"
	rqFieldErr   = "rq:err"
)

// maxErrText bounds the error text kept with a job.
const maxErrText = 4096

// rqSettled, when set (only tests set it, before any worker starts), is
// told of every settle call before it is sent (done false, sent false)
// and of its result: the crash tests record their history of acks from
// it.
var rqSettled func(jobID, how string, attempt int, sent, done bool)

// receive turns a received entry into a Job, leases it (the watchdog renews
// it from now on) and queues it for the handlers; it reports whether it
// did. An entry without a payload, or whose payload does not decode, goes
// to the dead letters at once. sent is when the call that received it was
// sent: the lease runs from then.
func (w *rqWorker[T]) receive(p *rqPart, id string, deliveries int, fields []any, sent time.Time) bool {
	j := &Job[T]{ID: id, entry: id, dlv: deliveries, part: p}
	var payload string
	hasPayload := false
	for i := 0; i+1 < len(fields); i += 2 {
		k, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		switch k {
		case w.q.payload:
			payload, hasPayload = v, true
		case rqFieldID:
			j.ID = v
		case rqFieldAtt:
			j.prior, _ = strconv.Atoi(v)
		case rqFieldEnq:
			j.enqMs = parseMs(v)
		case rqFieldFirst:
			j.FirstDeliveredAt = time.UnixMilli(parseMs(v))
		case rqFieldErr:
			j.LastError = v
		}
	}
	if j.enqMs == 0 {
		ms, _, _ := strings.Cut(id, "-")
		j.enqMs = parseMs(ms)
	}
	j.EnqueuedAt = time.UnixMilli(j.enqMs)
	j.id = j.ID
	j.ID = p.prefix + j.ID
	j.Attempt = j.prior + deliveries
	if j.Attempt == 1 {
		j.FirstDeliveredAt = time.UnixMilli(time.Now().UnixMilli()) // as later deliveries read it
	}
	deadline := sent.Add(w.q.c.opts.WatchdogTimeout - lossMargin(w.q.c.opts.WatchdogTimeout))
	var bad error
	if !hasPayload {
		bad = w.q.errorf("%w: entry %s has no payload field", ErrCodec, id)
	} else if j.Value, bad = decodeValue[T](w.q.codec, w.q.object, []byte(payload)); bad == nil {
		h := newHold(p.stream, w.consumer+" "+id, "", w.q.c.slot(p.stream))
		h.renewal = w.spec
		h.renewArgs = []any{rqGroup, w.consumer, id, deliveries}
		if !w.q.c.watchdog.add(h, deadline) {
			return false // the client closed: the lease ends on its own
		}
		j.hold = h
		w.jobs <- j // never blocks: the caller holds a slot for it
		return true
	}
	w.q.c.emit.emit(Event{Type: EventJobUndecodable, Kind: reliableQueueKind, Name: p.stream, Owner: w.consumer, Err: bad})
	ctx, rec := w.q.begin(w.base, opRQDeadLetter)
	_, err := w.settleCall(ctx, j, "dead", 0, bad.Error(), deadline)
	rec.end(err, OutcomeOK)
	return false
}

// handle is a handler goroutine: it runs the jobs queued, until the queue
// is closed; once the worker stops it gives back the jobs not started.
func (w *rqWorker[T]) handle() {
	for j := range w.jobs {
		if w.running() {
			w.run(j)
		} else {
			w.giveBack(j)
		}
		<-w.slots
	}
}

// run runs the handler for j, its context ended when j's lease is lost,
// and settles j. The run is an operation (reliable_queue.run) whose context
// the handler's derives from, so that an Observer's span of it is the
// parent of the handler's own.
func (w *rqWorker[T]) run(j *Job[T]) {
	rctx, rec := w.q.begin(w.base, opRQRun)
	ctx, cancel := context.WithCancelCause(rctx)
	// The hold's end cancels the handler's context from the goroutine that
	// ends it (no goroutine of its own per job); after the handler returned
	// that cancel changes nothing the settle reads, as the hold's end is
	// checked there again.
	j.hold.whenEnded(func(error) { cancel(w.leaseCause(j)) })
	err := w.call(ctx, j)
	cause := context.Cause(ctx)
	cancel(nil)
	rec.end(err, OutcomeOK)
	w.settle(j, err, cause)
}

// leaseCause is the cause given to the handler of j whose hold ended.
func (w *rqWorker[T]) leaseCause(j *Job[T]) error {
	if _, err := j.hold.ended(); !errors.Is(err, ErrLeaseLost) {
		return err // ErrClientClosed
	}
	return w.q.errorf("job %s: %w", j.ID, ErrJobLeaseLost)
}

// call runs the handler; a panic is an error matching ErrJobPanicked.
func (w *rqWorker[T]) call(ctx context.Context, j *Job[T]) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrJobPanicked, r)
		}
	}()
	return w.handler(ctx, j)
}

// settle ends j's delivery by the handler's result err: ack, retry or
// dead letter. A job whose lease ended first is left alone: the worker
// that takes it over settles it.
func (w *rqWorker[T]) settle(j *Job[T], err, cause error) {
	deadline := w.q.c.watchdog.forget(j.hold)
	defer w.q.c.watchdog.remove(j.hold)
	op, how, delay, text := opRQAck, "ack", time.Duration(0), ""
	switch {
	case err == nil:
	case errors.Is(cause, ErrWorkerStopped):
		w.giveBack(j)
		return
	case j.Attempt >= w.opts.MaxDeliveries:
		op, how, text = opRQDeadLetter, "dead", err.Error()
	default:
		op, how, text = opRQRetry, "retry", err.Error()
		delay = max(w.opts.Backoff(j.Attempt), 0)
	}
	ctx, rec := w.q.begin(w.base, op)
	if ended, _ := j.hold.ended(); ended {
		rec.end(w.leaseCause(j), OutcomeOK)
		return
	}
	_, serr := w.settleCall(ctx, j, how, delay, text, deadline)
	rec.end(serr, OutcomeOK)
}

// giveBack returns j, received but not run (or cut off by the shutdown),
// to the queue at once, this delivery not counted.
func (w *rqWorker[T]) giveBack(j *Job[T]) {
	deadline := w.q.c.watchdog.forget(j.hold)
	defer w.q.c.watchdog.remove(j.hold)
	if ended, _ := j.hold.ended(); ended {
		return
	}
	j.Attempt--
	ctx, rec := w.q.begin(w.base, opRQGiveBack)
	_, err := w.settleCall(ctx, j, "retry", 0, "", deadline)
	rec.end(err, OutcomeOK)
}

// settleCall runs rq_settle for j; deadline is when j's lease ends as
// this client knows it. It reports whether the job was settled by this
// worker: a reply of 2 (the entry is gone and not pending: the call's
// first run settled it and go-redis resent it) counts as done when it
// came before deadline, since no other worker could take the job over
// before then. A lost lease is an error matching ErrJobLeaseLost.
func (w *rqWorker[T]) settleCall(ctx context.Context, j *Job[T], how string, delay time.Duration, text string, deadline time.Time) (bool, error) {
	if len(text) > maxErrText {
		text = text[:maxErrText]
	}
	first := ""
	if !j.FirstDeliveredAt.IsZero() {
		first = strconv.FormatInt(j.FirstDeliveredAt.UnixMilli(), 10)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), w.opts.Lease)
	defer cancel()
	if rqSettled != nil {
		rqSettled(j.ID, how, j.Attempt, false, false)
	}
	w.q.c.trip(ctx, 1)
	n, err := w.q.c.scripts.run(ctx, scriptRQSettle, j.part.keys, rqGroup, w.consumer, j.entry, how,
		j.id, j.Attempt, ceilMs(delay), text, j.enqMs, first, j.dlv).Int64()
	done := err == nil && (n == 1 || n == 2 && time.Now().Before(deadline))
	if rqSettled != nil {
		rqSettled(j.ID, how, j.Attempt, true, done)
	}
	switch {
	case err != nil:
		err = w.q.wrap(err)
		w.q.c.emit.emit(Event{Type: EventJobSettleFailed, Kind: reliableQueueKind, Name: j.part.stream, Owner: w.consumer, Err: err})
		return false, err
	case done:
		return true, nil
	}
	return false, w.q.errorf("job %s: %w", j.ID, ErrJobLeaseLost)
}

// shutdown ends the handlers: the queued jobs are given back, the running
// ones have ShutdownTimeout to finish before their contexts are cancelled
// with ErrWorkerStopped; it returns once every handler returned.
func (w *rqWorker[T]) shutdown() {
	close(w.jobs)
	done := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(w.opts.ShutdownTimeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		w.kill(ErrWorkerStopped)
		<-done
	}
}
