-- atomicd_add: add to an AtomicDouble (AddAndGet and every call built on
-- it), once per call.
--
-- KEYS[1]  atomic double: string, a decimal number (0 when missing)
-- KEYS[2]  call marker (redisson_ad_call:{name}:<client uuid>:<call id>):
--          the result
-- ARGV[1]  delta (decimal text, as Redisson writes it)
-- ARGV[2]  call marker lifetime in ms (the retry window)
--
-- Returns the new value as Redis formats it. A value that is no finite
-- number is an error, and so is a result beyond float64's range (Redis adds
-- in long double, so it would store one; the value is put back then):
-- nothing is changed.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[2])
if done then
    return done
end
local function finite(n)
    return n ~= nil and n == n and n ~= math.huge and n ~= -math.huge
end
local old = redis.call('get', KEYS[1])
if old and not finite(tonumber(old)) then
    return redis.error_reply('ERR value is not a valid float')
end
local v = redis.call('incrbyfloat', KEYS[1], ARGV[1])
if not finite(tonumber(v)) then
    if old then
        redis.call('set', KEYS[1], old, 'keepttl')
    else
        redis.call('del', KEYS[1])
    end
    return redis.error_reply('ERR increment would produce NaN or Infinity')
end
redis.call('set', KEYS[2], v, 'px', ARGV[2])
return v
