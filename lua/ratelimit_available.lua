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
--
-- prelude: ratelimit_config, ratelimit_log
--          (uses their rateConfig, badEntry, checkpointUsed, windowUsed)
local rl, reply = rateConfig()
if not rl then
    return reply
end
local rate, interval = rl.rate, rl.interval
local valueKey, logKey, sumKey = rl.valueKey, rl.logKey, rl.sumKey
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = now - interval - 1 -- as ratelimit_acquire: t may be 1ms late

local value, sum = redis.call('get', valueKey), redis.call('get', sumKey)
local entries = redis.call('zcard', logKey)
local used = checkpointUsed(logKey, value, entries, sum)
used = windowUsed(logKey, cutoff, used, nil)
if not used then
    return redis.error_reply(badEntry)
end
return math.max(rate - used, 0)
