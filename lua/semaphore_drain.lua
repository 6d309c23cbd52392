-- semaphore_drain: take every available permit of a Redisson-compatible
-- semaphore (DrainPermits): the value becomes 0. A missing semaphore stays
-- missing (Redisson creates it with 0: the same number of permits).
--
-- KEYS[1]  semaphore: string, the available permits
-- KEYS[2]  call marker (redisson_sc_call:{name}:<call id>): the result
-- ARGV[1]  call marker lifetime in ms (the retry window)
--
-- Returns the permits that were available (0 when the key was missing).
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[2])
if done then
    return tonumber(done)
end
local v = redis.call('get', KEYS[1])
if v then
    v = tonumber(v)
    if not v then
        return redis.error_reply('ERR value is not an integer or out of range')
    end
    redis.call('set', KEYS[1], 0, 'keepttl')
else
    v = 0
end
redis.call('set', KEYS[2], v, 'px', ARGV[1])
return v
