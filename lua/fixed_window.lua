-- fixed_window: one decision of a fixed-window rate limiter for one
-- identity. The window opens with the identity's first allowed request and
-- lasts ARGV[2] ms; at most ARGV[1] permits are granted in it. A rejected
-- request is not counted.
--
-- KEYS[1]  identity counter: string, permits granted in the current window,
--          expiring when the window ends
-- ARGV[1]  limit: permits per window, at most 2^53-1 so that every count
--          here is exact in Lua's numbers (doubles)
-- ARGV[2]  window in ms
-- ARGV[3]  permits asked for (1 <= n <= limit)
--
-- Returns {allowed (1/0), remaining permits, retry-after in µs (0 when
-- allowed), reset-after in µs (the window's PTTL)}. Redis deletes a key
-- only once its clock is past the expiry time, so a rejected request may be
-- retried 1ms after the PTTL: that is what retry-after reports. A key holding
-- another type, or a string that is not a count, is an error starting with
-- WRONGTYPE and is left unchanged.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local n = tonumber(ARGV[3])

local cur = redis.call('get', KEYS[1])
local used = 0
local ttl = window
if cur then
    -- Only what SET and INCRBY write: decimal digits (tonumber would also
    -- take '1e3', '0x3', ' 2', which INCRBY refuses).
    used = string.match(cur, '^%d+$') and tonumber(cur)
    if not used then
        return redis.error_reply('WRONGTYPE fixed window counter is not a count')
    end
    ttl = redis.call('pttl', KEYS[1])
    if ttl < 0 then
        -- A counter without expiry (written by someone else) would block the
        -- identity for ever: give it one window.
        ttl = window
        redis.call('pexpire', KEYS[1], window)
    end
end

if n > limit - used then
    return {0, limit - used, (ttl + 1) * 1000, ttl * 1000}
end
-- ARGV[3], not n: Redis would write a Lua number of 1e17 or more as
-- '1e+17', which is no count.
if cur then
    redis.call('incrby', KEYS[1], ARGV[3])
else
    redis.call('set', KEYS[1], ARGV[3], 'px', window)
end
return {1, limit - used - n, 0, ttl * 1000}
