-- permit_set: set the permits of a Redisson-compatible
-- RPermitExpirableSemaphore, only if they were never set.
--
-- KEYS[1]  available permits (string)
-- KEYS[2]  held permits ({name}:timeout zset; not read here)
-- KEYS[3]  channel redisson_sc:{name}: the permits set are published,
--          signed ('+3', as giveBack does: Redisson reads the number)
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:): the waiters the
--          permits serve are woken, and only they
-- KEYS[7]  latch of this call (redisson_permit_latch:{name}:<client>:<n>),
--          set when this call set the permits, so that the call resent after
--          a lost reply still reports it; lives for the retry window at most
-- ARGV[1]  permits (>= 0)
-- ARGV[2]  publish command ('publish' or 'spublish')
-- ARGV[3]  latch lifetime in ms
--
-- Returns 1 when KEYS[1] was missing and is now ARGV[1] (published), 0 when it
-- already existed (nothing changed). A key of another type fails the script
-- (WRONGTYPE) before anything is written.
--
-- prelude: semqueue
--          (uses semQueueKeys, semServe, semNow)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
if redis.call('get', KEYS[1]) then
    return redis.call('exists', KEYS[7])
end
redis.call('set', KEYS[1], ARGV[1])
local n = tonumber(ARGV[1])
if n > 0 then
    redis.call(ARGV[2], KEYS[3], '+' .. ARGV[1])
    semServe(n, semNow(), ARGV[2])
end
redis.call('set', KEYS[7], 1, 'px', ARGV[3])
return 1
