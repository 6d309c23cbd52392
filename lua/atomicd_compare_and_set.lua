-- atomicd_compare_and_set: set an AtomicDouble to ARGV[2] when its number
-- equals ARGV[1] (a missing key counts as 0, as in Redisson).
--
-- KEYS[1]  atomic double: string, a decimal number
-- KEYS[2]  call marker (redisson_ad_call:{name}:<client uuid>:<call id>),
--          written when the value was set
-- ARGV[1]  expected value (decimal text)
-- ARGV[2]  new value (decimal text, as Redisson writes it)
-- ARGV[3]  call marker lifetime in ms (the retry window)
--
-- Returns 1 when set, 0 when the value differs; a call resent after a lost
-- reply finds its marker and reports 1 again, changing nothing. Values are
-- compared as numbers (Lua doubles), as Redisson compares them, so "11" and
-- "11.0" are equal. A value that is no finite number is an error and the key
-- is unchanged.
if redis.call('exists', KEYS[2]) == 1 then
    return 1
end
local cur = redis.call('get', KEYS[1])
local n = 0
if cur then
    n = tonumber(cur)
    if n == nil or n ~= n or n == math.huge or n == -math.huge then
        return redis.error_reply('ERR value is not a valid float')
    end
end
if n ~= tonumber(ARGV[1]) then
    return 0
end
redis.call('set', KEYS[1], ARGV[2])
redis.call('set', KEYS[2], '1', 'px', ARGV[3])
return 1
