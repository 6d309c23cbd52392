package redisson

import (
	"context"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// The inspection API, objects other than locks (see inspect.go): one
// read-only script each, plus the channel's subscriber count where the
// object has a channel. An object none of whose keys exist is ErrNotFound.

// SemaphoreInfo is what Redis holds of a Semaphore (Redisson's RSemaphore),
// read by Client.InspectSemaphore.
type SemaphoreInfo struct {
	Name string `json:"name"`
	// Permits is the number of available permits.
	Permits int64 `json:"permits"`
	// Reserved is the number of permits the waiters of this library
	// queued for the semaphore wait for (redisson_sc_waiters:{name},
	// places whose deadline passed included until a call drops them); 0
	// when none waits.
	Reserved int64 `json:"reserved"`
	// Subscribers counts the connections listening on redisson_sc:{name}.
	Subscribers int64 `json:"subscribers"`
}

// PermitSemaphoreInfo is what Redis holds of a PermitExpirableSemaphore
// (Redisson's RPermitExpirableSemaphore), read by
// Client.InspectPermitExpirableSemaphore.
type PermitSemaphoreInfo struct {
	Name string `json:"name"`
	// Available is the stored count of available permits; held permits
	// whose lease has ended (HeldPermit.Expired) are not in it yet: the next
	// call of a semaphore client returns them.
	Available int64 `json:"available"`
	// HeldCount is the number of held permits, Held the first
	// InspectQueueLimit of them, soonest expiry first.
	HeldCount int64        `json:"held_count"`
	Held      []HeldPermit `json:"held"`
	// Subscribers counts the connections listening on redisson_sc:{name}.
	Subscribers int64 `json:"subscribers"`
	// ServerTime is the Redis server's clock when the state was read.
	ServerTime time.Time `json:"server_time"`
}

// HeldPermit is one held permit of a PermitExpirableSemaphore.
type HeldPermit struct {
	// ID is the permit id, 32 hex digits (as Acquire returns it).
	ID string `json:"id"`
	// Expires is when its lease ends; zero for a permit without lease.
	Expires time.Time `json:"expires"`
	// Expired reports a lease ended on the server's clock.
	Expired bool `json:"expired"`
}

// LatchInfo is what Redis holds of a CountDownLatch (Redisson's
// RCountDownLatch), read by Client.InspectCountDownLatch.
type LatchInfo struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
	// Subscribers counts the connections listening on the latch's channel
	// redisson_countdownlatch__channel__{name}: the waiters' processes.
	Subscribers int64 `json:"subscribers"`
}

// RateLimiterInfo is what Redis holds of a RateLimiter (Redisson's
// RRateLimiter), read by Client.InspectRateLimiter.
type RateLimiterInfo struct {
	Name   string            `json:"name"`
	Config RateLimiterConfig `json:"config"`
	// Available is the overall scope's stored count ({name}:value); -1 when
	// the key does not exist (no grant in the window, or a PerClient
	// limiter, whose counts are per client).
	Available int64 `json:"available"`
	// Grants and Permits are the overall scope's grants logged in the
	// current window ({name}:permits) and the permits they granted
	// (Permits -1: a log entry not in Redisson's format).
	Grants  int64 `json:"grants"`
	Permits int64 `json:"permits"`
	// TTL is the config's remaining life with a keep-alive; 0 without.
	TTL time.Duration `json:"ttl"`
}

// BucketInfo is what Redis holds of a Bucket, read by Client.InspectBucket.
type BucketInfo struct {
	Name string `json:"name"`
	// Value is the value decoded with the codec asked for (see
	// Client.InspectBucket); Size is the stored value's length in bytes.
	Value any `json:"value"`
	Size  int `json:"size"`
	// TTL is the remaining time to live; 0 with NoExpiry for a value
	// without one.
	TTL      time.Duration `json:"ttl"`
	NoExpiry bool          `json:"no_expiry"`
}

// MapInfo is what Redis holds of a Map, one page of entries at a time,
// read by Client.InspectMap.
type MapInfo struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
	// Entries is one HSCAN page, decoded with the codec asked for.
	Entries []MapEntry `json:"entries"`
	// Cursor continues the scan in the next InspectMap call; 0 when the
	// page was the last.
	Cursor uint64 `json:"cursor"`
}

