-- gcra: one decision of a GCRA (generic cell rate algorithm) limiter for
-- one identity: a steady rate of one permit per emission interval with a
-- burst of up to ARGV[2] permits at once. The state is the identity's
-- theoretical arrival time (TAT): the time at which it would be back to a
-- full burst. Time is the Redis server's (TIME), so client clocks do not
-- matter.
--
-- KEYS[1]  identity TAT: string, µs since the Unix epoch, expiring when the
--          identity is back to a full burst
-- ARGV[1]  emission interval in µs (period / rate, a whole number >= 1)
-- ARGV[2]  burst: permits granted at once
-- ARGV[3]  permits asked for (1 <= n <= burst)
--
-- Returns {allowed (1/0), remaining permits, retry-after in µs (0 when
-- allowed), reset-after in µs (until a full burst)}. A rejected request
-- leaves the TAT unchanged. A key holding another type, or a string that is
-- not a time, is an error starting with WRONGTYPE and is left unchanged.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local n = tonumber(ARGV[3])

local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local tat = now
local stored = redis.call('get', KEYS[1])
if stored then
    -- Only what this script writes: decimal digits, below 2^53 (tonumber
    -- would also take '1e300', 'inf', '0x3', whose differences from now
    -- overflow the reply or are not times).
    tat = string.match(stored, '^%d+$') and tonumber(stored)
    if not tat or tat >= 9007199254740992 then
        return redis.error_reply('WRONGTYPE gcra state is not a time')
    end
    if tat < now then
        tat = now
    end
end

local tolerance = burst * interval -- how far the TAT may run ahead of now
-- remaining permits for a TAT: whole intervals left in the tolerance
-- (all numbers are whole µs below 2^53, so the arithmetic is exact)
local function remaining(at)
    local r = math.floor((tolerance - (at - now)) / interval)
    if r < 0 then
        r = 0
    end
    return r
end

local newtat = tat + n * interval
local allowat = newtat - tolerance
if allowat > now then
    return {0, remaining(tat), allowat - now, tat - now}
end
local reset = newtat - now
redis.call('set', KEYS[1], string.format('%.0f', newtat), 'px', math.ceil(reset / 1000))
return {1, remaining(newtat), 0, reset}
