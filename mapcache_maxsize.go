package redisson

import (
	"context"
	"strconv"
)

// A MapCache's max size: Redisson's setMaxSize and its eviction modes.

// EvictionMode chooses which entries a MapCache with a max size evicts
// first (Redisson's EvictionMode).
type EvictionMode int

const (
	// EvictLRU evicts the least recently used entries (written or read
	// longest ago). It is the default.
	EvictLRU EvictionMode = iota
	// EvictLFU evicts the least frequently used entries (fewest writes and
	// reads since the max size was set).
	EvictLFU
)

// SetMaxSize limits the map cache to n entries, evicting least recently
// used ones (SetMaxSizeWithMode with EvictLRU). n = 0 removes the limit.
func (mc *MapCache[K, V]) SetMaxSize(ctx context.Context, n int) error {
	return mc.SetMaxSizeWithMode(ctx, n, EvictLRU)
}

// SetMaxSizeWithMode limits the map cache to n entries (0: no limit), as
// Redisson's setMaxSize(n, mode) does, in its options hash. From then on
// every write that takes the map past n evicts the least used entries by
// mode (never the entry just written), publishing them as removed; reads
// and writes record their use. As in Redisson, entries written before the
// limit have no use recorded and are not evicted, so the map may stay above
// n until they are removed or expire; the limit is not applied until the
// next write. It returns ErrInvalidOption for a negative n or an unknown
// mode (Redis unchanged); ErrEmptyName, ErrInvalidName, ErrWrongType,
// ErrClientClosed, or a Redis error otherwise.
func (mc *MapCache[K, V]) SetMaxSizeWithMode(ctx context.Context, n int, mode EvictionMode) (err error) {
	ctx, rec, err := mc.m.open(ctx, opMapCacheSetMaxSize)
	defer func() { rec.end(err, OutcomeOK) }()
	if err != nil {
		return err
	}
	var name string
	switch mode {
	case EvictLRU:
		name = "LRU"
	case EvictLFU:
		name = "LFU"
	default:
		return mc.m.wrap(invalidOption(ErrInvalidOption, "eviction mode", int(mode), "EvictLRU or EvictLFU"))
	}
	if n < 0 {
		return mc.m.wrap(invalidOption(ErrInvalidOption, "max size", n, "at least 0"))
	}
	mc.m.c.trip(ctx, 1)
	return mc.m.wrap(mc.m.c.rdb.HSet(ctx, mc.keys[mcOptions], "max-size", strconv.Itoa(n), "mode", name).Err())
}
