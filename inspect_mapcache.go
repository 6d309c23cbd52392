package redisson

import (
	"context"
	"encoding/binary"
	"math"
	"strconv"
	"time"
)

// MapCacheInfo is what Redis holds of a MapCache (Redisson's RMapCache),
// one page of entries at a time, read by Client.InspectMapCache.
type MapCacheInfo struct {
	Name string `json:"name"`
	// Size is the number of entries stored, expired ones not yet evicted
	// included.
	Size int64 `json:"size"`
	// Entries is one HSCAN page, decoded with the codec asked for.
	Entries []MapCacheEntry `json:"entries"`
	// Cursor continues the scan in the next InspectMapCache call; 0 when
	// the page was the last.
	Cursor uint64 `json:"cursor"`
	// ServerTime is the Redis server's clock when the page was read.
	ServerTime time.Time `json:"server_time"`
}

// MapCacheEntry is one entry of a MapCacheInfo page.
type MapCacheEntry struct {
	Key   any `json:"key"`
	Value any `json:"value"`
	// TTL is the time left until the entry expires
	// (redisson__timeout__set:{name}); 0 for an entry without one.
	TTL time.Duration `json:"ttl"`
	// MaxIdle is the entry's max idle time, IdleLeft the time left until
	// it expires unread (redisson__idle__set:{name}); 0 without.
	MaxIdle  time.Duration `json:"max_idle"`
	IdleLeft time.Duration `json:"idle_left"`
	// Expired reports an entry past its TTL or idle deadline on the
	// server's clock, still stored until a call or the eviction pass
	// meets it.
	Expired bool `json:"expired"`
}

// InspectMapCache reads the MapCache called name: its size and one page of
// about count entries from HSCAN's cursor (0 to start; MapCacheInfo.Cursor
// continues), keys and values decoded with codec as InspectBucket decodes,
// each with its remaining TTL and idle time. One round trip per page,
// O(count × log n) on the server. It returns ErrNotFound when the map
// does not exist, ErrInvalidBatch for a count below 1, an error matching
// ErrCodec when an entry does not decode, and the errors of
// InspectSemaphore.
func (c *Client) InspectMapCache(ctx context.Context, name string, codec Codec, cursor uint64, count int) (MapCacheInfo, error) {
	const kind = mapCacheKind
	keys := mapCacheKeys(name)[mcHash:mcLastAccess]
	if err := c.checkObject(name, c.nameError(kind, name, keys...)); err != nil {
		return MapCacheInfo{}, err
	}
	if count < 1 {
		return MapCacheInfo{}, objectErr(kind, name, invalidOption(ErrInvalidBatch, "count", count, "at least 1"))
	}
	res, err := c.scripts.run(ctx, scriptInspectMapCache, keys, strconv.FormatUint(cursor, 10), count).Slice()
	if err != nil {
		return MapCacheInfo{}, objectErr(kind, name, err)
	}
	if len(res) != 5 {
		return MapCacheInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	}
	t, _ := res[0].(string)
	size, ok1 := res[1].(int64)
	next, _ := res[2].(string)
	page, ok2 := res[3].([]any)
	now, ok3 := res[4].(int64)
	switch {
	case !ok1 || !ok2 || !ok3:
		return MapCacheInfo{}, objectErrorf(kind, name, "%w: inspect returned %v", ErrUnexpectedReply, res)
	case t == "none":
		return MapCacheInfo{}, objectErrorf(kind, name, "%w", ErrNotFound)
	}
	info := MapCacheInfo{Name: name, Size: size, Entries: []MapCacheEntry{}, ServerTime: time.UnixMilli(now)}
	info.Cursor, _ = strconv.ParseUint(next, 10, 64)
	for i := 0; i+3 < len(page); i += 4 {
		k, _ := page[i].(string)
		raw, _ := page[i+1].(string)
		val, ok := mapCacheValue([]byte(raw))
		if !ok {
			return MapCacheInfo{}, objectErrorf(kind, name, "%w: entry of %d bytes is shorter than its header says", ErrCodec, len(raw))
		}
		e := MapCacheEntry{MaxIdle: time.Duration(math.Float64frombits(binary.LittleEndian.Uint64([]byte(raw)))) * time.Millisecond}
		if e.Key, err = c.decodeAny(codec, kind, name, []byte(k)); err != nil {
			return MapCacheInfo{}, err
		}
		if e.Value, err = c.decodeAny(codec, kind, name, val); err != nil {
			return MapCacheInfo{}, err
		}
		for j, left := range []*time.Duration{&e.TTL, &e.IdleLeft} {
			s, ok := page[i+2+j].(string)
			if !ok {
				continue
			}
			at, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return MapCacheInfo{}, objectErrorf(kind, name, "%w: score %q", ErrUnexpectedReply, s)
			}
			if *left = time.Duration(int64(at)-now) * time.Millisecond; *left <= 0 {
				*left, e.Expired = 0, true
			}
		}
		info.Entries = append(info.Entries, e)
	}
	return info, nil
}
