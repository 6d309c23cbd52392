-- gcra_reserve: take a chunk of permits for one identity of a GCRA limiter
-- in local-quota mode. The client serves the chunk for at most ARGV[5] µs
-- after this call. To keep every grant conforming to the rate and burst
-- whenever in that time it is served, the chunk is taken as if now were
-- ARGV[5] later (the TAT starts at now + lookahead at least) while the
-- burst is checked against the real now: a permit served at any moment of
-- the lookahead then fits the GCRA, and later decisions see a TAT at least
-- as late as if it had been served then.
--
-- KEYS[1]  identity TAT, as gcra.lua
-- ARGV[1]  emission interval in µs
-- ARGV[2]  burst
-- ARGV[3]  want: the most permits to take (1 <= want <= burst)
-- ARGV[4]  need: the fewest worth taking (1 <= need <= want)
-- ARGV[5]  lookahead in µs: how long the client may serve the chunk
--
-- Returns {granted (0, or need..want), permits left at once after this,
-- retry-after in µs (when granted is 0: until need permits fit), reset-after
-- in µs (until a full burst)}. A rejection changes nothing. A key holding
-- another type, or a string that is not a time, is an error starting with
-- WRONGTYPE and is left unchanged.
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local need = tonumber(ARGV[4])
local ahead = tonumber(ARGV[5])

local t = redis.call('time')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])

local tat = now
local stored = redis.call('get', KEYS[1])
if stored then
    tat = string.match(stored, '^%d+$') and tonumber(stored)
    if not tat or tat >= 9007199254740992 then
        return redis.error_reply('WRONGTYPE gcra state is not a time')
    end
end
local from = math.max(tat, now + ahead)
local tolerance = burst * interval
local fits = math.floor((now + tolerance - from) / interval)
if fits < need then
    local retry = from + need * interval - tolerance - now
    return {0, math.max(fits, 0), math.max(retry, 1), math.max(tat - now, 0)}
end
local granted = math.min(want, fits)
local newtat = from + granted * interval
local reset = newtat - now
redis.call('set', KEYS[1], string.format('%.0f', newtat), 'px', math.ceil(reset / 1000))
return {granted, fits - granted, 0, reset}