// MapEntry is one entry of a MapInfo page.
type MapEntry struct {
	Key   any `json:"key"`
	Value any `json:"value"`
}

// InspectSemaphore reads the Semaphore called name: available permits, the
// permits its queued waiters wait for, and subscribers. Two round trips
// (script, subscriber count), O(1). It returns ErrNotFound when the count
// key does not exist, ErrEmptyName, ErrInvalidName, ErrWrongType (Redis
// unchanged), ErrClientClosed, or a Redis error.
func (c *Client) InspectSemaphore(ctx context.Context, name string) (SemaphoreInfo, error) {
	const kind = semKind
	v, err := c.inspectValue(ctx, kind, name, prefixName("redisson_sc_waiters", name))
	if err != nil {
		return SemaphoreInfo{}, err
	}
	info := SemaphoreInfo{Name: name}
	if info.Permits, err = strconv.ParseInt(v.value, 10, 64); err != nil {
		return SemaphoreInfo{}, objectErrorf(kind, name, "%w: count %q", ErrWrongType, v.value)
	}
	for _, w := range v.hash { // "<permits>:<deadline>"
		n, _, _ := strings.Cut(w, ":")
		k, _ := strconv.ParseInt(n, 10, 64)
		info.Reserved += k
	}
	subs, err := c.numSub(ctx, false, []string{prefixName("redisson_sc", name)})
	if err != nil {
		return SemaphoreInfo{}, objectErr(kind, name, err)
	}
	info.Subscribers = subs[0]
	return info, nil
}

// InspectCountDownLatch reads the CountDownLatch called name: its count and
// its channel's subscribers. Two round trips, O(1). It returns ErrNotFound
// when the latch does not exist (never set, or counted down to zero, which
// deletes it), and the errors of InspectSemaphore.
func (c *Client) InspectCountDownLatch(ctx context.Context, name string) (LatchInfo, error) {
	const kind = latchKind
	v, err := c.inspectValue(ctx, kind, name, "")
	if err != nil {
		return LatchInfo{}, err
	}
	info := LatchInfo{Name: name}
	if info.Count, err = strconv.ParseInt(v.value, 10, 64); err != nil {
		return LatchInfo{}, objectErrorf(kind, name, "%w: count %q", ErrWrongType, v.value)
	}
	channel := "redisson_countdownlatch__channel__{" + name + "}"
	subs, err := c.numSub(ctx, hashSlot(channel) != hashSlot(name), []string{channel})
	if err != nil {
		return LatchInfo{}, objectErr(kind, name, err)
	}
	info.Subscribers = subs[0]
	return info, nil
}

// InspectBucket reads the Bucket called name: its value decoded with codec
// (nil: the client's codec; MsgpackCodec and JSONCodec decode into the
// generic values of encoding/json and msgpack, StringCodec gives a
// string, BytesCodec the bytes), its size in bytes and its TTL. One round
// trip, O(size). It returns ErrNotFound for no value, an error matching
// ErrCodec when the value does not decode with codec, and the errors of
// InspectSemaphore.
func (c *Client) InspectBucket(ctx context.Context, name string, codec Codec) (BucketInfo, error) {
	v, err := c.inspectValue(ctx, bucketKind, name, "")
	if err != nil {
		return BucketInfo{}, err
	}
	info := BucketInfo{Name: name, Size: len(v.value)}
	switch {
	case v.pttl >= 0:
		info.TTL = time.Duration(v.pttl) * time.Millisecond
	default:
		info.NoExpiry = true
	}
	if info.Value, err = c.decodeAny(codec, bucketKind, name, []byte(v.value)); err != nil {
		return BucketInfo{}, err
	}
	return info, nil
}

