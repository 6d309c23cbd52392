package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The core of LongAdder and DoubleAdder: Redisson's adder protocol, which
// keeps each instance's part in memory and sums by message. Every instance
// subscribes to {name}:adder-topic. Sum and Reset publish "<cmd>:<request
// id>" there (1 = sum, 0 = reset) and wait until as many instances answered
// as the PUBLISH reply counted receivers; each instance answers by adding
// its part to {name}:<request id>:counter (INCRBY or INCRBYFLOAT; a reset
// zeroes its part instead) and releasing one permit of the semaphore
// {name}:<request id>:semaphore, publishing the new count on
// redisson_sc:{name}:<request id>:semaphore as Redisson's RSemaphore does.
// The caller then reads the counter and deletes both keys.
//
// The flushed mode (WithFlushInterval, Go only) also moves an instance's
// part into {name}:adder-flushed on a timer, on Close and when it answers a
// sum; the Go caller adds that key to the sum.

// adderAnswerWait bounds one answer's script call, and the clean-up of a
// request whose caller gave up.
const adderAnswerWait = 10 * time.Second

// adderKeyLife is the lifetime of a request's counter and semaphore keys,
// which the caller deletes: one whose caller died expires.
const adderKeyLife = time.Minute

// AdderOption configures a LongAdder or DoubleAdder.
type AdderOption func(*adderOptions)

type adderOptions struct {
	flush time.Duration
}

// WithFlushInterval turns on the flushed mode (this library only): besides
// answering sums from memory as Redisson does, the instance moves its local
// part into the key {name}:adder-flushed every d, on Close and whenever it
// answers a sum, with one round trip each, so that a crash loses at most
// the additions of the last d. A Go Sum adds that key; a Java RLongAdder's
// sum does not read it, so do not mix this mode with Java adders of the
// same name. d must be positive; 0 (the default) is Redisson's in-memory
// mode, where a crashed or closed instance's part is gone.
func WithFlushInterval(d time.Duration) AdderOption {
	return func(o *adderOptions) { o.flush = d }
}

// adderCell is an instance's local part, in decimal text for the wire.
type adderCell interface {
	load() string        // the part
	take() string        // the part, leaving zero
	restore(part string) // add back a part taken
	zero()
	op() string // the Redis command adding a part: incrby, incrbyfloat
}

// adder is what LongAdder and DoubleAdder share: identity, the
// subscription, the goroutine answering requests, the flushes.
type adder struct {
	base
	cell    adderCell
	topic   string // {name}:adder-topic
	flushed string // {name}:adder-flushed
	callPre string // flush call markers: redisson_adder_call:{name}:<client uuid>:
	opts    adderOptions
	optErr  error

	flushMu sync.Mutex // held by a flush and a flushed-mode answer

	inMu  sync.Mutex
	inbox []string      // requests heard, not yet answered
	wake  chan struct{} // cap 1: inbox has something

	mu         sync.Mutex
	sub        *channelSub
	subscribed chan struct{} // closed once the subscription exists
	stop       chan struct{}
	done       chan struct{} // closed when the goroutine ended; nil if never started
	closed     atomic.Bool
}

func newAdder(c *Client, kind, name string, cell adderCell, opts []AdderOption) *adder {
	a := &adder{
		cell:       cell,
		topic:      suffixName(name, "adder-topic"),
		flushed:    suffixName(name, "adder-flushed"),
		callPre:    prefixName("redisson_adder_call", name) + ":" + c.id + ":",
		wake:       make(chan struct{}, 1),
		subscribed: make(chan struct{}),
		stop:       make(chan struct{}),
	}
	a.base = newBase(c, kind, name, nil, a.topic, a.flushed, a.callPre)
	for _, f := range opts {
		if f != nil {
			f(&a.opts)
		}
	}
	if a.opts.flush < 0 {
		a.optErr = a.errorf("%w", invalidOption(ErrInvalidOption, "flush interval", a.opts.flush, "positive, or 0 for none"))
	}
	if a.check() == nil && a.optErr == nil {
		done := make(chan struct{})
		if c.handles.spawn(func(ctx context.Context) { a.run(ctx, done) }) {
			a.done = done
		}
	}
	return a
}

// checkOpen is the precondition of Sum and Reset.
func (a *adder) checkOpen() error {
	if err := a.check(); err != nil {
		return err
	}
	if a.optErr != nil {
		return a.optErr
	}
	if a.closed.Load() {
		return a.errorf("%w", ErrHandleClosed)
	}
	return nil
}

// The channel hook: requests are queued for the goroutine, never answered
// under the engine's lock.
func (a *adder) message(payload string) {
	a.inMu.Lock()
	a.inbox = append(a.inbox, payload)
	a.inMu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}
func (a *adder) lost()    {}
func (a *adder) resumed() {}

// run is the instance's goroutine: it subscribes, then answers requests
// and flushes until Close or Client.Close.
func (a *adder) run(ctx context.Context, done chan struct{}) {
	defer close(done)
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		sharded, err := a.c.pubsub.objectsSharded(ctx)
		if err == nil {
			var sub *channelSub
			sub, err = a.c.pubsub.listen(ctx, chanKey{name: a.topic, sharded: sharded}, &listener{hook: a})
			if err == nil {
				a.mu.Lock()
				a.sub = sub
				a.mu.Unlock()
				close(a.subscribed)
				break
			}
		}
		select {
		case <-a.stop:
			return
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	var tick <-chan time.Time
	if a.opts.flush > 0 {
		t := time.NewTicker(a.opts.flush)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-a.stop:
			return
		case <-ctx.Done():
			return
		case <-tick:
			_ = a.flush(ctx)
		case <-a.wake:
			a.inMu.Lock()
			reqs := a.inbox
			a.inbox = nil
			a.inMu.Unlock()
			for _, r := range reqs {
				a.answer(ctx, r)
			}
		}
	}
}

