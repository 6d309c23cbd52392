package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// The core of LongAdder and DoubleAdder: Redisson's adder protocol, which
// keeps each instance's part in memory and sums by message. Each client
// subscribes once to {name}:adder-topic (adderhub.go). Sum and Reset
// publish "<cmd>:<request id>" there (1 = sum, 0 = reset) and wait until as
// many answers came as the PUBLISH reply counted receivers; each receiver
// answers by adding its part to {name}:<request id>:counter (INCRBY or
// INCRBYFLOAT; a reset zeroes its part instead) and releasing one permit of
// the semaphore {name}:<request id>:semaphore, publishing the new count on
// redisson_sc:{name}:<request id>:semaphore as Redisson's RSemaphore does.
// The caller then reads the counter and deletes both keys.
//
// The flushed mode (WithFlushInterval, Go only) also moves an instance's
// part into {name}:adder-flushed on a timer, on Close and when it answers a
// sum; the Go caller adds that key to the sum.

// adderAnswerWait bounds one answer's script call, the wait for the
// subscription, and Close's last flush.
const adderAnswerWait = 10 * time.Second

// adderKeyLife is the lifetime of a request's counter and semaphore keys,
// which the caller deletes: those of a caller that died expire.
const adderKeyLife = time.Minute

// AdderOption configures a LongAdder or DoubleAdder.
type AdderOption func(*adderOptions)

type adderOptions struct {
	flush time.Duration
}

// WithFlushInterval turns on the flushed mode (this library only): besides
// answering sums from memory as Redisson does, the instance moves its local
// part into the key {name}:adder-flushed every d, on Close and whenever it
// answers a sum, one round trip each, so that a crash loses at most the
// additions of the last d. A Go Sum adds that key; a Java RLongAdder's sum
// does not read it, so do not mix this mode with Java adders of the same
// name. d must not be negative; 0 (the default) is Redisson's in-memory
// mode, where a crashed or closed instance's part is gone.
func WithFlushInterval(d time.Duration) AdderOption {
	return func(o *adderOptions) { o.flush = d }
}

// adderCell is an instance's local part.
type adderCell interface {
	load() adderAcc
	take() adderAcc // the part, leaving zero
	restore(x adderAcc)
	zero()
}

// adderParts is what LongAdder and DoubleAdder share: identity, the client's
// hub, the flushes.
type adderParts struct {
	base
	cell    adderCell
	hub     *adderHub // nil when the name, the options or the client were unusable
	callPre string    // flush call markers: redisson_adder_call:{name}:<client uuid>:
	opts    adderOptions
	optErr  error

	flushMu sync.Mutex // held by a flush and by an answer taking the part
	stop    chan struct{}
	done    chan struct{} // the flush timer's goroutine ended; nil without one
	closed  atomic.Bool
}

func newAdder(c *Client, kind, name string, cell adderCell, double bool, opts []AdderOption) *adderParts {
	a := &adderParts{
		cell:    cell,
		callPre: prefixName("redisson_adder_call", name) + ":" + c.id + ":",
		stop:    make(chan struct{}),
	}
	a.base = newBase(c, kind, name, nil, suffixName(name, "adder-topic"), suffixName(name, "adder-flushed"), a.callPre)
	for _, f := range opts {
		if f != nil {
			f(&a.opts)
		}
	}
	if a.opts.flush < 0 {
		a.optErr = a.errorf("%w", invalidOption(ErrInvalidOption, "flush interval", a.opts.flush, "0 or more"))
	}
	if a.check() != nil || a.optErr != nil {
		return a
	}
	if a.hub = c.hubOf(kind, name, double); a.hub == nil {
		return a
	}
	a.hub.join(a)
	if a.opts.flush > 0 {
		done := make(chan struct{})
		if c.handles.spawn(func(ctx context.Context) { a.flushLoop(ctx, done) }) {
			a.done = done
		}
	}
	return a
}

