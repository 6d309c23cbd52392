-- permit_acquire: take one permit of a Redisson-compatible
-- RPermitExpirableSemaphore.
--
-- KEYS[1]  available permits (string; missing = 0; may be negative)
-- KEYS[2]  held permits ({name}:timeout zset): member = the permit id's 16 raw
--          bytes, score = absolute expiry in ms since the epoch, or
--          922337203685477 for a permit that never expires
-- KEYS[3]  channel redisson_sc:{name}: the number of available permits is
--          published when expired permits come back
-- ARGV[1]  permit id, 16 raw bytes, chosen by the caller before its first send
-- ARGV[2]  lease in ms; 0 = the permit never expires
-- ARGV[3]  publish command ('publish' or 'spublish')
--
-- Returns {1, available} when the permit is held (available = permits left),
-- or {0, wait} when none is free: wait = ms until the nearest held permit
-- expires, -1 when no held permit expires.
--
-- Clock: the Redis server's (TIME). Permits whose expiry has passed are first
-- moved back to KEYS[1] (as Redisson does on every call).
-- Idempotent per call: a resend after a lost reply finds ARGV[1] held and only
-- reports it. Reads come first: a key of the wrong type fails the script
-- before anything is written.
--
-- prelude: permits
--          (uses its NONEXPIRING, notPermits, isPermits, giveBack, leaseExpiry)
local raw = redis.call('get', KEYS[1])
local mine = redis.call('zscore', KEYS[2], ARGV[1])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
local available = tonumber(raw or '0')
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if expired > 0 then
    available = giveBack(expired, ARGV[3])
end
if mine and tonumber(mine) > now then
    return {1, available}
end
if available > 0 then
    redis.call('decr', KEYS[1])
    redis.call('zadd', KEYS[2], leaseExpiry(now, ARGV[2]), ARGV[1])
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    return {1, available - 1}
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[2] and tonumber(first[2]) < NONEXPIRING then
    return {0, tonumber(first[2]) - now}
end
return {0, -1}
