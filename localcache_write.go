package redisson

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// LocalCachedMap's writes (each one script call that also tells the other
// instances), ClearLocalCache, and the bytes of Redisson's messages.

// Put stores v at key and returns the previous value and true, or the zero
// value and false when key was absent, in one script call that also
// publishes the change to the other instances (as SyncStrategy says). This
// instance caches v unless another write or read of key overlapped. With
// a Writer, v then goes to it (see WithWriteThrough, WithWriteBehind). It
// returns the errors of Map.Put, ErrInvalidOption and ErrHandleClosed, and
// with a Writer ErrWriterFailed, ErrWriteBehindFull or ctx's error.
func (lc *LocalCachedMap[K, V]) Put(ctx context.Context, key K, v V) (V, bool, error) {
	prev, had, _, err := lc.write(ctx, key, v, false)
	return prev, had, err
}

// FastPut stores v at key without reading the previous value and reports
// whether key was new (Redisson's fastPut). It returns the errors of Put.
func (lc *LocalCachedMap[K, V]) FastPut(ctx context.Context, key K, v V) (bool, error) {
	_, _, isNew, err := lc.write(ctx, key, v, true)
	return isNew, err
}

func (lc *LocalCachedMap[K, V]) write(ctx context.Context, key K, v V, fast bool) (V, bool, bool, error) {
	prev, had, isNew, stored, err := lc.writeMap(ctx, key, v, fast)
	if lc.w != nil && stored { // the Writer's turn (even when the previous value did not decode)
		if werr := lc.w.wrote(ctx, map[K]V{key: v}, nil, lc.evict); werr != nil {
			return prev, had, isNew, werr
		}
	}
	return prev, had, isNew, err
}

// evict removes keys from the map without the Writer (its failure's
// clean-up).
func (lc *LocalCachedMap[K, V]) evict(ctx context.Context, keys []K) error {
	_, err := lc.fastRemove(ctx, keys)
	return err
}

// writeMap is Put and FastPut without the Writer; stored reports whether
// v was stored.
func (lc *LocalCachedMap[K, V]) writeMap(ctx context.Context, key K, v V, fast bool) (prev V, had, isNew, stored bool, err error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return prev, false, false, false, err
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return prev, false, false, false, err
	}
	val, err := lc.m.encode(v)
	if err != nil {
		return prev, false, false, false, err
	}
	h := keyHash(k)
	msg := lc.invalidateMsg(h)
	if lc.opts.SyncStrategy == SyncUpdate {
		msg = lc.updateMsg(k, val)
	}
	cacheable := lc.cacheable(key)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		if !cacheable {
			return prev, false, false, false, lc.m.codecErr(fmt.Sprintf("key %v is not comparable", key))
		}
		prev, had = n.store(key, h, v)
		return prev, had, !had, true, lc.wrap(lc.publish(ctx, msg))
	}
	var t ticket
	if cacheable {
		t = n.writing(key, h)
	}
	arg := "put"
	if fast {
		arg = "fast"
	}
	reply, err := lc.m.c.scripts.run(ctx, scriptLocalPut, []string{lc.m.name, lc.topic, lc.log},
		k, val, msg, lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx), arg).Result()
	if fast {
		count, _ := reply.(int64)
		isNew = count == 1
		err = lc.wrap(err)
	} else {
		prev, had, err = lc.value(reply, err)
	}
	// When the previous bytes did not decode (ErrCodec), v was stored all
	// the same.
	stored = err == nil || errors.Is(err, ErrCodec)
	if cacheable {
		n.written(t, key, h, v, stored)
	}
	return prev, had, isNew, stored, err
}

// Remove deletes key and returns its value and true, or the zero value and
// false when it was absent, telling the other instances to drop it. With a
// Writer, key then goes to its Delete, present or not (the map may hold
// only some of the source's keys). It returns the errors of Put.
func (lc *LocalCachedMap[K, V]) Remove(ctx context.Context, key K) (V, bool, error) {
	prev, had, err := lc.removeMap(ctx, key)
	if err == nil && lc.w != nil {
		if werr := lc.w.wrote(ctx, nil, []K{key}, lc.evict); werr != nil {
			return prev, had, werr
		}
	}
	return prev, had, err
}

func (lc *LocalCachedMap[K, V]) removeMap(ctx context.Context, key K) (V, bool, error) {
	var zero V
	n, err := lc.ready(ctx)
	if err != nil {
		return zero, false, err
	}
	k, err := lc.m.encodeKey(key)
	if err != nil {
		return zero, false, err
	}
	h := keyHash(k)
	cacheable := lc.cacheable(key)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		prev, had := n.remove(key, h)
		return prev, had, lc.wrap(lc.publish(ctx, lc.invalidateMsg(h)))
	}
	var t ticket
	if cacheable {
		t = n.writing(key, h)
	}
	reply, rerr := lc.m.c.scripts.run(ctx, scriptLocalRemove, []string{lc.m.name, lc.topic, lc.log},
		k, lc.invalidateMsg(h), lc.mode(), lc.nowMS(), lc.logMember(h), lc.publishArg(ctx)).Result()
	prev, had, err := lc.value(reply, rerr)
	if cacheable {
		n.written(t, key, h, zero, false)
	}
	return prev, had, lc.wrap(err)
}

