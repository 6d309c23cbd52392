-- ratelimit_available: the permits a Redisson-compatible RRateLimiter
-- would grant now, read from its grant log. Writes nothing.
--
-- KEYS[1]  config hash {rate, interval, type, keepAliveTime}
-- KEYS[2]  grant log of the overall scope ({name}:permits)
-- KEYS[3]  grant log of this client ({name}:permits:<client id>)
--
-- Returns rate minus the permits logged within the last interval (by the
-- server's clock), at least 0. Errors: NOTINIT (no config), WRONGTYPE,
-- BADENTRY (a log member that is not Redisson's format).
local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'type')
local rate, interval = tonumber(cfg[1]), tonumber(cfg[2])
if not rate or not interval then
    return redis.error_reply('NOTINIT rate limiter is not initialized')
end
local logKey = KEYS[2]
if cfg[3] == '1' then
    logKey = KEYS[3]
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = redis.call('zrangebyscore', logKey, '(' .. (now - interval), '+inf')
local used = 0
for i = 1, #live do
    local m = live[i]
    if #m ~= 21 or string.byte(m, 1) ~= 16 then
        return redis.error_reply('BADENTRY rate limiter log entry is not in Redisson format')
    end
    local b1, b2, b3, b4 = string.byte(m, 18, 21)
    used = used + b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
end
return math.max(rate - used, 0)
