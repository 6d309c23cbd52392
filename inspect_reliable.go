package redisson

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// ReliableQueueInfo is what Redis holds of a ReliableQueue, read by
// Client.InspectReliableQueue. Durations are in nanoseconds in JSON.
type ReliableQueueInfo struct {
	Name string `json:"name"`
	// Ready, InFlight, Delayed and Dead count the jobs as
	// ReliableQueueStats does.
	Ready    int64 `json:"ready"`
	InFlight int64 `json:"in_flight"`
	Delayed  int64 `json:"delayed"`
	Dead     int64 `json:"dead"`
	// OldestReady is the age of the oldest job not yet delivered (the
	// queue's lag), 0 when none is ready.
	OldestReady time.Duration `json:"oldest_ready"`
	// NextDue is when the first delayed job (or retry) is due on the
	// server's clock; zero when none waits.
	NextDue time.Time `json:"next_due"`
	// Workers are the consumers of the queue's group, one per Process
	// call that ever ran (<client uuid>:<n>), with their jobs in flight.
	Workers []ReliableQueueWorker `json:"workers"`
	// Jobs are the first InspectQueueLimit jobs in flight, oldest first.
	Jobs []InFlightJob `json:"jobs"`
	// ServerTime is the Redis server's clock when the state was read.
	ServerTime time.Time `json:"server_time"`
	// Partitions is how many partitions the queue's workers last recorded
	// (WithPartitions; 1 when unpartitioned). The counts, the workers and
	// the jobs are those of all of them; OldestReady is the largest lag,
	// NextDue the earliest.
	Partitions int `json:"partitions"`
}

// ReliableQueueWorker is one consumer of a ReliableQueue's group.
type ReliableQueueWorker struct {
	Consumer string `json:"consumer"`
	// InFlight is how many jobs it holds.
	InFlight int64 `json:"in_flight"`
	// Idle is how long since it last fetched, renewed or settled.
	Idle time.Duration `json:"idle"`
}

// InFlightJob is one job delivered to a worker and not yet settled. Its
// lease is its idle time: the worker's watchdog resets it every third of
// the client's WatchdogTimeout, and other workers take the job over once it
// reaches their WorkerOptions.Lease (default 30s), so the lease left is
// that Lease minus Idle.
type InFlightJob struct {
	// Entry is the job's stream entry id (after "p<i>/" in partition i >= 1).
	Entry    string `json:"entry"`
	Consumer string `json:"consumer"`
	// Idle is the time since the entry's last delivery or renewal.
	Idle time.Duration `json:"idle"`
	// Deliveries counts the entry's deliveries (a retried job's earlier
	// ones were other entries).
	Deliveries int64 `json:"deliveries"`
}

// InspectReliableQueue reads the queue called name: its counts, its lag,
// its next due job, its workers and its jobs in flight, in one pipeline
// (not atomically) and one more round trip when jobs are ready; a
// partitioned queue's partitions (as many as its workers recorded, see
// WithPartitions) one after another. It returns ErrNotFound when the
// stream, the delayed jobs and the dead letters are all absent (an empty
// stream whose jobs were all done is found); ErrWrongType when a key holds
// another type; ErrEmptyName, ErrInvalidName, ErrClientClosed, or a Redis
// error.
func (c *Client) InspectReliableQueue(ctx context.Context, name string) (ReliableQueueInfo, error) {
	parts := 1
	info, err := c.inspectRQPart(ctx, name, name, "", &parts)
	if err != nil {
		return ReliableQueueInfo{}, err
	}
	info.Partitions = parts
	for i := 1; i < parts; i++ {
		pt := newRQPart(name, i, "")
		pi, err := c.inspectRQPart(ctx, name, pt.stream, pt.prefix, nil)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return ReliableQueueInfo{}, err
		}
		info.add(pi)
	}
	return info, nil
}

// add adds partition pi's state to info's.
func (info *ReliableQueueInfo) add(pi ReliableQueueInfo) {
	info.Ready += pi.Ready
	info.InFlight += pi.InFlight
	info.Delayed += pi.Delayed
	info.Dead += pi.Dead
	info.OldestReady = max(info.OldestReady, pi.OldestReady)
	if !pi.NextDue.IsZero() && (info.NextDue.IsZero() || pi.NextDue.Before(info.NextDue)) {
		info.NextDue = pi.NextDue
	}
	for _, w := range pi.Workers {
		merged := false
		for k := range info.Workers {
			if info.Workers[k].Consumer == w.Consumer {
				info.Workers[k].InFlight += w.InFlight
				info.Workers[k].Idle = min(info.Workers[k].Idle, w.Idle)
				merged = true
			}
		}
		if !merged {
			info.Workers = append(info.Workers, w)
		}
	}
	for _, j := range pi.Jobs {
		if len(info.Jobs) < InspectQueueLimit {
			info.Jobs = append(info.Jobs, j)
		}
	}
}

