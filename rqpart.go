package redisson

import (
	"hash/fnv"
	"strconv"
	"strings"
)

// maxRQPartitions bounds WithPartitions.
const maxRQPartitions = 1024

// rqPart is one partition of a ReliableQueue: a stream and its companion
// keys, all in the stream's hash slot (docs/keys.md). Partition 0 is the
// queue's name and the keys an unpartitioned queue has; partition i >= 1
// is the stream <name>:p<i> and the companion keys of that name, so that
// on a Cluster the partitions spread over the slots (unless the name
// holds a hash tag, which keeps them all in its slot).
type rqPart struct {
	stream  string   // stream: the partition's jobs
	delayed string   // zset: job id -> due ms
	bodies  string   // hash: job id -> fields of a delayed job
	dead    string   // stream: dead letters
	callPre string   // call marker prefix: redisson_rq_call:{stream}:<client uuid>:
	dedupPr string   // deduplication key prefix: redisson_rq_dedup:{stream}:
	prefix  string   // of its job and dead letter ids: "" for partition 0, "p<i>/"
	keys    []string // stream, delayed, bodies, dead: the worker scripts' keys
}

// newRQPart returns partition i of the queue called name; clientID is the
// client's uuid.
func newRQPart(name string, i int, clientID string) rqPart {
	p := rqPart{stream: name}
	if i > 0 {
		p.stream = name + ":p" + strconv.Itoa(i)
		p.prefix = "p" + strconv.Itoa(i) + "/"
	}
	p.delayed = prefixName("redisson_rq_delayed", p.stream)
	p.bodies = prefixName("redisson_rq_jobs", p.stream)
	p.dead = prefixName("redisson_rq_dead", p.stream)
	p.callPre = prefixName("redisson_rq_call", p.stream) + ":" + clientID + ":"
	p.dedupPr = prefixName("redisson_rq_dedup", p.stream) + ":"
	p.keys = []string{p.stream, p.delayed, p.bodies, p.dead}
	return p
}

// rqPartitionsKey is the key where a partitioned queue's workers record
// how many partitions they consume, so that an inspection finds them all
// (in partition 0's slot; absent for an unpartitioned queue).
func rqPartitionsKey(name string) string { return prefixName("redisson_rq_partitions", name) }

// WithPartitions splits a ReliableQueue into n partitions, each a stream
// with its own delayed set and dead letters in a hash slot of its own, so
// that on a Cluster the queue's load spreads over the masters. Partition 0
// keeps the keys of an unpartitioned queue (a Java RStream producer adds
// to it). Enqueue puts a job in the partition its JobPartitionKey hashes
// to, else its JobDedupID's, else the next in turn; Process consumes every
// partition. Order holds within a partition only (see ReliableQueue). A
// queue's partitions may grow but must not shrink while the partitions
// dropped still hold jobs: no worker would consume them. A worker waits
// for new jobs in a blocking read per partition, each holding a connection
// of go-redis's pool, up to half the pool (PoolSize); the partitions
// beyond it look for new jobs every 250ms instead. n of 1 is an
// unpartitioned queue; an n below 1 or above 1024 makes the queue's calls
// return ErrInvalidOption. Other objects ignore it.
func WithPartitions(n int) ObjectOption {
	return func(o *objectOptions) { o.partitions = n }
}

// JobPartitionKey puts the job in the partition key hashes to (FNV-1a,
// 32 bits, modulo the partitions), so that the jobs given the same key
// are delivered first in the order they were enqueued. Without it a job
// with a JobDedupID goes by that id (a deduplication id holds within its
// partition), and any other job to the next partition in turn. An
// unpartitioned queue ignores it.
func JobPartitionKey(key string) EnqueueOption {
	return func(c *enqueueConfig) { c.partKey, c.hasPartKey = key, true }
}

// part returns the partition an Enqueue with cfg goes to.
func (q *ReliableQueue[T]) part(cfg *enqueueConfig) *rqPart {
	n := len(q.parts)
	if n == 1 {
		return &q.parts[0]
	}
	switch {
	case cfg.hasPartKey:
		return &q.parts[rqHash(cfg.partKey)%uint32(n)]
	case cfg.dedupID != "":
		return &q.parts[rqHash(cfg.dedupID)%uint32(n)]
	}
	return &q.parts[(q.next.Add(1)-1)%uint64(n)]
}

// rqHash is FNV-1a (32 bits) of s.
func rqHash(s string) uint32 {
	h := fnv.New32a()
	_, _ = h.Write([]byte(s))
	return h.Sum32()
}

// partOf splits an id the queue returned (a job's or a dead letter's)
// into its partition and the id within it; nil when the id names no
// partition of the queue.
func (q *ReliableQueue[T]) partOf(id string) (*rqPart, string) {
	rest, ok := strings.CutPrefix(id, "p")
	if !ok {
		return &q.parts[0], id
	}
	num, inner, ok := strings.Cut(rest, "/")
	i, err := strconv.Atoi(num)
	if !ok || err != nil || i < 1 || i >= len(q.parts) || strconv.Itoa(i) != num {
		return nil, ""
	}
	return &q.parts[i], inner
}

// Partitions returns the number of the queue's partitions (1 when it is
// not partitioned).
func (q *ReliableQueue[T]) Partitions() int { return len(q.parts) }

// PartitionNames returns the keys of the queue's partitions' streams,
// partition 0 (the queue's name) first.
func (q *ReliableQueue[T]) PartitionNames() []string {
	out := make([]string, len(q.parts))
	for i := range q.parts {
		out[i] = q.parts[i].stream
	}
	return out
}
