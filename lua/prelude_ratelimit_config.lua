-- prelude_ratelimit_config: the config read of the RRateLimiter scripts
-- (ratelimit_acquire, ratelimit_available; ratelimit_undo for rateScope).
--
-- KEYS[1]  config hash {rate, interval (ms), type (0 overall, 1 per client),
--          keepAliveTime (ms, 0 = none)}
-- KEYS[2]  available permits of the overall scope ({name}:value)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- KEYS[6]  checkpoint of the overall scope ({name}:permits:sum)
-- KEYS[7]  checkpoint of this client's scope ({name}:permits:<id>:sum)
--
-- Defines local functions, and runs nothing itself:
--   whole(s)        a field of decimal digits as a number, else nil (false)
--   rateScope(kind) the value, log and checkpoint keys of the scope a config
--                   type names: KEYS[3], KEYS[5], KEYS[7] for '1' (per
--                   client), else KEYS[2], KEYS[4], KEYS[6]
--   rateConfig()    reads and checks the config and the types of its scope's
--                   keys; returns {rate, interval, keepAlive (0 = none),
--                   valueKey, logKey, sumKey}, else nil and the error reply:
--                   NOTINIT (no config), BADENTRY (a field not in Redisson's
--                   format: rate and interval whole numbers >= 1, type 0 or
--                   1, keepAliveTime a whole number), WRONGTYPE
local function whole(s)
    return s and string.match(s, '^%d+$') and tonumber(s)
end

local function rateScope(kind)
    if kind == '1' then
        return KEYS[3], KEYS[5], KEYS[7]
    end
    return KEYS[2], KEYS[4], KEYS[6]
end

local function rateConfig()
    local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'type', 'keepAliveTime')
    if not cfg[1] or not cfg[2] then
        return nil, redis.error_reply('NOTINIT rate limiter is not initialized')
    end
    local rate, interval = whole(cfg[1]), whole(cfg[2])
    if not rate or rate < 1 or not interval or interval < 1 or
        (cfg[3] and cfg[3] ~= '0' and cfg[3] ~= '1') or (cfg[4] and not whole(cfg[4])) then
        return nil, redis.error_reply('BADENTRY rate limiter config is not in Redisson format')
    end
    local valueKey, logKey, sumKey = rateScope(cfg[3])
    for key, want in pairs({[valueKey] = 'string', [logKey] = 'zset', [sumKey] = 'string'}) do
        local kt = redis.call('type', key).ok
        if kt ~= 'none' and kt ~= want then
            return nil, redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
        end
    end
    return {rate = rate, interval = interval, keepAlive = tonumber(cfg[4]) or 0,
        valueKey = valueKey, logKey = logKey, sumKey = sumKey}
end

