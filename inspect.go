package redisson

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// The inspection API, locks: read-only views of a lock's state in Redis,
// whoever holds it (this library or Java's Redisson), for operators and
// admin pages; cmd/redissonctl prints them. The other objects are in
// inspect_objects.go, the keyspace listing in inspect_list.go.

// InspectQueueLimit is the most fair-lock waiters a LockInfo lists (from
// the head of the queue); LockInfo.QueueLength counts them all.
const InspectQueueLimit = 100

// LockInfo is what Redis holds of a lock (Lock, FairLock or ReadWriteLock)
// at one instant, read by Client.InspectLock, InspectFairLock or
// InspectReadWriteLock. Owners are read from the lock hash as both this
// library and Redisson write them, "<client id>:<n>" (n is this library's
// owner number, or the Java thread id), with ":write" for a write hold.
// JSON field names are the tags below; durations are in nanoseconds, as
// encoding/json writes a time.Duration.
//
// Redisson's nearest counterparts are RLock's isLocked, remainTimeToLive
// and getHoldCount, which answer for one thread; LockInfo answers for every
// owner at once. Keys read: the lock hash, redisson_lock_token:{name}, a fair
// lock's redisson_lock_queue:{name}, redisson_lock_timeout:{name} and
// redisson_lock_alive:{name}, a reader's {name}:<owner>:rwlock_timeout:<n>
// (docs/keys.md). Under failover it shows what the master answering has,
// which may lack the old master's latest writes, as every read does; it is
// a snapshot of one instant, to show, never to decide with (a lock read free
// may be taken the next moment). The inspection types hold plain values
// and are safe to copy.
type LockInfo struct {
	// Name is the lock's name, the key of its hash.
	Name string `json:"name"`
	// Kind is "lock", "fair lock" or "read-write lock": the call that read it.
	Kind string `json:"kind"`
	// Held reports whether anyone holds the lock (the hash exists).
	Held bool `json:"held"`
	// Mode is a read-write lock's mode, "read" or "write"; "" otherwise.
	Mode string `json:"mode,omitempty"`
	// Owners are the hash's owners, in the hash's order.
	Owners []LockOwner `json:"owners"`
	// Lease is the remaining lease of the hash (PTTL); 0 when not held.
	// Under read holds it is the longest read lease.
	Lease time.Duration `json:"lease"`
	// NoExpiry reports a lock hash without expiry: written by something
	// other than a lock client, it will never be released by expiry.
	NoExpiry bool `json:"no_expiry,omitempty"`
	// Token is the fencing counter redisson_lock_token:{name}, the latest
	// token handed out (0 when the counter does not exist).
	Token int64 `json:"token"`
	// QueueLength is the number of fair-lock waiters (0 for other kinds).
	QueueLength int64 `json:"queue_length"`
	// Queue is the first InspectQueueLimit fair-lock waiters, in turn order.
	Queue []FairWaiter `json:"queue,omitempty"`
	// Subscribers counts the connections subscribed to the lock's unlock
	// channel, Channel (PUBSUB NUMSUB, or SHARDNUMSUB in sharded mode on
	// Cluster). For a Lock or ReadWriteLock it is what Redis can say of the
	// waiters, which queue nowhere in Redis: the number of client processes
	// waiting, since only waiters subscribe and each client subscribes once
	// however many of its goroutines (this library: one pub/sub connection
	// per Client, per master when sharded) or threads (a Java
	// RedissonClient) wait. A Client keeps the subscription for
	// Options.SubscriptionLinger (2s by default) after its last waiter
	// left, so a count may include a client that waited just before; the
	// number of goroutines or threads waiting in each client is not in
	// Redis. A fair lock's waiters are listed one by one in Queue and
	// listen on channels of their own (FairWaiter.Subscribed).
	Subscribers int64  `json:"subscribers"`
	Channel     string `json:"channel"`
	// ServerTime is the Redis server's clock when the state was read; the
	// deadlines of the waiters are on that clock.
	ServerTime time.Time `json:"server_time"`
}

// LockOwner is one owner field of a lock hash (see LockInfo).
type LockOwner struct {
	// Field is the field as stored: "<client id>:<n>", or with ":write".
	Field string `json:"field"`
	// ClientID is the field's client UUID (Client.ID, or a Java
	// RedissonClient's id).
	ClientID string `json:"client_id"`
	// Thread is the number after the client id: this library's owner
	// number, or the Java thread id; 0 when it is not a number.
	Thread int64 `json:"thread"`
	// Write reports a write hold of a read-write lock.
	Write bool `json:"write,omitempty"`
	// Holds is the hold count (re-entries included).
	Holds int64 `json:"holds"`
	// ReadLeases are the remaining leases of a reader's holds, one per
	// re-entry level (the keys {name}:<owner>:rwlock_timeout:<n>); 0 for a
	// level whose key is gone.
	ReadLeases []time.Duration `json:"read_leases,omitempty"`
}

