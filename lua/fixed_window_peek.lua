-- fixed_window_peek: the state of one identity of a fixed-window limiter,
-- as fixed_window.lua would see it for a request of one permit, without
-- counting anything. Writes nothing.
--
-- KEYS[1]  identity counter, as fixed_window.lua
-- ARGV[1]  limit: permits per window
-- ARGV[2]  window in ms
--
-- Returns {allowed (1/0: would one permit be granted now), remaining
-- permits in the window, retry-after in µs (0 when allowed; else the
-- window's PTTL + 1ms, as fixed_window.lua reports), reset-after in µs (the
-- window's PTTL; 0 without state; a counter without expiry reports a whole
-- window, which the next decision gives it)}. A key holding another type,
-- or a string that is not a count, is an error starting with WRONGTYPE.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])

local cur = redis.call('get', KEYS[1])
if not cur then
    return {1, limit, 0, 0}
end
local used = string.match(cur, '^%d+$') and tonumber(cur)
if not used then
    return redis.error_reply('WRONGTYPE fixed window counter is not a count')
end
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
    ttl = window
end
local left = limit - used
if left < 1 then
    return {0, 0, (ttl + 1) * 1000, ttl * 1000}
end
return {1, left, 0, ttl * 1000}
