-- semaphore_acquire: try to take permits of a Redisson-compatible
-- semaphore, first come, first served among this library's waiters: a call
-- takes permits only when enough are available for it and for every waiter
-- queued ahead of it; otherwise a waiting call queues (or confirms its
-- place).
--
-- prelude: semqueue
--          (uses its QUEUE_SCAN, semNow, semEntry, semServe)
--
-- KEYS[1..5]  as in prelude_semqueue: semaphore, queue, waiters, channel,
--             wake channel prefix
-- KEYS[6]     call marker (redisson_sc_call:{name}:<call id>): '1' once this
--             call took its permits, '0' once the call was cancelled
-- ARGV[1]     permits wanted (>= 1)
-- ARGV[2]     call id "<client uuid>:<n>"
-- ARGV[3]     '1' when the call waits (it queues if it takes nothing), '0'
--             for a single try
-- ARGV[4]     call marker lifetime in ms (the retry window)
-- ARGV[5]     queue place lifetime in ms after this try: a waiter that
--             stops trying (its process died) loses its place then
-- ARGV[6]     publish command: 'publish' or 'spublish'
--
-- Returns {1, left} when the permits were taken (left = permits still
-- available; 0 for a resent call), {0, available, queued} when not (queued =
-- 1 when the call holds a place in the queue now), {-1, 0} when the call was
-- cancelled before.
--
-- A queued waiter is served when the waiters ahead of it are; a call that
-- has not queued waits behind everyone queued.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result; queuing twice keeps the first place.
local done = redis.call('get', KEYS[6])
if done then
    if done == '1' then
        return {1, 0}
    end
    return {-1, 0}
end
-- GET first: a key of another type fails here, before any write.
local v = redis.call('get', KEYS[1])
if v then
    v = tonumber(v)
    if not v then
        return redis.error_reply('ERR value is not an integer or out of range')
    end
else
    v = 0
end
local n = tonumber(ARGV[1])
local me = ARGV[2]
local now = semNow()
local queued = redis.call('zscore', KEYS[2], me) and semEntry(me, now) ~= nil
-- The permits the waiters ahead of this call want (everyone queued, for a
-- call that has not queued).
local ahead = 0
for _, id in ipairs(redis.call('zrange', KEYS[2], 0, QUEUE_SCAN - 1)) do
    if id == me then
        break
    end
    ahead = ahead + (semEntry(id, now) or 0)
end
if v >= ahead + n then
    redis.call('decrby', KEYS[1], n)
    redis.call('set', KEYS[6], '1', 'px', ARGV[4])
    if queued then
        redis.call('zrem', KEYS[2], me)
        redis.call('hdel', KEYS[3], me)
    end
    semServe(v - n, now, ARGV[6])
    return {1, v - n}
end
if ARGV[3] ~= '1' then
    semServe(v, now, ARGV[6])
    return {0, v, 0}
end
if not queued then
    redis.call('zadd', KEYS[2], now, me)
end
redis.call('hset', KEYS[3], me, n .. ':' .. (now + tonumber(ARGV[5])))
redis.call('pexpire', KEYS[2], ARGV[5])
redis.call('pexpire', KEYS[3], ARGV[5])
-- Permits the waiters ahead can take (a Redisson client's release, a place
-- that ran out): wake them.
semServe(v, now, ARGV[6])
return {0, v, 1}