// inspectRQPart reads one partition of the queue called name: its stream
// and companion keys; prefix goes before its entry ids. With parts, it
// also reads the partitions recorded into it.
func (c *Client) inspectRQPart(ctx context.Context, name, stream, prefix string, parts *int) (ReliableQueueInfo, error) {
	const kind = reliableQueueKind
	delayed, dead := prefixName("redisson_rq_delayed", stream), prefixName("redisson_rq_dead", stream)
	if err := c.checkObject(name, c.nameError(kind, name, stream, delayed, dead)); err != nil {
		return ReliableQueueInfo{}, err
	}
	p := c.rdb.Pipeline()
	var recorded *redis.StringCmd
	if parts != nil {
		recorded = p.Get(ctx, rqPartitionsKey(name))
	}
	xlen := p.XLen(ctx, stream)
	zc := p.ZCard(ctx, delayed)
	first := p.ZRangeWithScores(ctx, delayed, 0, 0)
	dlen := p.XLen(ctx, dead)
	groups := p.XInfoGroups(ctx, stream)
	consumers := p.XInfoConsumers(ctx, stream, rqGroup)
	groups.SetFirstKeyPos(2) // XINFO <sub> key: go-redis would route by the subcommand on Cluster
	consumers.SetFirstKeyPos(2)
	pending := p.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: stream, Group: rqGroup, Start: "-", End: "+", Count: InspectQueueLimit})
	now := p.Time(ctx)
	_, _ = p.Exec(ctx)
	for _, cmd := range []redis.Cmder{xlen, zc, first, dlen, now} {
		if err := cmd.Err(); err != nil {
			return ReliableQueueInfo{}, objectErr(kind, name, err)
		}
	}
	info := ReliableQueueInfo{Name: name, Delayed: zc.Val(), Dead: dlen.Val(), ServerTime: now.Val(),
		Workers: []ReliableQueueWorker{}, Jobs: []InFlightJob{}}
	partitioned := false
	if recorded != nil {
		if n, err := recorded.Int(); err == nil && n > 1 && n <= maxRQPartitions {
			*parts, partitioned = n, true
		}
	}
	if err := groups.Err(); err != nil && strings.Contains(err.Error(), "no such key") && info.Delayed == 0 && info.Dead == 0 && !partitioned {
		return ReliableQueueInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	if z := first.Val(); len(z) == 1 {
		info.NextDue = time.UnixMilli(int64(z[0].Score))
	}
	start := "-"
	if err := groups.Err(); err == nil {
		for _, g := range groups.Val() {
			if g.Name == rqGroup {
				info.InFlight, start = g.Pending, "("+g.LastDeliveredID
			}
		}
	} else if !isNoGroup(err) && !strings.Contains(err.Error(), "no such key") {
		return ReliableQueueInfo{}, objectErr(kind, name, err)
	}
	info.Ready = max(xlen.Val()-info.InFlight, 0)
	if err := consumers.Err(); err == nil {
		for _, w := range consumers.Val() {
			info.Workers = append(info.Workers, ReliableQueueWorker{Consumer: w.Name, InFlight: w.Pending, Idle: w.Idle})
		}
	}
	if err := pending.Err(); err == nil {
		for _, j := range pending.Val() {
			info.Jobs = append(info.Jobs, InFlightJob{Entry: prefix + j.ID, Consumer: j.Consumer, Idle: j.Idle, Deliveries: j.RetryCount})
		}
	}
	if info.Ready > 0 {
		msgs, err := c.rdb.XRangeN(ctx, stream, start, "+", 1).Result()
		if err != nil {
			return ReliableQueueInfo{}, objectErr(kind, name, err)
		}
		if len(msgs) == 1 {
			info.OldestReady = entryAge(msgs[0].ID, info.ServerTime)
		}
	}
	return info, nil
}

// ReliableTopicInfo is what Redis holds of a ReliableTopic (Redisson's
// RReliableTopic), read by Client.InspectReliableTopic.
type ReliableTopicInfo struct {
	Name string `json:"name"`
	// Length is the number of messages in the stream; LastID the id of
	// the last one published ("" when none ever was).
	Length int64  `json:"length"`
	LastID string `json:"last_id"`
	// Subscribers are the topic's consumer groups, one per subscriber.
	Subscribers []ReliableSubscriberInfo `json:"subscribers"`
	// ServerTime is the Redis server's clock when the state was read.
	ServerTime time.Time `json:"server_time"`
}

// ReliableSubscriberInfo is one subscriber of a ReliableTopic.
type ReliableSubscriberInfo struct {
	// ID is the subscriber's id, its group's name.
	ID string `json:"id"`
	// Pending counts messages delivered to it and not acknowledged.
	Pending int64 `json:"pending"`
	// Lag counts messages published and not yet delivered to it; -1 when
	// Redis cannot tell (before Redis 7, or after entries were deleted in
	// its range).
	Lag int64 `json:"lag"`
	// LastDelivered is the id of the last message delivered to it.
	LastDelivered string `json:"last_delivered"`
	// Expires is when the subscriber's position is given up unless it
	// refreshes it (the {name}:timeout member); zero when it has none.
	Expires time.Time `json:"expires"`
}

