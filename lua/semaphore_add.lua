-- semaphore_add: add permits to a Redisson-compatible semaphore (Release and
-- AddPermits) and publish the new number of available permits, as Redisson's
-- release does.
--
-- KEYS[1]  semaphore: string, the available permits (created when missing)
-- KEYS[2]  call marker (redisson_sc_call:{name}:<call id>): the result
-- KEYS[3]  channel (redisson_sc:{name})
-- ARGV[1]  permits to add (may be negative)
-- ARGV[2]  call marker lifetime in ms (the retry window)
-- ARGV[3]  publish command: 'publish' or 'spublish'
--
-- Returns the new number of available permits.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[2])
if done then
    return tonumber(done)
end
local v = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[3], KEYS[3], v)
redis.call('set', KEYS[2], v, 'px', ARGV[2])
return v
