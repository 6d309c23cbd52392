package redisson

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
)

// adderHub is the one subscription of a client to an adder's topic: Redis
// counts one receiver per subscribed connection, so the client answers
// each request once, with the parts of all its instances of that adder.
// It is created by the first instance and stays subscribed, answering 0
// once every instance closed, until Client.Close: a lingering or
// re-created subscription that did not answer would make every Sum wait for
// its context.
type adderHub struct {
	c       *Client
	double  bool
	name    string
	topic   string // {name}:adder-topic
	flushed string // {name}:adder-flushed

	mu      sync.Mutex
	members map[*adderParts]struct{}
	sub     *channelSub

	inMu  sync.Mutex
	inbox []string      // requests heard, not yet answered
	wake  chan struct{} // cap 1: inbox has something

	subscribed chan struct{} // closed once the subscription exists
}

// adderAcc is a part: int64 for LongAdder, float64 for DoubleAdder.
type adderAcc struct {
	i int64
	f float64
}

func (x *adderAcc) add(y adderAcc) { x.i += y.i; x.f += y.f }

// hubOf returns the client's hub of the adder kind called name, starting
// it, or nil when the client is closed.
func (c *Client) hubOf(kind, name string, double bool) *adderHub {
	c.sharedMu.Lock()
	defer c.sharedMu.Unlock()
	key := kind + "\x00" + name
	if h, ok := c.shared[key].(*adderHub); ok {
		return h
	}
	h := &adderHub{
		c: c, double: double, name: name,
		topic:      suffixName(name, "adder-topic"),
		flushed:    suffixName(name, "adder-flushed"),
		members:    map[*adderParts]struct{}{},
		wake:       make(chan struct{}, 1),
		subscribed: make(chan struct{}),
	}
	if !c.handles.spawn(h.run) {
		return nil
	}
	if c.shared == nil {
		c.shared = map[string]any{}
	}
	c.shared[key] = h
	return h
}

func (h *adderHub) join(a *adderParts) {
	h.mu.Lock()
	h.members[a] = struct{}{}
	h.mu.Unlock()
}

func (h *adderHub) leave(a *adderParts) {
	h.mu.Lock()
	delete(h.members, a)
	h.mu.Unlock()
}

// text writes a part as the wire wants it.
func (h *adderHub) text(x adderAcc) string {
	if h.double {
		return formatJavaDouble(x.f)
	}
	return strconv.FormatInt(x.i, 10)
}

func (h *adderHub) op() string {
	if h.double {
		return "incrbyfloat"
	}
	return "incrby"
}

// The channel hook: requests are queued for the goroutine, never answered
// under the engine's lock.
func (h *adderHub) message(payload string) {
	h.inMu.Lock()
	h.inbox = append(h.inbox, payload)
	h.inMu.Unlock()
	select {
	case h.wake <- struct{}{}:
	default:
	}
}
func (h *adderHub) lost()    {}
func (h *adderHub) resumed() {}

// run is the hub's goroutine: it subscribes, then answers requests until
// Client.Close.
func (h *adderHub) run(ctx context.Context) {
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		sharded, err := h.c.pubsub.objectsSharded(ctx)
		if err == nil {
			var sub *channelSub
			sub, err = h.c.pubsub.listen(ctx, chanKey{name: h.topic, sharded: sharded}, &listener{hook: h})
			if err == nil {
				h.mu.Lock()
				h.sub = sub
				h.mu.Unlock()
				close(h.subscribed)
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	defer h.sub.close()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
			h.inMu.Lock()
			reqs := h.inbox
			h.inbox = nil
			h.inMu.Unlock()
			for _, r := range reqs {
				h.answer(ctx, r)
			}
		}
	}
}

// ready waits until the hub's subscription is confirmed (or ctx ends).
func (h *adderHub) ready(ctx context.Context) error {
	select {
	case <-h.subscribed:
	case <-ctx.Done():
		return ctx.Err()
	}
	h.mu.Lock()
	sub := h.sub
	h.mu.Unlock()
	if !sub.ready(ctx, adderAnswerWait) && ctx.Err() != nil {
		return ctx.Err()
	}
	return nil
}

// answer answers one request heard on the topic, with the parts of every
// instance of this client; others' malformed messages are ignored.
func (h *adderHub) answer(ctx context.Context, msg string) {
	cmd, id, ok := strings.Cut(msg, ":")
	if !ok || (cmd != "0" && cmd != "1") || !isRequestID(id) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, adderAnswerWait)
	defer cancel()
	h.mu.Lock()
	members := make([]*adderParts, 0, len(h.members))
	for a := range h.members {
		members = append(members, a)
	}
	h.mu.Unlock()
	var mem, fl adderAcc
	type taken struct {
		a   *adderParts
		acc adderAcc
	}
	var took []taken
	flushing := false
	for _, a := range members {
		if a.opts.flush > 0 { // held until the part is in Redis: no flush doubles it
			a.flushMu.Lock()
			defer a.flushMu.Unlock()
			flushing = true
		}
		switch {
		case cmd == "0":
			a.cell.zero()
		case a.opts.flush > 0:
			x := a.cell.take()
			fl.add(x)
			took = append(took, taken{a, x})
		default:
			mem.add(a.cell.load())
		}
	}
	op, part, flPart := "", "", ""
	if cmd == "1" {
		op, part = h.op(), h.text(mem)
		if flushing {
			flPart = h.text(fl)
		}
	}
	keys := requestKeys(h.name, id)
	h.c.trip(ctx, 1)
	err := h.c.scripts.run(ctx, scriptAdderAnswer, []string{keys[1], keys[0], keys[2], h.flushed},
		op, part, h.c.pubsub.publishArg(ctx), flPart, adderKeyLife.Milliseconds()).Err()
	if err != nil && !mayHaveRun(err) {
		for _, t := range took {
			t.a.cell.restore(t.acc)
		}
	}
}

// requestKeys returns a request's semaphore, counter and semaphore channel.
func requestKeys(name, id string) [3]string {
	sem := suffixName(name, id+":semaphore")
	return [3]string{sem, suffixName(name, id+":counter"), prefixName("redisson_sc", sem)}
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
