-- permit_add: add permits to (or, negative, take them from) a
-- Redisson-compatible RPermitExpirableSemaphore.
--
-- KEYS[1]  available permits (string; missing = 0; may become negative)
-- KEYS[2]  held permits ({name}:timeout zset; not read here)
-- KEYS[3]  channel redisson_sc:{name}: the new count is published when
--          permits were added and some are available, signed ('+3', as
--          giveBack does: Redisson reads the number)
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:): the waiters the
--          added permits serve are woken, and only they
-- KEYS[7]  latch of this call (redisson_permit_latch:{name}:<client>:<n>),
--          holding its result, so that the call resent after a lost reply
--          adds nothing twice; lives for the retry window at most
-- ARGV[1]  permits to add, negative to remove
-- ARGV[2]  publish command ('publish' or 'spublish')
-- ARGV[3]  latch lifetime in ms
--
-- Returns the new number of available permits. Unlike Redisson's SET, INCRBY
-- keeps a TTL the key may have. A key of the wrong type, or a string that is
-- not an integer, fails the script before anything is written.
--
-- prelude: semqueue, permits
--          (uses semQueueKeys, semServe, semNow; its notPermits, isPermits)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local raw = redis.call('get', KEYS[1])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
local done = redis.call('get', KEYS[7])
if done then
    return tonumber(done)
end
local available = redis.call('incrby', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 and available > 0 then
    redis.call(ARGV[2], KEYS[3], '+' .. available)
    semServe(available, semNow(), ARGV[2])
end
redis.call('set', KEYS[7], available, 'px', ARGV[3])
return available
