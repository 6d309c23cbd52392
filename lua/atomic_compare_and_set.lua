-- atomic_compare_and_set: set an AtomicLong to ARGV[2] when it equals
-- ARGV[1] (a missing key counts as 0, as in Redisson).
--
-- KEYS[1]  atomic long: string, a decimal integer
-- KEYS[2]  call marker (redisson_al_call:{name}:<client uuid>:<call id>),
--          written when the value was set
-- ARGV[1]  expected value (decimal integer, canonical form)
-- ARGV[2]  new value (decimal integer)
-- ARGV[3]  call marker lifetime in ms (the retry window)
--
-- Returns 1 when set, 0 when the value differs; a call resent after a lost
-- reply finds its marker and reports 1 again, changing nothing. Values are compared as
-- decimal strings, so integers beyond 2^53 compare exactly. A value that is
-- no integer is an error and the key is unchanged.

-- isint reports whether s is a canonical decimal int64, as INCRBY accepts.
local function isint(s)
    local neg, d = string.match(s, '^(%-?)(%d+)$')
    if not d or (#d > 1 and string.sub(d, 1, 1) == '0') or #d > 19 then
        return false
    end
    return #d < 19 or d <= (neg == '-' and '9223372036854775808' or '9223372036854775807')
end
if redis.call('exists', KEYS[2]) == 1 then
    return 1
end
local cur = redis.call('get', KEYS[1])
if not cur then
    cur = '0'
elseif not isint(cur) then
    return redis.error_reply('ERR value is not an integer or out of range')
end
if cur ~= ARGV[1] then
    return 0
end
redis.call('set', KEYS[1], ARGV[2])
redis.call('set', KEYS[2], '1', 'px', ARGV[3])
return 1