// InspectReliableTopic reads the topic called name: its length and its
// subscribers' positions, in one pipeline. It returns ErrNotFound when the
// stream is absent, ErrWrongType when it holds another type; ErrEmptyName,
// ErrInvalidName, ErrClientClosed, or a Redis error.
func (c *Client) InspectReliableTopic(ctx context.Context, name string) (ReliableTopicInfo, error) {
	const kind = "reliable topic"
	timeouts := suffixName(name, "timeout")
	if err := c.checkObject(name, c.nameError(kind, name, timeouts)); err != nil {
		return ReliableTopicInfo{}, err
	}
	p := c.rdb.Pipeline()
	stream := p.XInfoStream(ctx, name)
	groups := p.XInfoGroups(ctx, name)
	stream.SetFirstKeyPos(2) // as in InspectReliableQueue
	groups.SetFirstKeyPos(2)
	expiry := p.ZRangeWithScores(ctx, timeouts, 0, -1)
	now := p.Time(ctx)
	_, _ = p.Exec(ctx)
	if err := stream.Err(); err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return ReliableTopicInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
		}
		return ReliableTopicInfo{}, objectErr(kind, name, err)
	}
	for _, cmd := range []redis.Cmder{groups, expiry, now} {
		if err := cmd.Err(); err != nil {
			return ReliableTopicInfo{}, objectErr(kind, name, err)
		}
	}
	info := ReliableTopicInfo{Name: name, Length: stream.Val().Length, LastID: stream.Val().LastGeneratedID,
		Subscribers: []ReliableSubscriberInfo{}, ServerTime: now.Val()}
	if info.LastID == "0-0" {
		info.LastID = ""
	}
	exp := make(map[string]time.Time, len(expiry.Val()))
	for _, z := range expiry.Val() {
		if id, ok := z.Member.(string); ok {
			exp[id] = time.UnixMilli(int64(z.Score))
		}
	}
	for _, g := range groups.Val() {
		info.Subscribers = append(info.Subscribers, ReliableSubscriberInfo{ID: g.Name, Pending: g.Pending, Lag: g.Lag,
			LastDelivered: g.LastDeliveredID, Expires: exp[g.Name]})
	}
	return info, nil
}

// IdempotencyRecordInfo is what Redis holds of an IdempotencyRecord, read
// by Client.InspectIdempotencyRecord.
type IdempotencyRecordInfo struct {
	Name string `json:"name"`
	// State is "running" (a run holds the key) or "done" (its result is
	// stored for replays).
	State string `json:"state"`
	// Fingerprint is the fingerprint of the request that ran (the
	// middleware's: method, URI and the body's SHA-256).
	Fingerprint string `json:"fingerprint"`
	// Status, Header and Body are the stored result, once done (Header is
	// the middleware's JSON of the header map).
	Status int    `json:"status"`
	Header string `json:"header"`
	Body   []byte `json:"body"`
	// TTL is what is left of the run's lease while running, of the
	// retention once done.
	TTL time.Duration `json:"ttl"`
}

// InspectIdempotencyRecord reads the record called name (for a key of
// httplimit.NewIdempotency, the name <middleware name>:{<hex SHA-256 of
// scope, NUL, key>}). The run's token is not shown: it would let the
// reader complete the run. It returns ErrNotFound when the record is
// absent (never used, expired, or abandoned), ErrWrongType when the key
// holds another type; ErrEmptyName, ErrClientClosed, or a Redis error.
func (c *Client) InspectIdempotencyRecord(ctx context.Context, name string) (IdempotencyRecordInfo, error) {
	const kind = idempotencyKind
	if err := c.checkObject(name, nil); err != nil {
		return IdempotencyRecordInfo{}, err
	}
	p := c.rdb.Pipeline()
	fields := p.HMGet(ctx, name, "state", "fp", "status", "headers", "body")
	ttl := p.PTTL(ctx, name)
	_, _ = p.Exec(ctx)
	if err := errors.Join(fields.Err(), ttl.Err()); err != nil {
		return IdempotencyRecordInfo{}, objectErr(kind, name, err)
	}
	v := fields.Val()
	str := func(i int) string { s, _ := v[i].(string); return s }
	if str(0) == "" {
		return IdempotencyRecordInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	info := IdempotencyRecordInfo{Name: name, State: str(0), Fingerprint: str(1), Header: str(3), TTL: max(ttl.Val(), 0)}
	info.Status = int(parseMs(str(2)))
	if b := str(4); b != "" {
		info.Body = []byte(b)
	}
	return info, nil
}
