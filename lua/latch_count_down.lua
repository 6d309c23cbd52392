-- latch_count_down: count a Redisson-compatible count-down latch down by
-- one; at zero delete it and publish the zero message 0.
--
-- KEYS[1]  latch: string, the count
-- KEYS[2]  call marker (redisson_countdownlatch_call:{name}:<call id>)
-- KEYS[3]  channel (redisson_countdownlatch__channel__{name}); absent on
--          Redis Cluster when it lies in another slot than KEYS[1], then
--          ARGV[3] names it
-- ARGV[1]  call marker lifetime in ms (the retry window)
-- ARGV[2]  publish command: 'publish' (a plain PUBLISH reaches every node)
-- ARGV[3]  the channel when it is not KEYS[3]
--
-- Returns the count after the call (<= 0: the latch is open; a missing latch
-- stays missing, as in Redisson).
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[2])
if done then
    return tonumber(done)
end
local v = redis.call('decr', KEYS[1])
if v <= 0 then
    redis.call('del', KEYS[1])
end
if v == 0 then
    redis.call(ARGV[2], KEYS[3] or ARGV[3], 0)
end
redis.call('set', KEYS[2], v, 'px', ARGV[1])
return v