// InspectPermitExpirableSemaphore reads the PermitExpirableSemaphore called
// name: the available count and the first InspectQueueLimit held permits
// with their expiry (marking those whose lease ended, without returning
// them). Two round trips, O(log n + listed) on the server. It returns
// ErrNotFound when neither key exists, and the errors of InspectSemaphore.
func (c *Client) InspectPermitExpirableSemaphore(ctx context.Context, name string) (PermitSemaphoreInfo, error) {
	const kind = permitKind
	timeouts := suffixName(name, "timeout")
	if err := c.checkObject(name, c.nameError(kind, name, timeouts)); err != nil {
		return PermitSemaphoreInfo{}, err
	}
	res, err := c.scripts.run(ctx, scriptInspectPermits, []string{name, timeouts}, InspectQueueLimit).Slice()
	if err != nil {
		return PermitSemaphoreInfo{}, objectErr(kind, name, err)
	}
	t1, _ := res[0].(string)
	count, _ := res[1].(string)
	t2, _ := res[2].(string)
	held, ok1 := res[3].(int64)
	permits, ok2 := res[4].([]any)
	nowMs, ok3 := res[5].(int64)
	switch {
	case len(res) != 6 || !ok1 || !ok2 || !ok3:
		return PermitSemaphoreInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	case t1 == "none" && t2 == "none":
		return PermitSemaphoreInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	now := time.UnixMilli(nowMs)
	info := PermitSemaphoreInfo{Name: name, HeldCount: held, Held: []HeldPermit{}, ServerTime: now}
	if t1 != "none" {
		if info.Available, err = strconv.ParseInt(count, 10, 64); err != nil {
			return PermitSemaphoreInfo{}, objectErrorf(kind, name, "%w: count %q", ErrWrongType, count)
		}
	}
	for i := 0; i+1 < len(permits); i += 2 {
		id, _ := permits[i].(string)
		p := HeldPermit{ID: hex.EncodeToString([]byte(id))}
		if ms, ok := scoreMs(permits[i+1]); ok && ms != permitNoExpiry {
			p.Expires = time.UnixMilli(ms)
			p.Expired = !p.Expires.After(now)
		}
		info.Held = append(info.Held, p)
	}
	subs, err := c.numSub(ctx, false, []string{prefixName("redisson_sc", name)})
	if err != nil {
		return PermitSemaphoreInfo{}, objectErr(kind, name, err)
	}
	info.Subscribers = subs[0]
	return info, nil
}

// InspectRateLimiter reads the RateLimiter called name: its configuration
// and the overall scope's grants in the current window (by the server's
// clock). One round trip, O(log n + grants in the window). It returns
// ErrNotFound when the limiter has no configuration, an error matching
// ErrUnexpectedReply for a configuration not in Redisson's format, and the
// errors of InspectSemaphore.
func (c *Client) InspectRateLimiter(ctx context.Context, name string) (RateLimiterInfo, error) {
	const kind = rateKind
	keys := []string{name, suffixName(name, "value"), suffixName(name, "permits")}
	if err := c.checkObject(name, c.nameError(kind, name, keys...)); err != nil {
		return RateLimiterInfo{}, err
	}
	res, err := c.scripts.run(ctx, scriptInspectRateLimit, keys).Slice()
	if err != nil {
		return RateLimiterInfo{}, objectErr(kind, name, err)
	}
	if len(res) != 7 {
		return RateLimiterInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	}
	if t, _ := res[0].(string); t == "none" {
		return RateLimiterInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	fields, _ := res[1].([]any)
	cfg := pairs(fields)
	rate, err1 := strconv.ParseInt(cfg["rate"], 10, 64)
	interval, err2 := strconv.ParseInt(cfg["interval"], 10, 64)
	typ, err3 := strconv.Atoi(cfg["type"])
	if err1 != nil || err2 != nil || err3 != nil {
		return RateLimiterInfo{}, objectErrorf(kind, name, "%w: config %v", ErrUnexpectedReply, cfg)
	}
	keep, _ := strconv.ParseInt(cfg["keepAliveTime"], 10, 64)
	info := RateLimiterInfo{Name: name, Available: -1, Config: RateLimiterConfig{
		Type: RateType(typ), Rate: rate, Interval: time.Duration(interval) * time.Millisecond,
		KeepAlive: time.Duration(keep) * time.Millisecond,
	}}
	if s, ok := res[2].(string); ok {
		info.Available, _ = strconv.ParseInt(s, 10, 64)
	}
	info.Grants, _ = res[3].(int64)
	info.Permits, _ = res[4].(int64)
	if pttl, _ := res[5].(int64); pttl > 0 {
		info.TTL = time.Duration(pttl) * time.Millisecond
	}
	return info, nil
}

// InspectMap reads the Map called name: its size and one page of about
// count entries from HSCAN's cursor (0 to start; MapInfo.Cursor
// continues), keys and values decoded with codec as InspectBucket decodes.
// One round trip per page, O(count) on the server, so a large map is never
// read at once. It returns ErrNotFound when the map does not exist,
// ErrInvalidBatch for a count below 1, an error matching ErrCodec when an
// entry does not decode, and the errors of InspectSemaphore.
func (c *Client) InspectMap(ctx context.Context, name string, codec Codec, cursor uint64, count int) (MapInfo, error) {
	const kind = mapKind
	if err := c.checkObject(name, nil); err != nil {
		return MapInfo{}, err
	}
	if count < 1 {
		return MapInfo{}, objectErr(kind, name, invalidOption(ErrInvalidBatch, "count", count, "at least 1"))
	}
	res, err := c.scripts.run(ctx, scriptInspectMap, []string{name}, strconv.FormatUint(cursor, 10), count).Slice()
	if err != nil {
		return MapInfo{}, objectErr(kind, name, err)
	}
	t, _ := res[0].(string)
	size, ok1 := res[1].(int64)
	next, _ := res[3].(string)
	page, ok2 := res[4].([]any)
	switch {
	case len(res) != 5 || !ok1 || !ok2:
		return MapInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	case t == "none":
		return MapInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	info := MapInfo{Name: name, Size: size, Entries: []MapEntry{}}
	info.Cursor, _ = strconv.ParseUint(next, 10, 64)
	for i := 0; i+1 < len(page); i += 2 {
		k, _ := page[i].(string)
		v, _ := page[i+1].(string)
		var e MapEntry
		if e.Key, err = c.decodeAny(codec, kind, name, []byte(k)); err != nil {
			return MapInfo{}, err
		}
		if e.Value, err = c.decodeAny(codec, kind, name, []byte(v)); err != nil {
			return MapInfo{}, err
		}
		info.Entries = append(info.Entries, e)
	}
	return info, nil
}

// valueState is inspect_value's reply.
type valueState struct {
	value string
	pttl  int64
	hash  map[string]string
}

// inspectValue runs inspect_value on a string-valued object (and the hash
// beside it, if any): ErrNotFound when the string key does not exist.
func (c *Client) inspectValue(ctx context.Context, kind, name, hash string) (valueState, error) {
	keys := []string{name}
	if hash != "" {
		keys = append(keys, hash)
	}
	if err := c.checkObject(name, c.nameError(kind, name, keys...)); err != nil {
		return valueState{}, err
	}
	res, err := c.scripts.run(ctx, scriptInspectValue, keys).Slice()
	if err != nil {
		return valueState{}, objectErr(kind, name, err)
	}
	t, _ := res[0].(string)
	pttl, ok1 := res[2].(int64)
	h, ok2 := res[3].([]any)
	switch {
	case len(res) != 4 || !ok1 || !ok2:
		return valueState{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	case t == "none":
		return valueState{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	v, _ := res[1].(string)
	return valueState{value: v, pttl: pttl, hash: pairs(h)}, nil
}

// pairs reads a flat {field, value, ...} reply.
func pairs(flat []any) map[string]string {
	m := make(map[string]string, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		k, _ := flat[i].(string)
		v, _ := flat[i+1].(string)
		m[k] = v
	}
	return m
}

// decodeAny decodes stored bytes for display: StringCodec gives a string,
// BytesCodec the bytes, any other codec (nil: the client's) a generic value.
func (c *Client) decodeAny(codec Codec, kind, name string, data []byte) (any, error) {
	if isNil(codec) {
		codec = c.opts.Codec
	}
	switch codec.(type) {
	case StringCodec, *StringCodec:
		return string(data), nil
	case BytesCodec, *BytesCodec:
		return data, nil
	}
	return decodeValue[any](codec, kind+" "+strconv.Quote(name), data)
}
