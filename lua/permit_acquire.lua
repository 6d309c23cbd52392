-- permit_acquire: take one permit of a Redisson-compatible
-- RPermitExpirableSemaphore, first come, first served among this library's
-- waiters: a call takes a permit only when one is available for it beyond
-- those the waiters queued ahead of it want; otherwise a waiting call queues
-- (or confirms its place).
--
-- KEYS[1]  available permits (string; missing = 0; may be negative)
-- KEYS[2]  held permits ({name}:timeout zset): member = the permit id's 16 raw
--          bytes, score = absolute expiry in ms since the epoch, or
--          922337203685477 for a permit that never expires
-- KEYS[3]  channel redisson_sc:{name}: the number of available permits is
--          published when expired permits come back
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:)
-- ARGV[1]  permit id, 16 raw bytes, chosen by the caller before its first send
-- ARGV[2]  lease in ms; 0 = the permit never expires
-- ARGV[3]  publish command ('publish' or 'spublish')
-- ARGV[4]  call id "<client uuid>:<n>": the call's place in the queue
--          (any string for a single try)
-- ARGV[5]  '1' when the call waits (it queues if it takes nothing), '0' for
--          a single try
-- ARGV[6]  queue place lifetime in ms after this try
--
-- Returns {1, available} when the permit is held (available = permits left),
-- or {0, wait} when none is free for this call: wait = ms until the nearest
-- held permit expires, -1 when no held permit expires.
--
-- Clock: the Redis server's (TIME). Permits whose expiry has passed are first
-- moved back to KEYS[1] (as Redisson does on every call).
-- Idempotent per call: a resend after a lost reply finds ARGV[1] held and only
-- reports it; queuing twice keeps the first place. Reads come first: a key of
-- the wrong type fails the script before anything is written.
--
-- prelude: semqueue, permits
--          (uses QUEUE_SCAN, semQueueKeys, semNow, semEntry, semServe;
--          NONEXPIRING, notPermits, isPermits, giveBack, leaseExpiry)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local raw = redis.call('get', KEYS[1])
local mine = redis.call('zscore', KEYS[2], ARGV[1])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
local available = tonumber(raw or '0')
local now = semNow()
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if expired > 0 then
    available = giveBack(expired, ARGV[3])
end
local me = ARGV[4]
if mine and tonumber(mine) > now then
    redis.call('zrem', KEYS[4], me)
    redis.call('hdel', KEYS[5], me)
    return {1, available}
end
local queued = redis.call('zscore', KEYS[4], me) and semEntry(me, now) ~= nil
local ahead = 0
for _, id in ipairs(redis.call('zrange', KEYS[4], 0, QUEUE_SCAN - 1)) do
    if id == me then
        break
    end
    ahead = ahead + (semEntry(id, now) or 0)
end
if available >= ahead + 1 then
    redis.call('decr', KEYS[1])
    redis.call('zadd', KEYS[2], leaseExpiry(now, ARGV[2]), ARGV[1])
    local ttl = redis.call('pttl', KEYS[1])
    if ttl > 0 then
        redis.call('pexpire', KEYS[2], ttl)
    end
    if queued then
        redis.call('zrem', KEYS[4], me)
        redis.call('hdel', KEYS[5], me)
    end
    semServe(available - 1, now, ARGV[3])
    return {1, available - 1}
end
if ARGV[5] == '1' then
    if not queued then
        redis.call('zadd', KEYS[4], now, me)
    end
    redis.call('hset', KEYS[5], me, '1:' .. (now + tonumber(ARGV[6])))
    redis.call('pexpire', KEYS[4], ARGV[6])
    redis.call('pexpire', KEYS[5], ARGV[6])
end
if expired == 0 then
    -- Permits the waiters ahead can take: wake them.
    semServe(available, now, ARGV[3])
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[2] and tonumber(first[2]) < NONEXPIRING then
    return {0, tonumber(first[2]) - now}
end
return {0, -1}
