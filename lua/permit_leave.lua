-- permit_leave: give up the queue place of a RPermitExpirableSemaphore
-- acquire call that returns without a permit, waking the waiters behind it
-- that it held back.
--
-- KEYS[1..6]  as permit_acquire's: available permits, held permits, channel,
--             queue, waiters, wake channel prefix
-- ARGV[1]     call id "<client uuid>:<n>"
-- ARGV[2]     publish command ('publish' or 'spublish')
--
-- Returns 1 when the call had a place, 0 otherwise.
--
-- prelude: semqueue
--          (uses semQueueKeys, semNow, semServe)
semQueueKeys(KEYS[4], KEYS[5], KEYS[6])
local left = redis.call('zrem', KEYS[4], ARGV[1])
redis.call('hdel', KEYS[5], ARGV[1])
if left > 0 then
    local v = tonumber(redis.pcall('get', KEYS[1]))
    if v then
        semServe(v, semNow(), ARGV[2])
    end
end
return left
