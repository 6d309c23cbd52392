package redisson

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

const reliableQueueKind = "reliable queue"

// rqGroup is the consumer group every worker of a ReliableQueue reads
// with (docs/keys.md).
const rqGroup = "redisson_rq"

// rqPayloadName is the name of a job's payload field, encoded with the
// queue's codec as a Java RStream<String, T> producer encodes it.
const rqPayloadName = "payload"

// ReliableQueue is a job queue whose jobs survive the crash of the worker
// handling them: a producer Enqueues values of type T, and workers
// (Process) run a handler for each, with a visibility lease, retries with
// back-off, and a dead-letter stream for jobs that fail MaxDeliveries
// times or do not decode.
//
// The queue is a Redis stream at the queue's name read through one
// consumer group (redisson_rq), so that its state is inspectable with
// XINFO, XPENDING and XRANGE; a job is an entry whose field "payload"
// (encoded with the queue's codec) holds the value, so that a Java service
// using Redisson's RStream with the same codec enqueues jobs with
// stream.add(StreamAddArgs.entry("payload", job)). Delayed jobs wait in a
// sorted set by due time on the server's clock; dead letters are a second
// stream. docs/keys.md lists every key and field.
//
// Enqueue adds a job once per call, even when go-redis resends the call
// after a lost reply; with JobDedupID it adds it once per id within the
// window. Handling is at least once: a job is handed to one worker at a
// time, under a lease the client's watchdog renews; a worker that dies or
// is cut off from Redis for longer than the lease loses its jobs to the
// other workers, and its handlers' contexts end (cause ErrLeaseLost) before
// any other worker can receive them. A job leaves the stream only once a
// handler returned nil for it (XACK and XDEL in one script that checks the
// lease), or when it moves to the delayed set for a retry or to the dead
// letters, so the stream holds only the jobs not yet done.
// docs/guarantees.md says what a failover can lose.
//
// Order: an unpartitioned queue delivers jobs first in the order they
// entered its stream (enqueued, or due after a delay or back-off); with
// Concurrency above 1, or several workers, they run concurrently, and a
// retried or taken-over job comes back behind the jobs enqueued meanwhile.
// WithPartitions splits the queue over streams in their own hash slots
// (on a Cluster, spread over the masters): that order holds within each
// partition (for the jobs of one JobPartitionKey, say) and none across
// them. Each worker consumes every partition.
//
// A ReliableQueue is safe for concurrent use and holds no state of its
// own; its workers' leases live in its Client.
type ReliableQueue[T any] struct {
	base
	parts   []rqPart      // partition 0 first (WithPartitions; one by default)
	next    atomic.Uint64 // the round-robin partition of the next Enqueue
	payload string        // the codec-encoded payload field name
	badPay  error         // the codec cannot encode the field name, or WithPartitions is out of range
}

// GetReliableQueue returns the reliable job queue called name, of jobs of
// type T. It does no I/O. opts may give it its own codec (WithCodec) and
// partitions (WithPartitions). An empty name makes every method return
// ErrEmptyName.
func GetReliableQueue[T any](c *Client, name string, opts ...ObjectOption) *ReliableQueue[T] {
	n := objectOptionsOf(opts).partitions
	q := &ReliableQueue[T]{parts: make([]rqPart, max(min(n, maxRQPartitions), 1))}
	var keys []string
	for i := range q.parts {
		q.parts[i] = newRQPart(name, i, c.id)
		p := &q.parts[i]
		keys = append(keys, p.stream, p.delayed, p.bodies, p.dead, p.callPre, p.dedupPr)
	}
	q.base = newBase(c, reliableQueueKind, name, c.objectCodec(opts), keys[1:]...)
	if b, err := encodeValue(q.codec, q.object, rqPayloadName); err != nil {
		q.badPay = err
	} else {
		q.payload = string(b)
	}
	if n < 0 || n > maxRQPartitions {
		q.badPay = q.wrap(invalidOption(ErrInvalidOption, "WithPartitions", n, "1 to 1024 (0: unpartitioned)"))
	}
	return q
}

// Name returns the queue's name, the key of its stream (partition 0's).
func (q *ReliableQueue[T]) Name() string { return q.name }

// DeadLetterName returns the key of the queue's dead-letter stream (of
// partition 0 when the queue is partitioned: each partition has its own).
func (q *ReliableQueue[T]) DeadLetterName() string { return q.parts[0].dead }

// openCall is base.open plus the check of the payload field's encoding.
func (q *ReliableQueue[T]) openCall(ctx context.Context, op string) (context.Context, *opRecord, error) {
	ctx, rec, err := q.open(ctx, op)
	if err == nil && q.badPay != nil {
		err = q.badPay
	}
	return ctx, rec, err
}

// EnqueueOption sets an option of one Enqueue call.
type EnqueueOption func(*enqueueConfig)

type enqueueConfig struct {
	delay       time.Duration
	dedupID     string
	dedupWindow time.Duration
	partKey     string // JobPartitionKey
	hasPartKey  bool
}

// JobDelay makes the job due d after Redis receives it, on the server's
// clock (no earlier worker receives it). Enqueue returns
// ErrNegativeDuration for a negative d; 0 is now.
func JobDelay(d time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.delay = d }
}

// JobDedupID makes Enqueue a no-op (reporting false, with the first job's
// id) when a job with the same id was enqueued in the queue within the
// last window. Enqueue returns ErrInvalidOption for an empty id or a
// window below a millisecond.
func JobDedupID(id string, window time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.dedupID, c.dedupWindow = id, window }
}

