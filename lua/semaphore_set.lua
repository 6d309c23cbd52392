-- semaphore_set: set the permits of a Redisson-compatible semaphore unless it
-- exists (TrySetPermits), publish them, and wake the queued waiters of this
-- library they serve.
--
-- prelude: semqueue
--          (uses its semNow, semServe)
--
-- KEYS[1..5]  as in prelude_semqueue: semaphore, queue, waiters, channel,
--             wake channel prefix
-- KEYS[6]     call marker (redisson_sc_call:{name}:<call id>)
-- ARGV[1]     permits (>= 0)
-- ARGV[2]     call marker lifetime in ms (the retry window)
-- ARGV[3]     publish command: 'publish' or 'spublish'
--
-- Returns 1 when the permits were set, 0 when the semaphore existed. The
-- message on KEYS[4] is signed, as semaphore_add's.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- reports 1 again.
if redis.call('get', KEYS[6]) then
    return 1
end
-- GET, not EXISTS: a key of another type fails here.
local v = redis.call('get', KEYS[1])
if v then
    if not tonumber(v) then
        return redis.error_reply('ERR value is not an integer or out of range')
    end
    return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[3], KEYS[4], '+' .. ARGV[1])
semServe(tonumber(ARGV[1]), semNow(), ARGV[3])
redis.call('set', KEYS[6], '1', 'px', ARGV[2])
return 1