// checkOpen is the precondition of Sum and Reset.
func (a *adderParts) checkOpen() error {
	if err := a.check(); err != nil {
		return err
	}
	if a.optErr != nil {
		return a.optErr
	}
	if a.closed.Load() {
		return a.errorf("%w", ErrHandleClosed)
	}
	if a.hub == nil {
		return ErrClientClosed
	}
	return nil
}

// flushLoop flushes every interval until Close or Client.Close.
func (a *adderParts) flushLoop(ctx context.Context, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(a.opts.flush)
	defer t.Stop()
	for {
		select {
		case <-a.stop:
			return
		case <-ctx.Done():
			return
		case <-t.C:
			_ = a.flush(ctx)
		}
	}
}

// flush moves the local part into the flushed key (flushed mode).
func (a *adderParts) flush(ctx context.Context) error {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	part := a.cell.take()
	if part == (adderAcc{}) {
		return nil
	}
	m := a.callPre + a.c.newRequest()
	err := a.c.scripts.run(ctx, scriptAdderFlush, []string{a.hub.flushed, m}, a.hub.op(), a.hub.text(part), a.c.retryWindowArg).Err()
	forgetCallMarker(a.c, m, err)
	if err != nil && !mayHaveRun(err) {
		a.cell.restore(part)
	}
	return a.wrap(err)
}

// request publishes a sum (cmd "1") or reset ("0") request and waits until
// every receiver answered; it returns the counter and the flushed part.
func (a *adderParts) request(ctx context.Context, cmd string) (counter, flushed string, err error) {
	if err := a.checkOpen(); err != nil {
		return "", "", err
	}
	if err := a.hub.ready(ctx); err != nil { // this client answers too
		return "", "", a.errorf("waiting for the subscription: %w", err)
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	keys := requestKeys(a.name, id)
	a.c.trip(ctx, 1)
	var receivers int64
	if a.c.pubsub.publishArg(ctx) == "spublish" {
		receivers, err = a.c.rdb.SPublish(ctx, a.hub.topic, cmd+":"+id).Result()
	} else {
		receivers, err = a.c.rdb.Publish(ctx, a.hub.topic, cmd+":"+id).Result()
	}
	if err != nil {
		return "", "", a.wrap(err)
	}
	defer func() {
		if err != nil { // answers may still come: delete what came
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			a.c.rdb.Del(cctx, keys[0], keys[1])
		}
	}()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		a.c.trip(ctx, 1)
		reply, err := a.c.scripts.run(ctx, scriptAdderCollect, []string{keys[0], keys[1], a.hub.flushed}, receivers).Slice()
		if err != nil {
			return "", "", a.wrap(err)
		}
		if len(reply) == 3 {
			c, _ := reply[1].(string)
			f, _ := reply[2].(string)
			return c, f, nil
		}
		select {
		case <-ctx.Done():
			return "", "", a.errorf("waiting for %d answers: %w", receivers, ctx.Err())
		case <-a.c.closing:
			return "", "", ErrClientClosed
		case <-time.After(wait):
		}
	}
}

// reset deletes the flushed part, then asks every instance to zero its
// own.
func (a *adderParts) reset(ctx context.Context) error {
	if err := a.checkOpen(); err != nil {
		return err
	}
	a.c.trip(ctx, 1)
	if err := a.c.rdb.Del(ctx, a.hub.flushed).Err(); err != nil {
		return a.wrap(err)
	}
	_, _, err := a.request(ctx, "0")
	return err
}

// close ends the instance: a last flush (flushed mode, bounded by
// adderAnswerWait, outliving no caller: Close takes no context), then it
// leaves the hub. Its part leaves every later sum (as a Redisson adder's
// does after destroy), unless it was flushed.
func (a *adderParts) close() error {
	if a.closed.Swap(true) || a.hub == nil {
		return nil
	}
	close(a.stop)
	if a.done != nil {
		<-a.done
	}
	var err error
	if a.opts.flush > 0 && a.check() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), adderAnswerWait)
		err = a.flush(ctx)
		cancel()
	}
	a.hub.leave(a)
	if errors.Is(err, ErrClientClosed) {
		return nil
	}
	return err
}