// answer answers one request heard on the topic; others' malformed
// messages are ignored.
func (a *adder) answer(ctx context.Context, msg string) {
	cmd, id, ok := strings.Cut(msg, ":")
	if !ok || (cmd != "0" && cmd != "1") || !isRequestID(id) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, adderAnswerWait)
	defer cancel()
	keys := a.requestKeys(id)
	op, part, flushedMode := "", "", "0"
	if a.opts.flush > 0 {
		a.flushMu.Lock()
		defer a.flushMu.Unlock()
		flushedMode = "1"
	}
	switch {
	case cmd == "0":
		a.cell.zero()
	case a.opts.flush > 0:
		op, part = a.cell.op(), a.cell.take()
	default:
		op, part = a.cell.op(), a.cell.load()
	}
	err := a.c.scripts.run(ctx, scriptAdderAnswer, []string{keys[1], keys[0], keys[2], a.flushed},
		op, part, a.c.pubsub.publishArg(ctx), flushedMode, adderKeyLife.Milliseconds()).Err()
	if err != nil && op != "" && flushedMode == "1" && !mayHaveRun(err) {
		a.cell.restore(part)
	}
}

// requestKeys returns a request's semaphore, counter and semaphore channel.
func (a *adder) requestKeys(id string) [3]string {
	sem := suffixName(a.name, id+":semaphore")
	return [3]string{sem, suffixName(a.name, id+":counter"), prefixName("redisson_sc", sem)}
}

// isRequestID reports whether id is a request id as Redisson writes them
// (hex), so that a message cannot name other keys.
func isRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			return false
		}
	}
	return true
}

// flush moves the local part into the flushed key (flushed mode).
func (a *adder) flush(ctx context.Context) error {
	a.flushMu.Lock()
	defer a.flushMu.Unlock()
	part := a.cell.take()
	if part == "0" || part == "0.0" {
		return nil
	}
	m := a.callPre + a.c.newRequest()
	err := a.c.scripts.run(ctx, scriptAdderFlush, []string{a.flushed, m}, a.cell.op(), part, a.c.retryWindowArg).Err()
	forgetCallMarker(a.c, m, err)
	if err != nil && !mayHaveRun(err) {
		a.cell.restore(part)
	}
	return a.wrap(err)
}

// request publishes a sum (cmd "1") or reset ("0") request and waits until
// every receiver answered; it returns the counter and the flushed part.
func (a *adder) request(ctx context.Context, cmd string) (counter, flushed string, err error) {
	if err := a.checkOpen(); err != nil {
		return "", "", err
	}
	select { // this instance answers too: its subscription must exist
	case <-a.subscribed:
	case <-ctx.Done():
		return "", "", a.errorf("waiting for the subscription: %w", ctx.Err())
	}
	a.mu.Lock()
	sub := a.sub
	a.mu.Unlock()
	if sub != nil && !sub.ready(ctx, adderAnswerWait) && ctx.Err() != nil {
		return "", "", a.errorf("waiting for the subscription: %w", ctx.Err())
	}
	var raw [16]byte
	_, _ = rand.Read(raw[:])
	id := hex.EncodeToString(raw[:])
	keys := a.requestKeys(id)
	a.c.trip(ctx, 1)
	var receivers int64
	if a.c.pubsub.publishArg(ctx) == "spublish" {
		receivers, err = a.c.rdb.SPublish(ctx, a.topic, cmd+":"+id).Result()
	} else {
		receivers, err = a.c.rdb.Publish(ctx, a.topic, cmd+":"+id).Result()
	}
	if err != nil {
		return "", "", a.wrap(err)
	}
	defer func() {
		if err != nil { // answers may still come: delete what they wrote
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
			defer cancel()
			a.c.rdb.Del(cctx, keys[0], keys[1])
		}
	}()
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		a.c.trip(ctx, 1)
		reply, err := a.c.scripts.run(ctx, scriptAdderCollect, []string{keys[0], keys[1], a.flushed}, receivers).Slice()
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
func (a *adder) reset(ctx context.Context) error {
	if err := a.checkOpen(); err != nil {
		return err
	}
	a.c.trip(ctx, 1)
	if err := a.c.rdb.Del(ctx, a.flushed).Err(); err != nil {
		return a.wrap(err)
	}
	_, _, err := a.request(ctx, "0")
	return err
}

// close ends the instance: a last flush (flushed mode, bounded by
// adderAnswerWait), then the subscription and the goroutine. Its part
// leaves every later sum (as a Redisson adder's does after destroy), unless
// it was flushed.
func (a *adder) close() error {
	if a.closed.Swap(true) {
		return nil
	}
	var err error
	if a.opts.flush > 0 && a.done != nil && a.check() == nil {
		ctx, cancel := context.WithTimeout(context.Background(), adderAnswerWait)
		err = a.flush(ctx)
		cancel()
	}
	close(a.stop)
	if a.done != nil {
		<-a.done
	}
	a.mu.Lock()
	sub := a.sub
	a.sub = nil
	a.mu.Unlock()
	if sub != nil {
		sub.close()
	}
	if errors.Is(err, ErrClientClosed) {
		return nil
	}
	return err
}
