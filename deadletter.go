package redisson

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// DeadLetter is a job in a ReliableQueue's dead letters: one that failed
// MaxDeliveries times, lost its lease that often, or could not be decoded.
type DeadLetter[T any] struct {
	// ID is the dead letter's entry id in the dead-letter stream (what
	// RequeueDeadLetter takes).
	ID string
	// JobID is the job's id (see Job.ID).
	JobID string
	// Value is the decoded payload; zero when Err is set.
	Value T
	// Err is why Value is missing: ErrCodec when the payload does not
	// decode into T or the entry has no payload field (Fields has what
	// the entry held).
	Err error
	// Reason is the last error of the job, as text.
	Reason string
	// Attempts is how many deliveries the job had.
	Attempts int
	// EnqueuedAt and DiedAt are when the job was enqueued and when it moved
	// to the dead letters (the server's clock).
	EnqueuedAt, DiedAt time.Time
	// Fields is the entry's fields as stored, the payload's name and value
	// codec-encoded, metadata under rq:* names.
	Fields map[string]string
}

// DeadLetters returns up to count dead letters, oldest first, from the one
// after the dead letter id after ("" for the first). A partitioned queue's
// are listed partition by partition, partition 0 first, each oldest first;
// their ids name their partition (p<i>/<entry id> for partition i >= 1). It
// returns ErrInvalidOption for a count below 1; ErrEmptyName,
// ErrInvalidName, ErrWrongType, ErrClientClosed, or a Redis error
// otherwise. Undecodable payloads are reported in each DeadLetter's Err,
// not as the call's error.
func (q *ReliableQueue[T]) DeadLetters(ctx context.Context, after string, count int) (_ []DeadLetter[T], err error) {
	ctx, rec, err := q.openCall(ctx, opRQDeadLetters)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if count < 1 {
		return nil, q.wrap(invalidOption(ErrInvalidOption, "count", count, ">= 1"))
	}
	first, start := 0, "-"
	if after != "" {
		p, id := q.partOf(after)
		if p == nil {
			return []DeadLetter[T]{}, nil // no partition of this queue: nothing after it
		}
		first, start = q.partIndex(p), "("+id
	}
	var out []DeadLetter[T]
	for i := first; i < len(q.parts) && len(out) < count; i++ {
		p := &q.parts[i]
		q.c.trip(ctx, 1)
		msgs, err := q.c.rdb.XRangeN(ctx, p.dead, start, "+", int64(count-len(out))).Result()
		if err != nil {
			return nil, q.wrap(err)
		}
		for _, m := range msgs {
			out = append(out, q.deadLetter(p, m))
		}
		start = "-"
	}
	if out == nil {
		out = []DeadLetter[T]{}
	}
	return out, nil
}

// partIndex is the index of the queue's partition p.
func (q *ReliableQueue[T]) partIndex(p *rqPart) int {
	for i := range q.parts {
		if &q.parts[i] == p {
			return i
		}
	}
	return 0
}

// deadLetter decodes one dead-letter entry of partition p.
func (q *ReliableQueue[T]) deadLetter(p *rqPart, m redis.XMessage) DeadLetter[T] {
	d := DeadLetter[T]{ID: p.prefix + m.ID, Fields: make(map[string]string, len(m.Values))}
	for k, v := range m.Values {
		s, _ := v.(string)
		d.Fields[k] = s
	}
	d.JobID = d.Fields[rqFieldID]
	if d.JobID == "" {
		d.JobID = d.Fields["rq:src"]
	}
	d.JobID = p.prefix + d.JobID
	d.Reason = d.Fields[rqFieldErr]
	d.Attempts, _ = strconv.Atoi(d.Fields[rqFieldAtt])
	d.EnqueuedAt = time.UnixMilli(parseMs(d.Fields[rqFieldEnq]))
	d.DiedAt = time.UnixMilli(parseMs(d.Fields["rq:died"]))
	if v, ok := d.Fields[q.payload]; ok {
		d.Value, d.Err = decodeValue[T](q.codec, q.object, []byte(v))
	} else {
		d.Err = q.errorf("%w: dead letter %s has no payload field", ErrCodec, d.ID)
	}
	return d
}

// RequeueDeadLetter puts the dead letter id back in the queue as a job due
// now, with its job id and enqueue time and its attempts forgotten, and
// reports whether there was such a dead letter. It returns ErrWrongType
// when a key holds another type (nothing moves); ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error otherwise.
func (q *ReliableQueue[T]) RequeueDeadLetter(ctx context.Context, id string) (_ bool, err error) {
	ctx, rec, err := q.openCall(ctx, opRQRequeue)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return false, err
	}
	p, inner := q.partOf(id)
	if p == nil {
		return false, nil // no partition of this queue: no such dead letter
	}
	q.c.trip(ctx, 1)
	n, err := q.c.scripts.run(ctx, scriptRQRequeue, []string{p.dead, p.stream}, 1, inner).Int64()
	return n == 1, q.wrap(err)
}

// RequeueDeadLetters puts every dead letter back in the queue, as
// RequeueDeadLetter does, 100 per script call, and returns how many it
// moved. The errors are those of RequeueDeadLetter; after an error some
// may have moved already (each is either moved or left, never both).
func (q *ReliableQueue[T]) RequeueDeadLetters(ctx context.Context) (moved int, err error) {
	ctx, rec, err := q.openCall(ctx, opRQRequeue)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	const batch = 100
	for i := range q.parts {
		p := &q.parts[i]
		for {
			q.c.trip(ctx, 1)
			n, err := q.c.scripts.run(ctx, scriptRQRequeue, []string{p.dead, p.stream}, batch).Int64()
			if err != nil {
				return moved, q.wrap(err)
			}
			moved += int(n)
			if n < batch {
				break
			}
		}
	}
	return moved, nil
}

// PurgeDeadLetters deletes the dead letters (of every partition) and
// returns how many there were. It returns ErrWrongType when a key holds
// another type (nothing more is deleted); ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error otherwise.
func (q *ReliableQueue[T]) PurgeDeadLetters(ctx context.Context) (_ int64, err error) {
	ctx, rec, err := q.openCall(ctx, opRQPurge)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return 0, err
	}
	total := int64(0)
	for i := range q.parts {
		q.c.trip(ctx, 1)
		n, err := q.c.scripts.run(ctx, scriptRQPurge, []string{q.parts[i].dead}).Int64()
		if err != nil && !errors.Is(err, redis.Nil) {
			return total, q.wrap(err)
		}
		total += n
	}
	return total, nil
}
