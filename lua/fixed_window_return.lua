-- fixed_window_return: give back permits a local-quota client took with
-- fixed_window_reserve and did not serve, but only to the window they were
-- taken from: a later window (the key expired and was opened again) must
-- not be credited, or it could grant more than its limit.
--
-- KEYS[1]  identity counter, as fixed_window.lua
-- ARGV[1]  permits to give back (>= 1)
-- ARGV[2]  the window's end in server ms, as fixed_window_reserve returned
--
-- The window is the same when the key's end (TIME + PTTL) is within 2ms of
-- ARGV[2] (TIME and PTTL round differently); a new window ends at least a
-- window (> 2ms, checked by the client) later. Returns the permits given
-- back: ARGV[1], or 0 when the window is gone or counts fewer.
local n = tonumber(ARGV[1])
local ends = tonumber(ARGV[2])
local cur = redis.call('get', KEYS[1])
if not cur or not string.match(cur, '^%d+$') or tonumber(cur) < n then
    return 0
end
local ttl = redis.call('pttl', KEYS[1])
if ttl < 0 then
    return 0
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if math.abs(now + ttl - ends) > 2 then
    return 0
end
redis.call('decrby', KEYS[1], ARGV[1])
return n
