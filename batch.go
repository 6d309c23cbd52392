package redisson

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

const batchKind = "batch"

// BatchOption configures a Batch (CreateBatch).
type BatchOption func(*batchOptions)

type batchOptions struct{ atomic, skip bool }

// BatchAtomic makes a batch one transaction, Redisson's IN_MEMORY_ATOMIC:
// its calls go out as one MULTI/EXEC, so that no other client's command
// runs between them. The scripts among them are sent with EVAL (their body
// inside the transaction), so that a script missing on the server cannot
// split it. On Redis Cluster every key of an atomic batch must be in one
// hash slot (give the names one hash tag, "{cart}:items", "{cart}:total"):
// a call on another slot is ErrCrossSlot when queued, and Execute then
// sends nothing.
func BatchAtomic() BatchOption { return func(o *batchOptions) { o.atomic = true } }

// BatchSkipResults makes a batch keep no results, Redisson's skipResult:
// every Future of it reports ErrResultSkipped, and Execute still returns
// the first call's failure. Unlike Redisson, no CLIENT REPLY OFF is sent:
// the replies are read all the same (go-redis reads one per command, and a
// script call needs its reply to see NOSCRIPT), so the mode saves the
// decoding only.
func BatchSkipResults() BatchOption { return func(o *batchOptions) { o.skip = true } }

// Batch queues calls on several objects and sends them together with
// Execute, Redisson's RBatch: one pipeline, so one round trip per node
// (per master on Redis Cluster, each master's calls in their order), not
// one per call; with BatchAtomic one MULTI/EXEC. Each queued call
// returns a Future, which holds the call's result once Execute has
// returned. The calls are those of the objects (GetBatchBucket,
// Batch.GetAtomicLong, GetBatchMap, GetBatchSet, GetBatchList, GetBatchQueue), with the
// same keys, encoding, replies and errors as the objects' own methods, and
// the same scripts where the objects use one (an AtomicLong's addition
// keeps its call marker, so a resent batch adds once).
//
// Not atomic, the calls run in their order, but another client's commands
// may run between them. A script this client has not run before is loaded
// before the batch (one SCRIPT LOAD, once), as Redisson does; one flushed
// from the server since (SCRIPT FLUSH, a restart, a failover) is loaded
// again when its calls answer NOSCRIPT, and those calls are sent again after
// the others, so a read queued behind such a write may not see it. On
// Redis Cluster a call a master refused because its slot is moving (MOVED,
// ASK, TRYAGAIN) is sent again on its own after that master's other calls
// (the calls on one key keep their order): a migration sends no call twice,
// so a List's Add or a Queue's Offer is applied once.
//
// A Batch is executed once: Execute again, or a call queued after Execute,
// is ErrBatchExecuted. A call given bad input (an empty name, a nil value,
// a value the codec refuses, a key on another slot in an atomic batch on
// Cluster) has its error in its Future at once, and makes Execute send
// nothing and return that error. Queueing is safe for concurrent use;
// Futures are read after Execute has returned.
type Batch struct {
	c    *Client
	opts batchOptions

	mu      sync.Mutex // guards what follows; Execute holds it while it runs
	done    bool       // Execute has begun
	calls   []call
	results []batchResult // results[i] settles calls[i]
	markers []batchMarker
	bad     error // the first call refused when queued
	slot    int   // an atomic batch's slot on Cluster, -1 before its first key
}

// batchResult is a Future as the Batch settles it: with the call's command
// (nil when it was not sent) and the error of the whole batch, if any.
type batchResult interface {
	settle(cmd *redis.Cmd, err error, skip bool) error
	refuse(err error)
}

// batchMarker is the call marker (counters.go) of calls[i].
type batchMarker struct {
	i   int
	key string
}

// CreateBatch returns an empty batch. It does no I/O.
func (c *Client) CreateBatch(opts ...BatchOption) *Batch {
	b := &Batch{c: c, slot: -1}
	for _, f := range opts {
		if f != nil {
			f(&b.opts)
		}
	}
	return b
}

