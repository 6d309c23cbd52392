-- fixed_window_reserve: take a chunk of permits for one identity of a
-- fixed-window limiter in local-quota mode. The chunk is counted in the
-- shared window before the client serves any of it, so all clients
-- together never grant more than the limit in a window; the client serves
-- it only until the window ends.
--
-- KEYS[1]  identity counter, as fixed_window.lua
-- ARGV[1]  limit: permits per window (<= 2^53-1)
-- ARGV[2]  window in ms
-- ARGV[3]  want: the most permits to take (1 <= want <= limit)
-- ARGV[4]  need: the fewest that are worth taking (1 <= need <= want)
--
-- Returns {granted (0, or need..want), permits left in the window after
-- this, the window's PTTL in ms, the window's end in server ms since the
-- epoch (TIME + PTTL, which fixed_window_return checks)}. When fewer than
-- need are left nothing is taken and granted is 0. A key holding another
-- type, or a string that is not a count, is an error starting with
-- WRONGTYPE and is left unchanged.
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local need = tonumber(ARGV[4])

local cur = redis.call('get', KEYS[1])
local used = 0
local ttl = window
if cur then
    used = string.match(cur, '^%d+$') and tonumber(cur)
    if not used then
        return redis.error_reply('WRONGTYPE fixed window counter is not a count')
    end
    ttl = redis.call('pttl', KEYS[1])
    if ttl < 0 then
        ttl = window
        redis.call('pexpire', KEYS[1], window)
    end
end
local t = redis.call('time')
local ends = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + ttl

local left = limit - used
if left < need then
    return {0, math.max(left, 0), ttl, ends}
end
local granted = math.min(want, left)
local g = string.format('%.0f', granted)
if cur then
    redis.call('incrby', KEYS[1], g)
else
    redis.call('set', KEYS[1], g, 'px', window)
end
return {granted, left - granted, ttl, ends}
