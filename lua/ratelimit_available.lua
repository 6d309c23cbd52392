-- ratelimit_available: the permits a Redisson-compatible RRateLimiter
-- would grant now, read from its grant log. Writes nothing.
--
-- KEYS[1]  config hash {rate, interval, type, keepAliveTime}
-- KEYS[2]  available permits of the overall scope ({name}:value)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- KEYS[6]  checkpoint of the overall scope ({name}:permits:sum)
-- KEYS[7]  checkpoint of this client's scope ({name}:permits:<id>:sum)
--
-- Returns rate minus the permits logged within the last interval and 1ms
-- (by the server's clock; see ratelimit_acquire for the 1ms), at least 0.
-- The permits are taken from the checkpoint when it still describes the
-- log (see ratelimit_acquire), else summed
-- from the live log. Errors: NOTINIT (no config), WRONGTYPE, BADENTRY (a
-- config field or log member not in Redisson's format, as in
-- ratelimit_acquire).
local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'type', 'keepAliveTime')
if not cfg[1] or not cfg[2] then
    return redis.error_reply('NOTINIT rate limiter is not initialized')
end
local function whole(s)
    return s and string.match(s, '^%d+$') and tonumber(s)
end
local rate, interval = whole(cfg[1]), whole(cfg[2])
if not rate or rate < 1 or not interval or interval < 1 or
    (cfg[3] and cfg[3] ~= '0' and cfg[3] ~= '1') or (cfg[4] and not whole(cfg[4])) then
    return redis.error_reply('BADENTRY rate limiter config is not in Redisson format')
end
local valueKey, logKey, sumKey = KEYS[2], KEYS[4], KEYS[6]
if cfg[3] == '1' then
    valueKey, logKey, sumKey = KEYS[3], KEYS[5], KEYS[7]
end
for key, want in pairs({[valueKey] = 'string', [logKey] = 'zset', [sumKey] = 'string'}) do
    local kt = redis.call('type', key).ok
    if kt ~= 'none' and kt ~= want then
        return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
    end
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = now - interval - 1 -- as ratelimit_acquire: t may be 1ms late

local function permitsOf(m)
    if #m ~= 21 or string.byte(m, 1) ~= 16 then
        return nil
    end
    local b1, b2, b3, b4 = string.byte(m, 18, 21)
    return b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
end

local used, sign, range = nil, 1, nil
local value, sum = redis.call('get', valueKey), redis.call('get', sumKey)
local entries = redis.call('zcard', logKey)
if sum and value and entries > 0 then
    local sv, se, su, sm = string.match(sum, '^(-?%d+)|(%d+)|(%d+)|(.*)$')
    if tonumber(sv) == tonumber(value) and tonumber(se) == entries and
        redis.call('zrange', logKey, -1, -1)[1] == sm then
        used, sign = tonumber(su), -1
        range = redis.call('zrangebyscore', logKey, '-inf', cutoff)
    end
end
if not used then
    used = 0
    range = redis.call('zrangebyscore', logKey, '(' .. cutoff, '+inf')
end
for i = 1, #range do
    local p = permitsOf(range[i])
    if not p then
        return redis.error_reply('BADENTRY rate limiter log entry is not in Redisson format')
    end
    used = used + sign * p
end
return math.max(rate - used, 0)