// FastRemove deletes keys without reading them and returns how many were
// present (Redisson's fastRemove), telling the other instances in one
// message. No keys is no call and 0. With a Writer, keys then go to its
// Delete, present or not. It returns the errors of Map.FastRemove,
// ErrInvalidOption and ErrHandleClosed, and those of Put with a Writer.
func (lc *LocalCachedMap[K, V]) FastRemove(ctx context.Context, keys ...K) (int64, error) {
	count, err := lc.fastRemove(ctx, keys)
	if err == nil && lc.w != nil && len(keys) > 0 {
		if werr := lc.w.wrote(ctx, nil, keys, lc.evict); werr != nil {
			return count, werr
		}
	}
	return count, err
}

func (lc *LocalCachedMap[K, V]) fastRemove(ctx context.Context, keys []K) (int64, error) {
	n, err := lc.ready(ctx)
	if err != nil || len(keys) == 0 {
		return 0, err
	}
	var zero V
	hashes := make([][16]byte, len(keys))
	args := []any{nil, lc.mode(), lc.nowMS(), lc.publishArg(ctx)}
	for i, key := range keys {
		k, err := lc.m.encodeKey(key)
		if err != nil {
			return 0, err
		}
		hashes[i] = keyHash(k)
		args = append(args, k, lc.logMember(hashes[i]))
	}
	args[0] = lc.invalidateMsg(hashes...)
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		var count int64
		for i, key := range keys {
			if _, had := n.remove(key, hashes[i]); had {
				count++
			}
		}
		return count, lc.wrap(lc.publish(ctx, args[0].([]byte)))
	}
	tickets := lc.writingAll(n, keys, hashes)
	count, err := lc.m.c.scripts.run(ctx, scriptLocalFastRemove, []string{lc.m.name, lc.topic, lc.log}, args...).Int64()
	for i, key := range keys {
		if tickets[i] != nil {
			n.written(*tickets[i], key, hashes[i], zero, false)
		}
	}
	return count, lc.wrap(err)
}

// PutAll stores every entry of entries in one script call that publishes
// one message naming them all. An empty map is no call. With a Writer,
// the entries then go to it. It returns the errors of Put.
func (lc *LocalCachedMap[K, V]) PutAll(ctx context.Context, entries map[K]V) error {
	err := lc.putAll(ctx, entries)
	if err == nil && lc.w != nil && len(entries) > 0 {
		return lc.w.wrote(ctx, entries, nil, lc.evict)
	}
	return err
}

func (lc *LocalCachedMap[K, V]) putAll(ctx context.Context, entries map[K]V) error {
	n, err := lc.ready(ctx)
	if err != nil || len(entries) == 0 {
		return err
	}
	keys := make([]K, 0, len(entries))
	hashes := make([][16]byte, 0, len(entries))
	args := []any{nil, lc.mode(), lc.nowMS(), lc.publishArg(ctx)}
	var update []byte
	if lc.opts.SyncStrategy == SyncUpdate {
		update = lc.msgHead(2)
	}
	for key, v := range entries {
		k, err := lc.m.encodeKey(key)
		if err != nil {
			return err
		}
		val, err := lc.m.encode(v)
		if err != nil {
			return err
		}
		h := keyHash(k)
		keys, hashes = append(keys, key), append(hashes, h)
		args = append(args, k, val, lc.logMember(h))
		if update != nil {
			update = appendUpdate(update, k, val)
		}
	}
	if update != nil {
		args[0] = update
	} else {
		args[0] = lc.invalidateMsg(hashes...)
	}
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		for i, key := range keys {
			if !lc.cacheable(key) {
				return lc.m.codecErr(fmt.Sprintf("key %v is not comparable", key))
			}
			n.store(key, hashes[i], entries[key])
		}
		return lc.wrap(lc.publish(ctx, args[0].([]byte)))
	}
	tickets := lc.writingAll(n, keys, hashes)
	err = lc.m.c.scripts.run(ctx, scriptLocalPutAll, []string{lc.m.name, lc.topic, lc.log}, args...).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	for i, key := range keys {
		if tickets[i] != nil {
			n.written(*tickets[i], key, hashes[i], entries[key], err == nil)
		}
	}
	return lc.wrap(err)
}

func (lc *LocalCachedMap[K, V]) writingAll(n *near[K, V], keys []K, hashes [][16]byte) []*ticket {
	tickets := make([]*ticket, len(keys))
	for i, key := range keys {
		if lc.cacheable(key) {
			t := n.writing(key, hashes[i])
			tickets[i] = &t
		}
	}
	return tickets
}