// Enqueue adds a job of value v and returns its id and true; or, with
// JobDedupID naming a job enqueued within the window, that job's id and
// false. The id is the job's stream entry id (a delayed job's: 32 hex
// digits; in partition i >= 1 either after "p<i>/"), and stays the job's
// through its retries. A partitioned queue puts the job in the partition
// of its JobPartitionKey, else of its JobDedupID, else the next in turn. The job is added once
// even when go-redis resends the call (a marker
// redisson_rq_call:{name}:<client uuid>:<n> holds the result for the
// retry window). With Options.ReplicaAck, the call waits for that many
// replicas to acknowledge the write (WAIT in the same round trip) and
// returns the id with ErrNotReplicated when too few did: the job is
// enqueued but a failover may lose it (it is not undone; enqueue it again
// with the same JobDedupID, which adds it only if it is gone). Enqueue
// returns ErrNilValue for a nil pointer or
// interface, ErrCodec when v does not encode, ErrNegativeDuration for a
// negative JobDelay, ErrInvalidOption for a bad JobDedupID (or
// WithPartitions out of range); ErrEmptyName, ErrInvalidName,
// ErrWrongType (the name holds another type: Redis is left unchanged),
// ErrClientClosed, or a Redis error otherwise.
func (q *ReliableQueue[T]) Enqueue(ctx context.Context, v T, opts ...EnqueueOption) (_ string, added bool, err error) {
	ctx, rec, err := q.openCall(ctx, opRQEnqueue)
	defer func() { rec.end(err, enqueueOutcome(added)) }()
	if err != nil {
		return "", false, err
	}
	var cfg enqueueConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := cfg.check(); err != nil {
		return "", false, q.wrap(err)
	}
	body, err := q.encode(v)
	if err != nil {
		return "", false, err
	}
	p := q.part(&cfg)
	marker := p.callPre + q.c.newRequest()
	dedupKey := marker
	if cfg.dedupID != "" {
		dedupKey = p.dedupPr + cfg.dedupID
	}
	delayedID := ""
	if cfg.delay > 0 {
		delayedID = newJobID()
	}
	q.c.trip(ctx, 1)
	keys := []string{p.stream, p.delayed, p.bodies, marker, dedupKey}
	args := []any{q.payload, body, ceilMs(cfg.delay), delayedID, q.c.retryWindowArg, ceilMs(cfg.dedupWindow)}
	var cmd *redis.Cmd
	acked := int64(0)
	ack := q.c.opts.ReplicaAck
	if ack.Replicas > 0 {
		cmd, acked = q.c.scripts.runWait(ctx, scriptRQEnqueue, keys, ack.Replicas, ack.Timeout, args...)
	} else {
		cmd = q.c.scripts.run(ctx, scriptRQEnqueue, keys, args...)
	}
	res, err := cmd.Slice()
	forgetCallMarker(q.c, marker, err)
	if err != nil {
		return "", false, q.wrap(err)
	}
	if len(res) != 2 {
		return "", false, q.errorf("%w: enqueue reply %v", ErrUnexpectedReply, res)
	}
	n, _ := res[0].(int64)
	id, ok := res[1].(string)
	if !ok {
		return "", false, q.errorf("%w: enqueue reply %v", ErrUnexpectedReply, res)
	}
	id = p.prefix + id
	if ack.Replicas > 0 && acked < int64(ack.Replicas) {
		return id, n == 1, q.errorf("%w: job %s enqueued, acknowledged by %d of %d replicas (a failover may lose it; enqueue again with the same JobDedupID)",
			ErrNotReplicated, id, acked, ack.Replicas)
	}
	return id, n == 1, nil
}

// enqueueOutcome is an Enqueue's outcome: a duplicate is denied.
func enqueueOutcome(added bool) Outcome {
	if added {
		return OutcomeOK
	}
	return OutcomeDenied
}

// check validates an Enqueue's options.
func (c *enqueueConfig) check() error {
	switch {
	case c.delay < 0:
		return fmt.Errorf("%w: JobDelay %v", ErrNegativeDuration, c.delay)
	case c.dedupWindow != 0 && c.dedupID == "":
		return invalidOption(ErrInvalidOption, "JobDedupID id", `""`, "a non-empty id")
	case c.dedupID != "" && c.dedupWindow < time.Millisecond:
		return invalidOption(ErrInvalidOption, "JobDedupID window", c.dedupWindow, ">= 1ms")
	}
	return nil
}

// ceilMs is d in whole milliseconds, rounded up.
func ceilMs(d time.Duration) int64 { return int64((d + time.Millisecond - 1) / time.Millisecond) }

// newJobID returns 32 random hex digits: a delayed job's id.
func newJobID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// entryAge is how long before now the stream entry id was added.
func entryAge(id string, now time.Time) time.Duration {
	ms, _, _ := strings.Cut(id, "-")
	return max(now.Sub(time.UnixMilli(parseMs(ms))), 0)
}

// isNoGroup reports whether err is Redis's NOGROUP (no worker or
// subscriber created the consumer group yet, or the stream was deleted
// since), from a command or from inside a script.
func isNoGroup(err error) bool {
	return err != nil && strings.Contains(err.Error(), "NOGROUP")
}

// parseMs reads a decimal millisecond field; 0 when absent or malformed.
func parseMs(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
