-- atomicd_set: set an AtomicDouble, refusing keys of another type.
--
-- KEYS[1]  atomic double: string, a decimal number
-- KEYS[2]  call marker (redisson_ad_call:{name}:<client uuid>:<call id>),
--          mode 'get' only: 'v' and the previous value, or 'n' for none
-- ARGV[1]  new value (decimal text, as Redisson writes it)
-- ARGV[2]  'get' to return the previous value, '' otherwise
-- ARGV[3]  call marker lifetime in ms (the retry window)
--
-- Returns the previous value (nil when missing) in mode 'get', else 1. In
-- mode 'get' a call resent after a lost reply finds its marker and reports
-- the first call's previous value, changing nothing. A previous value that
-- is no finite number is an error and the key is unchanged.

-- isfloat reports whether s is a finite number.
local function isfloat(s)
    local n = tonumber(s)
    return n ~= nil and n == n and n ~= math.huge and n ~= -math.huge
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
if old and not isfloat(old) then
    return redis.error_reply('ERR value is not a valid float')
end
redis.call('set', KEYS[1], ARGV[1])
if ARGV[2] == 'get' then
    redis.call('set', KEYS[2], old and ('v' .. old) or 'n', 'px', ARGV[3])
    return old
end
return 1
