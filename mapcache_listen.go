package redisson

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
)

// A MapCache's entry events: Redisson's EntryCreatedListener,
// EntryUpdatedListener, EntryRemovedListener and EntryExpiredListener, on
// its channels redisson_map_cache_created|updated|removed|expired:{name}.

// MapCacheEvent is one entry event of a MapCache: the entry's key and value
// and, for an update, the value it replaced.
type MapCacheEvent[K comparable, V any] struct {
	Key      K
	Value    V // the new value (created, updated), or the value that left (removed, expired)
	OldValue V // updated: the value replaced; the zero value otherwise
}

// OnCreated calls fn for every entry written where the key had no live
// entry, by any client (Go or Java), from the moment it returns until the
// returned unsubscribe func is called or the client closes. It returns once
// Redis confirmed the subscription.
//
// Events travel as Redisson's do: the writer's script publishes them once
// the map's options say it has listeners, which the first OnCreated,
// OnUpdated, OnRemoved or OnExpired records (HSET {name}:redisson_options
// has-listeners 1, never reset, as in Redisson). Delivery is Redis pub/sub:
// at most once, lost while this client's pub/sub connection is down. fn
// runs on a goroutine of the subscription's own, one event at a time, in
// the order received; events that do not decode are skipped. Events
// published by scripts in a Cluster follow Options.PubSubMode (SPUBLISH on a
// Redis 7 Cluster by default), as Redisson's do.
//
// unsubscribe does not wait for a running fn (fn may call it); Client.Close
// waits for every subscription's goroutine. It returns ErrInvalidOption for
// a nil fn, ErrNotSubscribed when Redis did not confirm in time (or the
// context's error); ErrEmptyName, ErrInvalidName, ErrWrongType (the options
// key), ErrClientClosed, or a Redis error otherwise.
func (mc *MapCache[K, V]) OnCreated(ctx context.Context, fn func(MapCacheEvent[K, V])) (unsubscribe func(), err error) {
	return mc.listen(ctx, mcCreated, 2, fn)
}

// OnUpdated calls fn for every write that replaced a live entry, with the
// old value, as OnCreated does.
func (mc *MapCache[K, V]) OnUpdated(ctx context.Context, fn func(MapCacheEvent[K, V])) (unsubscribe func(), err error) {
	return mc.listen(ctx, mcUpdated, 3, fn)
}

// OnRemoved calls fn for every live entry removed (Remove, or evicted by
// the max size), as OnCreated does. Delete publishes nothing.
func (mc *MapCache[K, V]) OnRemoved(ctx context.Context, fn func(MapCacheEvent[K, V])) (unsubscribe func(), err error) {
	return mc.listen(ctx, mcRemoved, 2, fn)
}

// OnExpired calls fn for every expired entry deleted: by a background
// eviction pass (of any client, Java's included) or by a call that met it,
// as OnCreated does. An entry expires when its TTL or max idle runs out;
// its event comes when it is deleted, which may be up to a few seconds
// later (never is it returned meanwhile).
func (mc *MapCache[K, V]) OnExpired(ctx context.Context, fn func(MapCacheEvent[K, V])) (unsubscribe func(), err error) {
	return mc.listen(ctx, mcExpired, 2, fn)
}

func (mc *MapCache[K, V]) listen(ctx context.Context, channel, parts int, fn func(MapCacheEvent[K, V])) (_ func(), err error) {
	c := mc.m.c
	ctx, rec, err := mc.m.open(ctx, opMapCacheListen)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return nil, err
	}
	if fn == nil {
		return nil, mc.m.wrap(invalidOption(ErrInvalidOption, "listener", nil, "a function"))
	}
	c.trip(ctx, 1)
	if err := c.rdb.HSet(ctx, mc.keys[mcOptions], "has-listeners", "1").Err(); err != nil {
		return nil, mc.m.wrap(err)
	}
	sharded, err := c.pubsub.objectsSharded(ctx)
	if err != nil {
		return nil, mc.m.wrap(err)
	}
	if !c.mapCaches.addListener() {
		return nil, ErrClientClosed
	}
	t := &Topic[[]byte]{base: newBase(c, mapCacheKind+" listener", mc.keys[channel], BytesCodec{}), sharded: sharded}
	opts := []TopicOption{func(o *topicOptions) { o.onExit = c.mapCaches.listenerDone }}
	sub, err := t.subscribe(ctx, opts, func(_ *TopicSubscription, payload []byte) bool {
		if ev, err := mc.event(payload, parts); err == nil {
			fn(ev)
		}
		return true
	})
	if err != nil {
		c.mapCaches.listenerDone()
		return nil, err
	}
	return sub.Close, nil
}

// event decodes a Redisson entry event: parts times an 8-byte
// little-endian length and that many bytes (key, value[, old value]).
func (mc *MapCache[K, V]) event(payload []byte, parts int) (MapCacheEvent[K, V], error) {
	var ev MapCacheEvent[K, V]
	fields, err := mapCacheEventFields(payload, parts)
	if err != nil {
		return ev, &codecError{object: mc.m.object, codec: mc.m.codec.Name(), op: "decode", err: err}
	}
	if ev.Key, err = decodeValue[K](mc.m.codec, mc.m.object, fields[0]); err != nil {
		return ev, err
	}
	if ev.Value, err = decodeValue[V](mc.m.codec, mc.m.object, fields[1]); err != nil {
		return ev, err
	}
	if parts == 3 {
		ev.OldValue, err = decodeValue[V](mc.m.codec, mc.m.object, fields[2])
	}
	return ev, err
}

// mapCacheEventFields splits an event payload into its parts.
func mapCacheEventFields(payload []byte, parts int) ([][]byte, error) {
	fields := make([][]byte, 0, parts)
	for range parts {
		if len(payload) < 8 {
			return nil, errors.New("event payload cut short")
		}
		n := binary.LittleEndian.Uint64(payload)
		payload = payload[8:]
		if n > uint64(len(payload)) {
			return nil, fmt.Errorf("event field of %d bytes in %d", n, len(payload))
		}
		fields = append(fields, payload[:n])
		payload = payload[n:]
	}
	if len(payload) != 0 {
		return nil, fmt.Errorf("%d bytes after the event's %d fields", len(payload), parts)
	}
	return fields, nil
}
