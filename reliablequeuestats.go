package redisson

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReliableQueueStats is a snapshot of a ReliableQueue's jobs (of all its
// partitions).
type ReliableQueueStats struct {
	Ready    int64 // in the stream, not yet delivered
	InFlight int64 // delivered and not yet settled (pending in the group)
	Delayed  int64 // waiting for their due time (delayed or retrying)
	Dead     int64 // in the dead letters
	// OldestReady is the queue's lag: how long the oldest job not yet
	// delivered has been in the stream (since it was enqueued, or became
	// due after its delay or back-off), on the server's clock; 0 when no
	// job is ready. With partitions, the largest of theirs.
	OldestReady time.Duration
}

// rqStatCmds are the commands Stats reads one partition with.
type rqStatCmds struct {
	xlen, zc, dead *redis.IntCmd
	pend           *redis.XPendingCmd
	groups         *redis.XInfoGroupsCmd
}

// Stats returns the counts of the queue's jobs, summed over its
// partitions, read in one pipeline (not atomically: a job moving meanwhile
// may be counted twice or not at all), and, when jobs are ready, the age
// of the oldest (one more round trip). It returns ErrWrongType when a key
// holds another type; ErrEmptyName, ErrInvalidName, ErrInvalidOption (see
// WithPartitions), ErrClientClosed, or a Redis error otherwise.
func (q *ReliableQueue[T]) Stats(ctx context.Context) (_ ReliableQueueStats, err error) {
	ctx, rec, err := q.openCall(ctx, opRQStats)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return ReliableQueueStats{}, err
	}
	q.c.trip(ctx, 1)
	p := q.c.rdb.Pipeline()
	cmds := make([]rqStatCmds, len(q.parts))
	for i := range q.parts {
		pt, c := &q.parts[i], &cmds[i]
		c.xlen = p.XLen(ctx, pt.stream)
		c.pend = p.XPending(ctx, pt.stream, rqGroup)
		c.zc = p.ZCard(ctx, pt.delayed)
		c.dead = p.XLen(ctx, pt.dead)
		c.groups = p.XInfoGroups(ctx, pt.stream)
		c.groups.SetFirstKeyPos(2) // XINFO GROUPS key: go-redis would route by "groups" on Cluster
	}
	now := p.Time(ctx)
	_, _ = p.Exec(ctx)
	var st ReliableQueueStats
	var ready []int // partitions with jobs ready
	for i := range cmds {
		c := &cmds[i]
		for _, cmd := range []redis.Cmder{c.xlen, c.zc, c.dead} {
			if err := cmd.Err(); err != nil {
				return ReliableQueueStats{}, q.wrap(err)
			}
		}
		inFlight := int64(0)
		if err := c.pend.Err(); err == nil {
			inFlight = c.pend.Val().Count
		} else if !isNoGroup(err) {
			return ReliableQueueStats{}, q.wrap(err)
		}
		if r := max(c.xlen.Val()-inFlight, 0); r > 0 {
			st.Ready += r
			ready = append(ready, i)
		}
		st.InFlight += inFlight
		st.Delayed += c.zc.Val()
		st.Dead += c.dead.Val()
	}
	if len(ready) > 0 {
		age, err := q.oldestReady(ctx, ready, cmds, now)
		if err != nil {
			return ReliableQueueStats{}, q.wrap(err)
		}
		st.OldestReady = age
	}
	return st, nil
}

// oldestReady returns the largest age, among the partitions ready, of the
// first entry after the group's last delivered one (the first of the
// stream when there is no group yet), by its id's milliseconds against the
// server's time.
func (q *ReliableQueue[T]) oldestReady(ctx context.Context, ready []int, cmds []rqStatCmds, now *redis.TimeCmd) (time.Duration, error) {
	if err := now.Err(); err != nil {
		return 0, err
	}
	q.c.trip(ctx, 1)
	p := q.c.rdb.Pipeline()
	firsts := make([]*redis.XMessageSliceCmd, len(ready))
	for k, i := range ready {
		start := "-"
		if groups := cmds[i].groups; groups.Err() == nil {
			for _, g := range groups.Val() {
				if g.Name == rqGroup {
					start = "(" + g.LastDeliveredID
				}
			}
		}
		firsts[k] = p.XRangeN(ctx, q.parts[i].stream, start, "+", 1)
	}
	_, _ = p.Exec(ctx)
	age := time.Duration(0)
	for _, f := range firsts {
		msgs, err := f.Result()
		if err != nil {
			return 0, err
		}
		if len(msgs) > 0 {
			age = max(age, entryAge(msgs[0].ID, now.Val()))
		}
	}
	return age, nil
}
