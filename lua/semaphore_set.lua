-- semaphore_set: set the permits of a Redisson-compatible semaphore unless it
-- exists (TrySetPermits), and publish them.
--
-- KEYS[1]  semaphore: string, the available permits
-- KEYS[2]  call marker (redisson_sc_call:{name}:<call id>)
-- KEYS[3]  channel (redisson_sc:{name})
-- ARGV[1]  permits (>= 0)
-- ARGV[2]  call marker lifetime in ms (the retry window)
-- ARGV[3]  publish command: 'publish' or 'spublish'
--
-- Returns 1 when the permits were set, 0 when the semaphore existed.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- reports 1 again.
if redis.call('get', KEYS[2]) then
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
redis.call(ARGV[3], KEYS[3], ARGV[1])
redis.call('set', KEYS[2], '1', 'px', ARGV[2])
return 1
