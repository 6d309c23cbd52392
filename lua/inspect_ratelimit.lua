-- inspect_ratelimit: read an RRateLimiter's config and its overall window.
-- Writes nothing.
--
-- KEYS[1]  config hash {rate, interval, type, keepAliveTime}
-- KEYS[2]  available permits of the overall scope ({name}:value)
-- KEYS[3]  grant log of the overall scope ({name}:permits)
--
-- Returns {type, config, value, grants, permits, pttl, now}: type = KEYS[1]'s
-- Redis type ('none' when absent), config its HGETALL, value KEYS[2] (false
-- when absent), grants the number of log entries in the current window
-- (after now - interval - 1ms, as ratelimit_acquire counts), permits the
-- permits they granted (-1 when one is not in Redisson's format), pttl the
-- config's PTTL, now the server's clock in ms. Errors: WRONGTYPE.
--
-- prelude: ratelimit_log
--          (uses its sumPermits)
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local now = redis.call('time')
now = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local grants, permits = {}, 0
local interval = tonumber(redis.call('hget', KEYS[1], 'interval') or '')
if interval then
    grants = redis.call('zrangebyscore', KEYS[3], '(' .. (now - interval - 1), '+inf')
    permits = sumPermits(grants) or -1
end
return {t, redis.call('hgetall', KEYS[1]), redis.call('get', KEYS[2]) or false,
    #grants, permits, redis.call('pttl', KEYS[1]), now}
