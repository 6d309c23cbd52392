-- mapcache_put: store a MapCache entry with its expiry (Redisson's
-- RMapCache.put, putIfAbsent, fastPut and fastPutIfAbsent, with or without
-- TTL and max idle).
--
-- KEYS     as prelude_mapcache says (map, timeout, idle, last access, options,
--          created, updated, removed, expired)
-- ARGV[1]  publish command
-- ARGV[2]  'put' (store whatever is there) or 'absent' (store only when no
--          live entry is there)
-- ARGV[3]  encoded key
-- ARGV[4]  the entry: header (max idle, length) and encoded value
-- ARGV[5]  TTL in ms, 0 = none
-- ARGV[6]  max idle in ms, 0 = none
--
-- Returns {stored, previous}: stored is 1 when the entry was written, and
-- previous the live entry that was there (false when none). An entry found
-- expired is deleted first (published as expired) and counts as absent. With
-- 'absent' and a live entry, nothing is written but the access (idle
-- deadline, LRU/LFU). Publishes created, or updated with the old value, when
-- listeners are registered; with a max size, evicts the least used entries
-- beyond it (published as removed). Reads come first: a key of the wrong type
-- fails the script before anything is written.
--
-- prelude: mapcache
local key = ARGV[3]
local now = mcNow()
local s = mcState(key)
if mcDead(s, now) then
    mcDrop(key)
    mcPublish(9, key, mcValue(s.entry))
    s.entry = false
    s.timeout, s.idle = false, false
end
local old = s.entry
if ARGV[2] == 'absent' and old then
    mcTouch(key, s, now)
    return {0, old}
end

local ttl, idle = tonumber(ARGV[5]), tonumber(ARGV[6])
if ttl > 0 then
    redis.call('zadd', KEYS[2], now + ttl, key)
elseif s.timeout then
    redis.call('zrem', KEYS[2], key)
end
if idle > 0 then
    redis.call('zadd', KEYS[3], now + idle, key)
elseif s.idle then
    redis.call('zrem', KEYS[3], key)
end
redis.call('hset', KEYS[1], key, ARGV[4])
if s.max > 0 then
    s.entry = ARGV[4]
    s.idle = false -- just set: no idle move
    mcTouch(key, s, now)
    mcTrim(key, s, now)
end
if s.listening then
    if old then
        mcPublish(7, key, mcValue(ARGV[4]), mcValue(old))
    else
        mcPublish(6, key, mcValue(ARGV[4]))
    end
end
return {1, old}
