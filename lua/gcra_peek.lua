-- gcra_peek: the state of one identity of a GCRA limiter, as gcra.lua would
-- see it for a request of one permit, without spending anything. Writes
-- nothing.
--
-- KEYS[1]  identity TAT, as gcra.lua
-- ARGV[1]  emission interval in µs
-- ARGV[2]  burst
--
-- Returns {allowed (1/0: would one permit be granted now), remaining
-- permits at once, retry-after in µs (until one permit fits; 0 when
-- allowed), reset-after in µs (until a full burst; 0 without state)}. A key
-- holding another type, or a string that is not a time, is an error
-- starting with WRONGTYPE.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])

local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local tat = now
local stored = redis.call('get', KEYS[1])
if stored then
    tat = string.match(stored, '^%d+$') and tonumber(stored)
    if not tat or tat >= 9007199254740992 then
        return redis.error_reply('WRONGTYPE gcra state is not a time')
    end
    if tat < now then
        tat = now
    end
end

local tolerance = burst * interval
local left = math.floor((tolerance - (tat - now)) / interval)
if left < 0 then
    left = 0
end
local allowat = tat + interval - tolerance
if allowat > now then
    return {0, left, allowat - now, tat - now}
end
return {1, left, 0, tat - now}
