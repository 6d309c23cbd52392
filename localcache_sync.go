package redisson

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"strconv"
	"time"
)

// The LocalCachedMap's side of its channel, {name}:topic: the pub/sub
// service calls these under its mutex, in the order of the connection
// (channelHook), so they only change the local cache and queue any Redis
// call for the handle's goroutine.

// message applies a message of another instance: a clear (type 0), an
// invalidation (1) or an update (2). A message it cannot parse clears the
// cache: it may have named keys.
func (lc *LocalCachedMap[K, V]) message(payload string) {
	n := lc.n.Load()
	if n == nil || len(payload) < 17 {
		return
	}
	if payload[1:17] == string(lc.id[:]) {
		return // this instance's own
	}
	body := payload[17:]
	switch payload[0] {
	case 0:
		lc.stats.invalidations.Add(1)
		n.clear()
		if len(body) >= 17 && body[16] == 1 {
			lc.queue(func() { lc.ack(hex.EncodeToString([]byte(body[:16]))) })
		}
	case 1:
		if len(body) < 4 {
			n.clear()
			return
		}
		count := int(binary.BigEndian.Uint32([]byte(body[:4])))
		body = body[4:]
		if len(body) != 16*count {
			n.clear()
			return
		}
		lc.stats.invalidations.Add(uint64(count))
		for i := 0; i < count; i++ {
			n.invalidate([16]byte([]byte(body[16*i : 16*i+16])))
		}
	case 2:
		for len(body) > 0 {
			k, rest, ok := cutField(body)
			if !ok {
				n.clear()
				return
			}
			val, rest, ok := cutField(rest)
			if !ok {
				n.clear()
				return
			}
			body = rest
			lc.stats.invalidations.Add(1)
			h := keyHash([]byte(k))
			key, err := decodeValue[K](lc.m.codec, lc.m.object, []byte(k))
			if err != nil || !lc.cacheable(key) {
				n.invalidate(h)
				continue
			}
			v, err := decodeValue[V](lc.m.codec, lc.m.object, []byte(val))
			if err != nil {
				n.invalidate(h)
				continue
			}
			n.updated(key, h, v)
		}
	}
}

// cutField cuts a length-prefixed field (int32, big-endian) off b.
func cutField(b string) (field, rest string, ok bool) {
	if len(b) < 4 {
		return "", "", false
	}
	size := int(binary.BigEndian.Uint32([]byte(b[:4])))
	if size < 0 || len(b)-4 < size {
		return "", "", false
	}
	return b[4 : 4+size], b[4+size:], true
}

// lost: messages may have been missed. The cache serves nothing until the
// subscription is confirmed again (ReconnectClear also empties it now).
func (lc *LocalCachedMap[K, V]) lost() {
	n := lc.n.Load()
	if n == nil || lc.opts.ReconnectionStrategy == ReconnectNone || lc.opts.StoreMode == StoreLocalCacheOnly {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	lc.lostLocked(n)
}

func (lc *LocalCachedMap[K, V]) lostLocked(n *near[K, V]) {
	lc.subscribed = false
	lc.losses++
	if lc.opts.ReconnectionStrategy == ReconnectLoad {
		n.gen++ // reads under way may have read before a missed write
		if !lc.pending {
			lc.pending, lc.lostAt = true, time.Now()
		}
	} else if n.maxStale > 0 {
		n.gen++ // kept to serve stale; reads under way are not cached
	} else {
		n.clearLocked()
	}
	if n.maxStale > 0 && n.staleSince.Load() == 0 {
		n.staleSince.Store(time.Now().UnixNano())
	}
	n.live.Store(false)
}

// resumed: Redis confirmed the subscription. A confirmation while already
// subscribed is a reconnection nobody reported: messages may have been
// missed, so it counts as a loss first.
func (lc *LocalCachedMap[K, V]) resumed() {
	n := lc.n.Load()
	if n == nil || lc.opts.StoreMode == StoreLocalCacheOnly {
		return // the cache is the map and serves from the start
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if lc.subscribed && lc.opts.ReconnectionStrategy != ReconnectNone {
		lc.lostLocked(n)
	}
	lc.subscribed = true
	switch {
	case lc.opts.ReconnectionStrategy == ReconnectClear:
		n.clearLocked()
		n.staleSince.Store(0)
	case lc.pending:
		losses := lc.losses
		lc.queue(func() { lc.reload(n, losses) })
	}
	n.live.Store(!lc.pending)
}

// queue hands f to the handle's goroutine without blocking; with the queue
// full f is dropped (a clear request then waits out its timeout; a reload is
// queued again by the next confirmation, and meanwhile the cache serves
// nothing).
func (lc *LocalCachedMap[K, V]) queue(f func()) {
	select {
	case lc.work <- f:
	default:
	}
}

// ack acknowledges the clear request req (hex) of another instance.
func (lc *LocalCachedMap[K, V]) ack(req string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	counter := lc.m.name + ":clear:" + req
	_ = lc.m.c.scripts.run(ctx, scriptLocalClearAck, []string{counter, "redisson_sc:{" + counter + "}"},
		lc.publishArg(ctx)).Err()
}

// reload, after a confirmation with ReconnectLoad, drops the keys the
// updates log names since the loss (less a margin for the writers' clocks
// and a loss noticed late), then lets the cache serve again; after a longer
// outage than the log keeps, or when the log cannot be read, it clears the
// cache instead. It gives up if another loss happened meanwhile (losses
// changed): that one's confirmation reloads again.
func (lc *LocalCachedMap[K, V]) reload(n *near[K, V], losses uint64) {
	n.mu.Lock()
	if lc.losses != losses || !lc.subscribed || !lc.pending {
		n.mu.Unlock()
		return
	}
	since := lc.lostAt.Add(-10*time.Second - 2*lc.m.c.opts.PubSubHealthCheck)
	n.mu.Unlock()
	var members []string
	clearAll := time.Since(since) >= updateLogWindow
	if !clearAll {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var err error
		members, err = lc.m.c.scripts.run(ctx, scriptLocalUpdatesSince, []string{lc.log},
			strconv.FormatInt(since.UnixMilli(), 10),
			strconv.FormatInt(time.Now().Add(-updateLogWindow).UnixMilli(), 10)).StringSlice()
		cancel()
		clearAll = err != nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if lc.losses != losses || !lc.subscribed {
		return
	}
	if clearAll {
		n.clearLocked()
	}
	for _, m := range members {
		if len(m) >= 16 {
			n.invalidateLocked([16]byte([]byte(m[:16])))
		}
	}
	lc.pending = false
	n.staleSince.Store(0)
	n.live.Store(true)
}
