package redisson

import "time"

// Job is one delivery of a ReliableQueue job to a handler. The handler owns
// it until it returns; a Job must not be used after.
type Job[T any] struct {
	// ID is the job's id: its stream entry id when it was enqueued without
	// a delay (by Go or by a Java RStream), 32 hex digits for a delayed
	// job; in partition i >= 1 of a partitioned queue, either after
	// "p<i>/". It stays the same through retries.
	ID string
	// Value is the job's decoded payload.
	Value T
	// Attempt is the number of this delivery, from 1: deliveries that
	// ended in an error and deliveries whose lease was lost count.
	Attempt int
	// EnqueuedAt is when Redis received the Enqueue (the server's clock).
	EnqueuedAt time.Time
	// FirstDeliveredAt is when the job was first received by a worker
	// (that worker's clock); zero when that delivery ended with its
	// worker's lease (the worker died before recording it).
	FirstDeliveredAt time.Time
	// LastError is the error of the job's previous failed attempt, as
	// text; empty when no attempt failed.
	LastError string

	id    string  // ID within its partition (rq:id)
	part  *rqPart // its partition
	entry string  // stream entry id of this delivery
	dlv   int     // the entry's delivery count in this delivery (XPENDING's)
	prior int     // deliveries before this entry was added (rq:att)
	enqMs int64
	hold  *hold // the delivery's lease
}