// Len returns the number of calls queued.
func (b *Batch) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls)
}

// queue adds one call of object o: script s on keys with args, or, with s
// nil, the plain command line args (its key second). err is the call's
// own refusal (an encoding error); r is its Future. queue returns the
// call's index, -1 when it was refused.
func (b *Batch) queue(o *base, r batchResult, err error, s *script, keys []string, args []any) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		r.refuse(ErrBatchExecuted)
		return -1
	}
	if err == nil {
		err = o.check()
	}
	if err == nil && b.opts.atomic && b.c.topo.isCluster() {
		key := o.name
		if len(keys) > 0 {
			key = keys[0]
		}
		switch slot := hashSlot(key); {
		case b.slot < 0:
			b.slot = slot
		case b.slot != slot:
			err = o.errorf("%w: an atomic batch runs in one slot (%d), this call in slot %d", ErrCrossSlot, b.slot, slot)
		}
	}
	if err != nil {
		r.refuse(err)
		if b.bad == nil {
			b.bad = err
		}
		return -1
	}
	b.calls = append(b.calls, call{s: s, keys: keys, args: args})
	b.results = append(b.results, r)
	return len(b.calls) - 1
}

// queueValue queues the plain command cmd on o's key with v encoded by
// o's codec (SADD, RPUSH, ...), f reading its reply.
func queueValue[T any](b *Batch, o *base, f *Future[T], cmd string, v any) *Future[T] {
	e, err := o.encode(v)
	b.queue(o, f, err, nil, nil, []any{cmd, o.name, e})
	return f
}

// queueMarked is queue for a call that writes marker (an AtomicLong's call
// marker), which Execute hands to the janitor once the call has returned.
func (b *Batch) queueMarked(o *base, r batchResult, s *script, marker string, keys []string, args []any) {
	if i := b.queue(o, r, nil, s, keys, args); i >= 0 {
		b.mu.Lock()
		b.markers = append(b.markers, batchMarker{i, marker})
		b.mu.Unlock()
	}
}

// Execute sends the queued calls and settles their Futures. It returns
// nil when every call succeeded; otherwise the first failure in queue
// order: a call's error (as its Future reports it), or the batch's,
// with every Future then reporting it too. A batch that is refused sends
// nothing: ErrBatchExecuted when Execute ran before (the Futures keep their
// results); a queued call's refusal (ErrEmptyName, ErrNilValue, ErrCodec,
// ErrCrossSlot, ...); ErrClientClosed; or ctx's error when ctx has ended
// before anything was sent. A context that ends in flight returns its
// error, and the calls may have run. An empty batch sends nothing and
// returns nil.
func (b *Batch) Execute(ctx context.Context) (err error) {
	ctx, rec := b.c.begin(ctx, batchKind, "", opBatchExecute)
	defer func() { rec.end(err, OutcomeOK) }()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return ErrBatchExecuted
	}
	b.done = true
	switch {
	case b.bad != nil:
		err = b.bad
	case b.c.closed.Load():
		err = ErrClientClosed
	case ctx.Err() != nil:
		err = ctx.Err()
	case len(b.calls) == 0:
		return nil
	}
	if err != nil {
		for _, r := range b.results {
			r.refuse(err)
		}
		return err
	}
	err = b.c.scripts.runBatch(ctx, b.calls, b.opts.atomic)
	for _, m := range b.markers {
		merr := err
		if cmd := b.calls[m.i].cmd; cmd != nil && merr == nil {
			merr = cmd.Err()
		}
		forgetCallMarker(b.c, m.key, merr)
	}
	var first error
	for i, r := range b.results {
		if cerr := r.settle(b.calls[i].cmd, err, b.opts.skip); first == nil {
			first = cerr
		}
	}
	return first
}