// FairWaiter is one waiter in a fair lock's queue (see LockInfo).
type FairWaiter struct {
	// Position is the waiter's place in the queue, 1 for the next owner.
	Position int `json:"position"`
	// Owner is the waiter's owner, "<client id>:<n>" as in LockOwner.
	Owner    string `json:"owner"`
	ClientID string `json:"client_id"`
	Thread   int64  `json:"thread"`
	// Deadline is the turn deadline Redisson reads for it
	// (redisson_lock_timeout:{name}); zero when it has none.
	Deadline time.Time `json:"deadline"`
	// Timeout is Deadline less ServerTime: negative once passed.
	Timeout time.Duration `json:"timeout"`
	// AliveUntil is the liveness this library's waiters confirm
	// (redisson_lock_alive:{name}); zero for a waiter without one (a Java
	// waiter).
	AliveUntil time.Time `json:"alive_until"`
	// Alive reports whether the waiter is live: AliveUntil is ahead of the
	// server's clock, or, without one, Deadline is.
	Alive bool `json:"alive"`
	// Subscribed reports whether a connection listens on the waiter's own
	// channel redisson_lock__channel:{name}:<owner>.
	Subscribed bool `json:"subscribed"`
}

// InspectLock reads the state of the lock called name (a Lock: GetLock)
// whoever holds it: owners and hold counts, remaining lease, fencing
// counter and channel subscribers. It writes nothing. It costs two round
// trips, one script and the subscriber count (on Cluster with plain
// pub/sub one call per node, since subscribers may be on any node), and
// O(owners) on the server. A free lock is a LockInfo with Held false, not an
// error. It returns ErrEmptyName, ErrInvalidName, ErrWrongType (a key of
// another type; Redis unchanged), ErrClientClosed, or a Redis error.
func (c *Client) InspectLock(ctx context.Context, name string) (LockInfo, error) {
	return c.inspectLock(ctx, "lock", name, prefixName("redisson_lock__channel", name), false)
}

// InspectFairLock is InspectLock for a fair lock (GetFairLock): it also
// lists the first InspectQueueLimit waiters of its queue with their
// Redisson deadlines, liveness and subscriptions. Waiters are read from the
// queue as Java writes it too. O(owners + waiters listed) on the server.
func (c *Client) InspectFairLock(ctx context.Context, name string) (LockInfo, error) {
	return c.inspectLock(ctx, "fair lock", name, prefixName("redisson_lock__channel", name), true)
}

// InspectReadWriteLock is InspectLock for a read-write lock
// (GetReadWriteLock): Mode, the writer (Write) and the readers with the
// lease of each of their read holds. O(read holds) on the server.
func (c *Client) InspectReadWriteLock(ctx context.Context, name string) (LockInfo, error) {
	return c.inspectLock(ctx, "read-write lock", name, prefixName("redisson_rwlock", name), false)
}

func (c *Client) inspectLock(ctx context.Context, kind, name, channel string, fair bool) (LockInfo, error) {
	keys := []string{name, prefixName("redisson_lock_token", name), fairQueueKey(name),
		prefixName("redisson_lock_timeout", name), prefixName("redisson_lock_alive", name), rwKeyPrefix(name)}
	if err := c.checkObject(name, c.nameError(kind, name, keys...)); err != nil {
		return LockInfo{}, err
	}
	res, err := c.scripts.run(ctx, scriptInspectLock, keys, InspectQueueLimit).Slice()
	if err != nil {
		return LockInfo{}, objectErr(kind, name, err)
	}
	info, ok := decodeLockInfo(res)
	if !ok {
		return LockInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	}
	info.Name, info.Kind = name, kind
	if !fair { // a hash read as a plain lock may still carry a queue: not ours to list
		info.QueueLength, info.Queue = 0, nil
	}
	channels := []string{channel}
	for _, w := range info.Queue {
		channels = append(channels, channel+":"+w.Owner)
	}
	subs, err := c.numSub(ctx, false, channels)
	if err != nil {
		return LockInfo{}, objectErr(kind, name, err)
	}
	info.Subscribers, info.Channel = subs[0], channel
	for i := range info.Queue {
		info.Queue[i].Subscribed = subs[i+1] > 0
	}
	return info, nil
}

