-- atomic_get_and_delete: delete an AtomicLong and return its value.
--
-- KEYS[1]  atomic long: string, a decimal integer
-- KEYS[2]  call marker (redisson_al_call:{name}:<client uuid>:<call id>):
--          the value deleted
-- ARGV[1]  call marker lifetime in ms (the retry window)
--
-- Returns the value, or nil when missing; a call resent after a lost reply
-- finds its marker and reports the value it deleted. A value that is no integer is an
-- error and the key is unchanged (GET raises WRONGTYPE for other types).

-- isint reports whether s is a canonical decimal int64, as INCRBY accepts.
local function isint(s)
    local neg, d = string.match(s, '^(%-?)(%d+)$')
    if not d or (#d > 1 and string.sub(d, 1, 1) == '0') or #d > 19 then
        return false
    end
    return #d < 19 or d <= (neg == '-' and '9223372036854775808' or '9223372036854775807')
end
local done = redis.call('get', KEYS[2])
if done then
    return done
end
local cur = redis.call('get', KEYS[1])
if not cur then
    return false
end
if not isint(cur) then
    return redis.error_reply('ERR value is not an integer or out of range')
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[2], cur, 'px', ARGV[1])
return cur
