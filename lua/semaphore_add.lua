-- semaphore_add: add permits to a Redisson-compatible semaphore (Release and
-- AddPermits), publish the new number of available permits, as Redisson's
-- release does, and wake the queued waiters of this library it serves.
--
-- prelude: semqueue
--          (uses its semNow, semServe)
--
-- KEYS[1..5]  as in prelude_semqueue: semaphore (created when missing),
--             queue, waiters, channel, wake channel prefix
-- KEYS[6]     call marker (redisson_sc_call:{name}:<call id>): the result
-- ARGV[1]     permits to add (may be negative)
-- ARGV[2]     call marker lifetime in ms (the retry window)
-- ARGV[3]     publish command: 'publish' or 'spublish'
--
-- Returns the new number of available permits.
--
-- The message on KEYS[4] is the new number with a '+' sign: Redisson reads
-- it as the number (Long.valueOf), and this library's waiters, which the
-- wake channels reach, know from the sign that it needs no retry of them.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[6])
if done then
    return tonumber(done)
end
local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[3], KEYS[4], '+' .. v)
semServe(v, semNow(), ARGV[3])
redis.call('set', KEYS[6], v, 'px', ARGV[2])
return v
