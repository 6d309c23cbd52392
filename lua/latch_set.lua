-- latch_set: set the count of a Redisson-compatible count-down latch unless
-- it exists (TrySetCount), and publish the new-count message 1.
--
-- KEYS[1]  latch: string, the count
-- KEYS[2]  call marker (redisson_countdownlatch_call:{name}:<call id>)
-- KEYS[3]  channel (redisson_countdownlatch__channel__{name}); absent on
--          Redis Cluster when it lies in another slot than KEYS[1] (a name
--          with braces), then ARGV[4] names it
-- ARGV[1]  count (>= 1)
-- ARGV[2]  call marker lifetime in ms (the retry window)
-- ARGV[3]  publish command: 'publish' (a plain PUBLISH reaches every node)
-- ARGV[4]  the channel when it is not KEYS[3]
--
-- Returns 1 when the count was set, 0 when the latch existed.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- reports 1 again.
if redis.call('get', KEYS[2]) then
    return 1
end
local t = redis.call('type', KEYS[1])['ok']
if t == 'string' then
    return 0
end
if t ~= 'none' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[3], KEYS[3] or ARGV[4], 1)
redis.call('set', KEYS[2], '1', 'px', ARGV[2])
return 1
