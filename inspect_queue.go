package redisson

import (
	"context"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// QueueInfo is what Redis holds of a queue (Queue, Deque, BlockingQueue,
// BoundedBlockingQueue; Redisson's RQueue and its kin), read by
// Client.InspectQueue.
type QueueInfo struct {
	Name string `json:"name"`
	// Length is the number of elements waiting in the list at name.
	Length int64 `json:"length"`
	// Head is the first element decoded with the codec asked for; nil
	// when the queue is empty.
	Head any `json:"head"`
	// Bounded reports a capacity counter (redisson_bqs:{name}); Free is
	// its value, the free capacity, and Capacity is Free + Length + the
	// elements in flight (what TrySetCapacity set, unless someone wrote
	// around the queue).
	Bounded  bool  `json:"bounded"`
	Free     int64 `json:"free"`
	Capacity int64 `json:"capacity"`
	// InFlight counts, per client id, the elements held in that client's
	// in-flight list (redisson_queue_inflight:{name}:<id> or
	// redisson_bqueue_inflight:{name}:<id>) and its drain lists: moved
	// out of the queue and not yet settled. A count that stays is a client
	// that died between a move and its settle.
	InFlight map[string]int64 `json:"in_flight"`
}

// InspectQueue reads the queue called name: its length, its head decoded
// with codec (as InspectBucket decodes), the bounded queue's capacity and
// the in-flight elements per client. The in-flight lists are found with
// SCAN on the node holding the queue's slot (MATCH on the queue's hash
// tag), so it costs one script call plus O(keys on that node / 1000)
// SCAN round trips and one LLEN pipeline; it is an operator's view, not
// for a hot path. It returns ErrNotFound when the list, the counter and
// every in-flight list are absent, an error matching ErrCodec when the head
// does not decode, and the errors of InspectSemaphore.
func (c *Client) InspectQueue(ctx context.Context, name string, codec Codec) (QueueInfo, error) {
	const kind = queueKind
	capKey := boundedCapKey(name)
	if err := c.checkObject(name, c.nameError(kind, name, capKey)); err != nil {
		return QueueInfo{}, err
	}
	res, err := c.scripts.run(ctx, scriptInspectQueue, []string{name, capKey}).Slice()
	if err != nil {
		return QueueInfo{}, objectErr(kind, name, err)
	}
	t, _ := res[0].(string)
	length, ok := res[1].(int64)
	if len(res) != 4 || !ok {
		return QueueInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	}
	info := QueueInfo{Name: name, Length: length, InFlight: map[string]int64{}}
	if head, ok := res[2].(string); ok {
		if info.Head, err = c.decodeAny(codec, kind, name, []byte(head)); err != nil {
			return QueueInfo{}, err
		}
	}
	if free, ok := res[3].(string); ok {
		info.Bounded = true
		if info.Free, err = strconv.ParseInt(free, 10, 64); err != nil {
			return QueueInfo{}, objectErrorf(kind, name, "%w: capacity %q", ErrUnexpectedReply, free)
		}
	}
	var held int64
	if held, err = c.inFlight(ctx, name, info.InFlight); err != nil {
		return QueueInfo{}, objectErr(kind, name, err)
	}
	if t == "none" && !info.Bounded && len(info.InFlight) == 0 {
		return QueueInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	if info.Bounded {
		info.Capacity = info.Free + info.Length + held
	}
	return info, nil
}

// inFlight adds to counts the elements of the in-flight and drain lists of
// queue name, per client id, and returns their total.
func (c *Client) inFlight(ctx context.Context, name string, counts map[string]int64) (int64, error) {
	var node redis.Cmdable = c.rdb
	if cc := c.topo.cluster; cc != nil {
		m, err := cc.MasterForKey(ctx, name)
		if err != nil {
			return 0, err
		}
		node = m
	}
	prefixes := []string{
		prefixName("redisson_queue_inflight", name) + ":",
		prefixName("redisson_bqueue_inflight", name) + ":",
		prefixName("redisson_queue_drain", name) + ":",
	}
	var keys, ids []string
	for _, p := range prefixes {
		var cursor uint64
		for {
			page, next, err := node.Scan(ctx, cursor, globEscape(p)+"*", 1000).Result()
			if err != nil {
				return 0, err
			}
			for _, k := range page {
				id, _, _ := strings.Cut(strings.TrimPrefix(k, p), ":")
				keys, ids = append(keys, k), append(ids, id)
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	if len(keys) == 0 {
		return 0, nil
	}
	lens := make([]*redis.IntCmd, len(keys))
	_, err := node.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			lens[i] = p.LLen(ctx, k)
		}
		return nil
	})
	if err != nil && !isWrongType(err) {
		return 0, err
	}
	var total int64
	for i, l := range lens {
		n, err := l.Result()
		if err != nil || n == 0 { // gone meanwhile, or not a list (a registry)
			continue
		}
		counts[ids[i]] += n
		total += n
	}
	return total, nil
}

// globEscape escapes SCAN MATCH's special characters in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
