package redisson

import (
	"time"
)

// EvictionPolicy chooses which entries a LocalCachedMap's local cache drops
// when it holds CacheSize entries (Redisson's LocalCachedMapOptions
// EvictionPolicy).
type EvictionPolicy int

const (
	// EvictionNone evicts nothing: with a CacheSize, values are no longer
	// added once the cache is full (the cached ones stay until invalidated
	// or expired). It is the default, as in Redisson.
	EvictionNone EvictionPolicy = iota
	// EvictionLRU drops the least recently read entry
	// (github.com/hashicorp/golang-lru/v2).
	EvictionLRU
	// EvictionLFU drops by frequency of use: otter's W-TinyLFU
	// (github.com/maypok86/otter/v2), which admits a new entry only if it is
	// likely to be read more often than the one it would evict.
	EvictionLFU
)

// SyncStrategy chooses what a LocalCachedMap's write tells the map's other
// instances (Redisson's SyncStrategy).
type SyncStrategy int

const (
	// SyncInvalidate publishes the written keys' hashes: the other instances
	// drop their copies and read the new values from Redis when next asked.
	// It is the default, as in Redisson.
	SyncInvalidate SyncStrategy = iota
	// SyncUpdate publishes the written keys and values: the other instances
	// cache the new values at once. Removals still invalidate.
	SyncUpdate
	// SyncNone publishes nothing: other instances keep serving what they
	// cached until it expires locally (TimeToLive, MaxIdle).
	SyncNone
)

// ReconnectionStrategy chooses what a LocalCachedMap does with its local
// cache when messages may have been missed: its pub/sub connection failed
// or was replaced (Redisson's ReconnectionStrategy).
type ReconnectionStrategy int

const (
	// ReconnectClear clears the local cache when the loss is detected and
	// serves nothing from it until the subscription is confirmed again. It
	// is the default (Redisson's default is NONE).
	ReconnectClear ReconnectionStrategy = iota
	// ReconnectLoad keeps the local cache but serves nothing from it until,
	// after the subscription is confirmed again, the keys written meanwhile
	// (Redisson's updates log, redisson__cache_updates_log:{name}) have been
	// dropped; after an outage longer than the log's 10 minutes, or when the
	// log cannot be read, it clears the cache instead. Writes of a map with
	// this strategy add to the log, as Redisson's do.
	ReconnectLoad
	// ReconnectNone does nothing: after a loss the local cache may serve
	// values other instances changed meanwhile, until they are written
	// again or expire locally (Redisson's NONE).
	ReconnectNone
)

// StoreMode chooses where a LocalCachedMap keeps its entries (Redisson's
// StoreMode).
type StoreMode int

const (
	// StoreLocalCacheRedis keeps every entry in Redis and caches what this
	// instance reads or writes. It is the default.
	StoreLocalCacheRedis StoreMode = iota
	// StoreLocalCacheOnly keeps entries only in the local caches of the
	// instances: writes publish the change (with SyncUpdate, the value) to
	// the other instances and nothing is stored in Redis; reads never go to
	// Redis. The reconnection strategy does not apply: nothing can be
	// reloaded, and changes published while an instance was disconnected
	// are missing from its cache.
	StoreLocalCacheOnly
)

// updateLogWindow is how far back the updates log reaches (Redisson's
// default cacheUpdateLogTime): older entries are trimmed on a reconnect.
const updateLogWindow = 10 * time.Minute

// clearAckWait bounds how long ClearLocalCache waits for acknowledgements.
const clearAckWait = 10 * time.Second

// LocalCacheOptions configures a LocalCachedMap, with Redisson's names. The
// zero value is an unbounded cache with no expiry, SyncInvalidate,
// ReconnectClear and StoreLocalCacheRedis.
type LocalCacheOptions struct {
	// CacheSize bounds the number of locally cached entries; 0 is no bound.
	CacheSize int
	// EvictionPolicy chooses the entries dropped at CacheSize (default
	// EvictionNone).
	EvictionPolicy EvictionPolicy
	// TimeToLive drops a locally cached entry this long after it was cached
	// (0: never). It does not expire the entry in Redis.
	TimeToLive time.Duration
	// MaxIdle drops a locally cached entry not read for this long (0:
	// never).
	MaxIdle time.Duration
	// SyncStrategy chooses what writes tell the other instances (default
	// SyncInvalidate).
	SyncStrategy SyncStrategy
	// ReconnectionStrategy chooses what happens to the local cache when
	// messages may have been missed (default ReconnectClear).
	ReconnectionStrategy ReconnectionStrategy
	// StoreMode chooses where entries live (default StoreLocalCacheRedis).
	StoreMode StoreMode
	// ServeStaleFor, when positive, keeps serving the locally cached values
	// for at most this long after the loss of the connection carrying the
	// map's messages is detected, instead of serving nothing from the
	// cache until it is confirmed again (0, the default): reads answer
	// without Redis while it is unreachable, each reporting that its value
	// may be stale (GetWithInfo). Nothing read from Redis during the loss
	// is cached, and when the subscription is confirmed again the
	// ReconnectionStrategy applies as without it (ReconnectClear empties
	// the cache). No effect with ReconnectNone, which serves on anyway.
	ServeStaleFor time.Duration
}

func (o LocalCacheOptions) check() error {
	switch {
	case o.CacheSize < 0:
		return invalidOption(ErrInvalidOption, "CacheSize", o.CacheSize, "at least 0")
	case o.TimeToLive < 0:
		return invalidOption(ErrInvalidOption, "TimeToLive", o.TimeToLive, "at least 0")
	case o.MaxIdle < 0:
		return invalidOption(ErrInvalidOption, "MaxIdle", o.MaxIdle, "at least 0")
	case o.ServeStaleFor < 0:
		return invalidOption(ErrInvalidOption, "ServeStaleFor", o.ServeStaleFor, "at least 0")
	case o.EvictionPolicy < EvictionNone || o.EvictionPolicy > EvictionLFU:
		return invalidOption(ErrInvalidOption, "EvictionPolicy", int(o.EvictionPolicy), "one of the EvictionPolicy constants")
	case o.SyncStrategy < SyncInvalidate || o.SyncStrategy > SyncNone:
		return invalidOption(ErrInvalidOption, "SyncStrategy", int(o.SyncStrategy), "one of the SyncStrategy constants")
	case o.ReconnectionStrategy < ReconnectClear || o.ReconnectionStrategy > ReconnectNone:
		return invalidOption(ErrInvalidOption, "ReconnectionStrategy", int(o.ReconnectionStrategy), "one of the ReconnectionStrategy constants")
	case o.StoreMode < StoreLocalCacheRedis || o.StoreMode > StoreLocalCacheOnly:
		return invalidOption(ErrInvalidOption, "StoreMode", int(o.StoreMode), "one of the StoreMode constants")
	}
	return nil
}
