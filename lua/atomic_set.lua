-- atomic_set: set an AtomicLong, refusing keys of another type.
--
-- KEYS[1]  atomic long: string, a decimal integer
-- ARGV[1]  new value (decimal integer)
-- ARGV[2]  'get' to return the previous value, '' otherwise
--
-- Returns the previous value (nil when missing) in mode 'get', else 1. A
-- previous value that is no integer is an error and the key is unchanged.

-- isint reports whether s is a canonical decimal int64, as INCRBY accepts.
local function isint(s)
    local neg, d = string.match(s, '^(%-?)(%d+)$')
    if not d or (#d > 1 and string.sub(d, 1, 1) == '0') or #d > 19 then
        return false
    end
    return #d < 19 or d <= (neg == '-' and '9223372036854775808' or '9223372036854775807')
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
    return old
end
return 1