// Delete deletes the map in Redis (and its updates log) and tells every
// instance to clear its local cache (Redisson's clear and delete, one
// script call); it reports whether the map existed. It returns
// ErrEmptyName, ErrInvalidName, ErrInvalidOption, ErrClientClosed,
// ErrHandleClosed, or a Redis error.
func (lc *LocalCachedMap[K, V]) Delete(ctx context.Context) (bool, error) {
	n, err := lc.ready(ctx)
	if err != nil {
		return false, err
	}
	var req [16]byte
	_, _ = rand.Read(req[:])
	msg := append(append(lc.msgHead(0), req[:]...), 0)
	n.clear()
	if lc.opts.StoreMode == StoreLocalCacheOnly {
		return true, lc.wrap(lc.publish(ctx, msg))
	}
	existed, err := lc.m.c.scripts.run(ctx, scriptLocalDelete, []string{lc.m.name, lc.topic, lc.log},
		msg, lc.publishArg(ctx)).Int64()
	n.clear()
	return existed == 1, lc.wrap(err)
}

// ClearLocalCache empties the local cache of every instance of the map,
// this one at once (Redisson's clearLocalCache): it publishes a clear
// request and waits until as many instances acknowledged as Redis counted
// receivers, less this one, or 10 seconds passed (a receiver that never
// acknowledges, such as a PSUBSCRIBE client, makes it wait that long, as in
// Redisson). It returns the context's error if ctx ends first, and
// ErrEmptyName, ErrInvalidName, ErrInvalidOption, ErrClientClosed,
// ErrHandleClosed, or a Redis error.
func (lc *LocalCachedMap[K, V]) ClearLocalCache(ctx context.Context) error {
	n, err := lc.ready(ctx)
	if err != nil {
		return err
	}
	n.clear()
	var req [16]byte
	_, _ = rand.Read(req[:])
	counter := lc.m.name + ":clear:" + hex.EncodeToString(req[:])
	if err := lc.m.c.rdb.Set(ctx, counter, 0, time.Minute).Err(); err != nil {
		return lc.wrap(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		lc.m.c.rdb.Del(ctx, counter)
	}()
	receivers, err := lc.publishCount(ctx, append(append(lc.msgHead(0), req[:]...), 1))
	if err != nil {
		return lc.wrap(err)
	}
	n.mu.Lock()
	if lc.subscribed {
		receivers-- // this client's own subscription
	}
	n.mu.Unlock()
	deadline := time.Now().Add(clearAckWait)
	for wait := time.Millisecond; receivers > 0 && time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
		acks, err := lc.m.c.rdb.Get(ctx, counter).Int64()
		if err == nil && acks >= receivers {
			return nil
		}
		select {
		case <-ctx.Done():
			return objectErrorf(localCacheKind, lc.m.name, "clear local cache: %w", ctx.Err())
		case <-lc.m.c.closing:
			return ErrClientClosed
		case <-time.After(wait):
		}
	}
	return nil
}

// The wire side: messages, log members and script arguments.

// msgHead starts a message of type typ (0 clear, 1 invalidate, 2 update)
// from this instance.
func (lc *LocalCachedMap[K, V]) msgHead(typ byte) []byte {
	return append([]byte{typ}, lc.id[:]...)
}

func (lc *LocalCachedMap[K, V]) invalidateMsg(hashes ...[16]byte) []byte {
	b := binary.BigEndian.AppendUint32(lc.msgHead(1), uint32(len(hashes)))
	for _, h := range hashes {
		b = append(b, h[:]...)
	}
	return b
}

func (lc *LocalCachedMap[K, V]) updateMsg(k, val []byte) []byte {
	return appendUpdate(lc.msgHead(2), k, val)
}

func appendUpdate(b, k, val []byte) []byte {
	b = append(binary.BigEndian.AppendUint32(b, uint32(len(k))), k...)
	return append(binary.BigEndian.AppendUint32(b, uint32(len(val))), val...)
}

// logMember is an updates log member: the key hash, ':' and 8 random bytes.
func (lc *LocalCachedMap[K, V]) logMember(h [16]byte) []byte {
	b := append(h[:], ':')
	var r [8]byte
	_, _ = rand.Read(r[:])
	return append(b, r[:]...)
}

// mode is the notify mode of the write scripts.
func (lc *LocalCachedMap[K, V]) mode() string {
	switch {
	case lc.opts.SyncStrategy == SyncNone:
		return "0"
	case lc.opts.ReconnectionStrategy == ReconnectLoad:
		return "2"
	}
	return "1"
}

func (lc *LocalCachedMap[K, V]) nowMS() string { return strconv.FormatInt(time.Now().UnixMilli(), 10) }

func (lc *LocalCachedMap[K, V]) publishArg(ctx context.Context) any {
	return lc.m.c.pubsub.publishArg(ctx)
}

// publish sends msg on the map's channel (StoreLocalCacheOnly's writes),
// unless SyncStrategy is SyncNone.
func (lc *LocalCachedMap[K, V]) publish(ctx context.Context, msg []byte) error {
	if lc.opts.SyncStrategy == SyncNone {
		return nil
	}
	_, err := lc.publishCount(ctx, msg)
	return err
}

func (lc *LocalCachedMap[K, V]) publishCount(ctx context.Context, msg []byte) (int64, error) {
	if lc.publishArg(ctx) == "spublish" {
		return lc.m.c.rdb.SPublish(ctx, lc.topic, msg).Result()
	}
	return lc.m.c.rdb.Publish(ctx, lc.topic, msg).Result()
}
