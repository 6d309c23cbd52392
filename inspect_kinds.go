package redisson

import "strings"

// The naming half of ListObjects: which object and kind a key is, from
// docs/keys.md's naming, the key's Redis type and its shape (inspect_key).

// The key prefixes of docs/keys.md: prefixName(prefix, name).
var prefixKinds = []struct {
	prefix string
	kind   ObjectKind
}{
	{"redisson_lock_token:", KindFencingCounter},
	{"redisson_lock_queue:", KindFairQueue},
	{"redisson_lock_timeout:", KindFairDeadlines},
	{"redisson_lock_alive:", KindFairLiveness},
	{"redisson_delay_queue_timeout:", KindDelayDeadlines},
	{"redisson_delay_queue:", KindDelayPending},
	{"redisson__timeout__set:", KindMapCacheExpiry},
	{"redisson__idle__set:", KindMapCacheIdle},
	{"redisson__map_cache__last_access__set:", KindMapCacheAccess},
	{"redisson__cache_updates_log:", KindLocalCacheUpdates},
	{"redisson_bqs:", KindQueueCapacity},
	{"redisson_queue_inflight:", KindQueueInFlight},
	{"redisson_bqueue_inflight:", KindQueueInFlight},
	{"redisson_queue_drain:", KindQueueDrain},
	{"redisson_unlock_latch:", KindBookkeeping},
	{"redisson_sc_queue:", KindBookkeeping},
	{"redisson_sc_waiters:", KindBookkeeping},
	{"redisson_sc_call:", KindBookkeeping},
	{"redisson_permit_latch:", KindBookkeeping},
	{"redisson_countdownlatch_call:", KindBookkeeping},
	{"redisson_al_call:", KindBookkeeping},
	{"redisson_ad_call:", KindBookkeeping},
	{"redisson_adder_call:", KindBookkeeping},
	{"redisson_rq_delayed:", KindReliableDelayed},
	{"redisson_rq_jobs:", KindReliableDelayed},
	{"redisson_rq_dead:", KindDeadLetters},
	{"redisson_rq_partitions:", KindReliablePartitions},
	{"redisson_rq_dedup:", KindBookkeeping},
	{"redisson_rq_call:", KindBookkeeping},
	{"redisson_election:", KindElection},
	{"redisson_scheduler:", KindScheduler},
	{"redisson_scheduler_state:", KindSchedulerState},
	{"redisson_scheduler_token:", KindSchedulerState},
	{"redisson_scheduler_run:", KindSchedulerState},
}

// kindOf names the object and kind of key, whose Redis type is typ and
// whose hash shape (inspect_key) is shape.
func kindOf(key, typ, shape string) (ObjectKind, string) {
	for _, p := range prefixKinds {
		if rest, ok := strings.CutPrefix(key, p.prefix); ok {
			if p.kind == KindQueueInFlight && typ == "zset" {
				return KindQueueInFlightRegistry, tagOf(rest)
			}
			return p.kind, tagOf(rest)
		}
	}
	if strings.Contains(key, ":rwlock_timeout:") && typ == "string" {
		return KindReadLease, tagOf(key)
	}
	if name, ok := clearCounterName(key); ok && typ == "string" {
		return KindLocalCacheClear, name
	}
	if strings.HasPrefix(key, "{") {
		if k, ok := suffixKind(key, typ); ok {
			return k, tagOf(key)
		}
	}
	switch typ {
	case "hash":
		switch shape {
		case "mapcache":
			return KindMapCache, key
		case "lock":
			return KindLock, key
		case "rwlock":
			return KindReadWriteLock, key
		case "ratelimiter":
			return KindRateLimiter, key
		}
		return KindMap, key
	case "string":
		switch shape {
		case "fixedwindow":
			return KindFixedWindowLimiter, key
		case "gcra":
			return KindGCRALimiter, key
		}
		return KindValue, key
	case "list":
		return KindList, key
	case "set":
		return KindSet, key
	case "zset":
		if shape == "setcache" {
			return KindSetCache, key
		}
		return KindSortedSet, key
	case "stream":
		return KindStream, key
	}
	return KindOther, key
}

// suffixKind recognises the keys suffixName(name, suffix) builds.
func suffixKind(key, typ string) (ObjectKind, bool) {
	i := strings.IndexByte(key, '}')
	if i < 0 || !strings.HasPrefix(key[i+1:], ":") {
		return "", false
	}
	suffix := key[i+2:]
	switch {
	case suffix == "timeout" && typ == "zset":
		return KindHeldPermits, true
	case suffix == "redisson_options" && typ == "hash":
		return KindMapCacheOptions, true
	case suffix == "config" && typ == "hash":
		return KindBloomConfig, true
	case suffix == "allocation" && typ == "string":
		return KindIDAllocation, true
	case suffix == "adder-flushed" && typ == "string":
		return KindAdderFlushed, true
	case suffix == "value" || strings.HasPrefix(suffix, "value:") || suffix == "permits" || strings.HasPrefix(suffix, "permits:"):
		return KindRateLimiterState, true
	case (typ == "list" || typ == "set") && isMultimapID(suffix):
		return KindMultimapValues, true
	}
	return "", false
}

// isMultimapID reports whether s is a multimap id: 22 characters of
// standard Base64 (multimapID).
func isMultimapID(s string) bool {
	if len(s) != 22 {
		return false
	}
	for j := 0; j < len(s); j++ {
		c := s[j]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '+' || c == '/') {
			return false
		}
	}
	return true
}

// clearCounterName returns the map name of a ClearLocalCache counter
// name:clear:<request id>, the id being 32 hex digits.
func clearCounterName(key string) (string, bool) {
	i := strings.LastIndex(key, ":clear:")
	if i <= 0 {
		return "", false
	}
	id := key[i+len(":clear:"):]
	if len(id) != 32 {
		return "", false
	}
	for j := 0; j < len(id); j++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(id[j])) {
			return "", false
		}
	}
	return key[:i], true
}

// mapCacheCompanions returns the keys a MapCache called key would have
// besides its hash, those of them in key's slot (a script may only name
// keys of one slot on a Cluster), for inspect_key.
func mapCacheCompanions(key string) []string {
	slot := hashSlot(key)
	out := []string{key}
	for _, k := range mapCacheKeys(key)[mcTimeout:mcCreated] {
		if hashSlot(k) == slot {
			out = append(out, k)
		}
	}
	return out
}

// tagOf returns the object name of a key built by prefixName or
// suffixName: the hash tag's content, or the key past the prefix when it
// has none.
func tagOf(rest string) string {
	i := strings.IndexByte(rest, '{')
	j := strings.IndexByte(rest, '}')
	if i < 0 || j < i {
		return rest
	}
	return rest[i+1 : j]
}

// splitIdentityKey splits a keyed limiter's identityKey(name, key) at its
// last ":{" into the limiter's name and the identity.
func splitIdentityKey(k string) (name, key string) {
	i := strings.LastIndex(k, ":{")
	if i < 0 || !strings.HasSuffix(k, "}") || i+2 > len(k)-1 {
		return k, ""
	}
	return k[:i], k[i+2 : len(k)-1]
}
