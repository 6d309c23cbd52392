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
--
-- Two commands on the allowed path: INCRBY first (it opens a window at 0,
-- and refuses what is not an integer), then PEXPIRE for a new window or
-- PTTL for an open one. A rejection takes the permits back (DECRBY) inside
-- this script, so no one ever sees the counter above the limit.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local n = tonumber(ARGV[3])

local ok, used = pcall(redis.call, 'incrby', KEYS[1], ARGV[3])
if not ok then
    -- another type, a string that is not an integer, or an overflow: INCRBY
    -- changed nothing.
    return redis.error_reply('WRONGTYPE fixed window counter is not a count')
end
local before = used - n
if before < 0 then
    -- A negative count is no state of this limiter (it writes only counts).
    redis.call('decrby', KEYS[1], ARGV[3])
    return redis.error_reply('WRONGTYPE fixed window counter is not a count')
end

local ttl
if before == 0 then
    ttl = window
    redis.call('pexpire', KEYS[1], window)
else
    ttl = redis.call('pttl', KEYS[1])
    if ttl < 0 then
        -- A counter without expiry (written by someone else) would block the
        -- identity for ever: give it one window.
        ttl = window
        redis.call('pexpire', KEYS[1], window)
    end
end

if used > limit then
    redis.call('decrby', KEYS[1], ARGV[3])
    return {0, limit - before, (ttl + 1) * 1000, ttl * 1000}
end
return {1, limit - used, 0, ttl * 1000}
