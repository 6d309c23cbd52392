-- atomic_add: add to an AtomicLong (AddAndGet and every call built on it),
-- once per call.
--
-- KEYS[1]  atomic long: string, a decimal integer (0 when missing)
-- KEYS[2]  call marker (redisson_al_call:{name}:<client uuid>:<call id>):
--          the result
-- ARGV[1]  delta (decimal integer)
-- ARGV[2]  call marker lifetime in ms (the retry window)
--
-- Returns the new value as a decimal string (read back with GET, so that
-- values beyond 2^53 stay exact). INCRBY refuses a value that is no
-- integer and a sum that would overflow; nothing is written then.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[2])
if done then
    return done
end
redis.call('incrby', KEYS[1], ARGV[1])
local v = redis.call('get', KEYS[1])
redis.call('set', KEYS[2], v, 'px', ARGV[2])
return v
