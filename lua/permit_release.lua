-- permit_release: return one held permit of a Redisson-compatible
-- RPermitExpirableSemaphore.
--
-- KEYS[1]  available permits (string)
-- KEYS[2]  held permits ({name}:timeout zset, member = 16 raw id bytes,
--          score = expiry in ms)
-- KEYS[3]  channel redisson_sc:{name}: the new number of available permits
--          is published
-- KEYS[4]  queue of this library's waiters (redisson_sc_queue:{name})
-- KEYS[5]  their permits and deadlines (redisson_sc_waiters:{name})
-- KEYS[6]  wake channel prefix (redisson_sc_wake:{name}:): the waiters the
--          permit serves are woken
-- KEYS[7]  latch of this call (redisson_permit_latch:{name}:<client>:<n>):
--          set by a release, so that the same call resent after a lost reply
--          is recognised; lives for the retry window at most
-- ARGV[1]  permit id, 16 raw bytes
-- ARGV[2]  latch lifetime in ms
-- ARGV[3]  publish command ('publish' or 'spublish')
--
-- Returns 1 when the permit was released (by this call or, for a resend, by
-- its first run), 0 when it is not held: unknown, already released, or its
-- lease ended. Permits whose lease ended are moved back to KEYS[1] first, on
-- the server's clock (TIME). A key of the wrong type fails the script before
-- anything is written.
--
-- prelude: semqueue, permits
--          (uses semQueueKeys; its notPermits, isPermits, giveBack)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local raw = redis.call('get', KEYS[1])
local score = redis.call('zscore', KEYS[2], ARGV[1])
if not isPermits(raw) then
    return redis.error_reply(notPermits)
end
if redis.call('exists', KEYS[7]) == 1 then
    return 1
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local back = redis.call('zremrangebyscore', KEYS[2], '-inf', now)
local held = score and tonumber(score) > now
if held then
    redis.call('zrem', KEYS[2], ARGV[1])
    back = back + 1
end
if back > 0 then
    giveBack(back, ARGV[3])
end
if not held then
    return 0
end
redis.call('set', KEYS[7], 1, 'px', ARGV[2])
return 1
