-- atomic_set: set an AtomicLong, refusing keys of another type.
--
-- KEYS[1]  atomic long: string, a decimal integer
-- KEYS[2]  call marker (redisson_al_call:{name}:<client uuid>:<call id>),
--          mode 'get' only: 'v' and the previous value, or 'n' for none
-- ARGV[1]  new value (decimal integer)
-- ARGV[2]  'get' to return the previous value, '' otherwise
-- ARGV[3]  call marker lifetime in ms (the retry window)
--
-- Returns the previous value (nil when missing) in mode 'get', else 1. In
-- mode 'get' a call resent after a lost reply finds its marker and reports
-- the first call's previous value, changing nothing (a plain set needs no
-- marker: setting the value again is what a resend of it means). A
-- previous value that is no integer is an error and the key is unchanged.

-- isint reports whether s is a canonical decimal int64, as INCRBY accepts.
local function isint(s)
    local neg, d = string.match(s, '^(%-?)(%d+)$')
    if not d or (#d > 1 and string.sub(d, 1, 1) == '0') or #d > 19 then
        return false
    end
    return #d < 19 or d <= (neg == '-' and '9223372036854775808' or '9223372036854775807')
end
if ARGV[2] == 'get' then
    local done = redis.call('get', KEYS[2])
    if done then
        return done ~= 'n' and string.sub(done, 2) or false
    end
end
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local old = redis.call('get', KEYS[1])
if old and not isint(old) then
    return redis.error_reply('ERR value is not an integer or out of range')
end
redis.call('set', KEYS[1], ARGV[1])
if ARGV[2] == 'get' then
    redis.call('set', KEYS[2], old and ('v' .. old) or 'n', 'px', ARGV[3])
    return old
end
return 1
