-- permit_available: the available permits of a Redisson-compatible
-- RPermitExpirableSemaphore, after moving back those whose lease ended.
--
-- KEYS[1]  available permits (string; missing = 0)
-- KEYS[2]  held permits ({name}:timeout zset, score = expiry in ms)
-- KEYS[3]  channel redisson_sc:{name}: the number of available permits is
--          published when expired permits come back
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:): the waiters
--          permits that come back serve are woken
-- ARGV[1]  publish command ('publish' or 'spublish')
--
-- Returns {available, held}: held = permits still held. Clock: the server's
-- (TIME). A key of the wrong type fails the script before anything is written.
--
-- prelude: semqueue, permits
--          (uses semQueueKeys; its notPermits, isPermits, giveBack)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local raw = redis.call('get', KEYS[1])
local held = redis.call('zcard', KEYS[2])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
local available = tonumber(raw or '0')
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if back > 0 then
    available = giveBack(back, ARGV[1])
end
return {available, held - back}
