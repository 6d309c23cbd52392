-- permit_update: change the lease of one held permit of a Redisson-compatible
-- RPermitExpirableSemaphore.
--
-- KEYS[1]  available permits (string)
-- KEYS[2]  held permits ({name}:timeout zset, member = 16 raw id bytes,
--          score = expiry in ms, 922337203685477 = never expires)
-- KEYS[3]  channel redisson_sc:{name}
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:): the waiters
--          permits that come back serve are woken
-- ARGV[1]  permit id, 16 raw bytes
-- ARGV[2]  new lease in ms, counted from now; 0 = never expires
-- ARGV[3]  publish command ('publish' or 'spublish')
--
-- Returns 1 when the permit is held and its expiry was set, 0 when it is not
-- held (unknown, released, or its lease already ended). Permits whose lease
-- ended are moved back to KEYS[1] first, on the server's clock (TIME).
-- Idempotent per call (a resend sets the same lease again). A key of the
-- wrong type fails the script before anything is written.
--
-- prelude: semqueue, permits
--          (uses semQueueKeys; its notPermits, isPermits, giveBack, leaseExpiry)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local raw = redis.call('get', KEYS[1])
local score = redis.call('zscore', KEYS[2], ARGV[1])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
if back > 0 then
    giveBack(back, ARGV[3])
end
if not score or tonumber(score) <= now then
    return 0
end
redis.call('zadd', KEYS[2], 'xx', leaseExpiry(now, ARGV[2]), ARGV[1])
return 1