// decodeLockInfo reads inspect_lock's reply; false when it has not its
// shape.
func decodeLockInfo(res []any) (LockInfo, bool) {
	if len(res) != 10 {
		return LockInfo{}, false
	}
	typ, _ := res[0].(string)
	pttl, ok1 := res[1].(int64)
	fields, ok2 := res[2].([]any)
	qlen, ok3 := res[4].(int64)
	queue, ok4 := res[5].([]any)
	deadlines, ok5 := res[6].([]any)
	alive, ok6 := res[7].([]any)
	leases, ok7 := res[8].([]any)
	nowMs, ok8 := res[9].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || !ok7 || !ok8 || len(deadlines) != len(queue) || len(alive) != len(queue) {
		return LockInfo{}, false
	}
	now := time.UnixMilli(nowMs)
	info := LockInfo{Held: typ == "hash", QueueLength: qlen, ServerTime: now, Owners: []LockOwner{}}
	if info.Held {
		switch {
		case pttl >= 0:
			info.Lease = time.Duration(pttl) * time.Millisecond
		case pttl == -1:
			info.NoExpiry = true
		}
	}
	if s, ok := res[3].(string); ok {
		info.Token, _ = strconv.ParseInt(s, 10, 64)
	}
	byField := map[string]int{}
	for i := 0; i+1 < len(fields); i += 2 {
		f, _ := fields[i].(string)
		v, _ := fields[i+1].(string)
		if f == "mode" {
			info.Mode = v
			continue
		}
		o := LockOwner{Field: f}
		o.Holds, _ = strconv.ParseInt(v, 10, 64)
		owner, write := strings.CutSuffix(f, ":write")
		o.Write = write
		o.ClientID, o.Thread = splitOwner(owner)
		byField[f] = len(info.Owners)
		info.Owners = append(info.Owners, o)
	}
	for i := 0; i+2 < len(leases); i += 3 {
		f, _ := leases[i].(string)
		ms, _ := leases[i+2].(int64)
		j, ok := byField[f]
		if !ok {
			continue
		}
		info.Owners[j].ReadLeases = append(info.Owners[j].ReadLeases, time.Duration(max(ms, 0))*time.Millisecond)
	}
	for i, q := range queue {
		owner, _ := q.(string)
		w := FairWaiter{Position: i + 1, Owner: owner}
		w.ClientID, w.Thread = splitOwner(owner)
		if ms, ok := scoreMs(deadlines[i]); ok {
			w.Deadline = time.UnixMilli(ms)
			w.Timeout = w.Deadline.Sub(now)
		}
		if ms, ok := scoreMs(alive[i]); ok {
			w.AliveUntil = time.UnixMilli(ms)
			w.Alive = w.AliveUntil.After(now)
		} else {
			w.Alive = w.Deadline.After(now)
		}
		info.Queue = append(info.Queue, w)
	}
	return info, true
}

// splitOwner splits an owner "<client id>:<n>" at its last colon.
func splitOwner(owner string) (string, int64) {
	i := strings.LastIndexByte(owner, ':')
	if i < 0 {
		return owner, 0
	}
	n, err := strconv.ParseInt(owner[i+1:], 10, 64)
	if err != nil {
		return owner, 0
	}
	return owner[:i], n
}

// scoreMs reads a zset score a script returned (a decimal string, false
// when absent) as whole milliseconds.
func scoreMs(v any) (int64, bool) {
	s, ok := v.(string)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return int64(f), err == nil
}

// numSub returns the subscriber count of each channel (all in one slot).
// Sharded channels on Cluster are counted on the master of their slot with
// SHARDNUMSUB; plain channels on Cluster on every node, summed (a plain
// subscriber may be on any node); elsewhere with one NUMSUB. plain: the
// channels are published plain whatever the mode.
func (c *Client) numSub(ctx context.Context, plain bool, channels []string) ([]int64, error) {
	out := make([]int64, len(channels))
	add := func(m map[string]int64) {
		for i, ch := range channels {
			out[i] += m[ch]
		}
	}
	cc := c.topo.cluster
	if cc == nil {
		m, err := c.rdb.PubSubNumSub(ctx, channels...).Result()
		add(m)
		return out, err
	}
	sharded, err := c.pubsub.objectsSharded(ctx)
	if err != nil {
		return nil, err
	}
	if sharded && !plain {
		node, err := cc.MasterForKey(ctx, channels[0])
		if err != nil {
			return nil, err
		}
		m, err := node.PubSubShardNumSub(ctx, channels...).Result()
		add(m)
		return out, err
	}
	var mu sync.Mutex
	err = cc.ForEachShard(ctx, func(ctx context.Context, node *redis.Client) error {
		m, err := node.PubSubNumSub(ctx, channels...).Result()
		mu.Lock()
		defer mu.Unlock()
		add(m)
		return err
	})
	return out, err
}
