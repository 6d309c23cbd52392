-- atomicd_get_and_delete: delete an AtomicDouble and return its value.
--
-- KEYS[1]  atomic double: string, a decimal number
-- KEYS[2]  call marker (redisson_ad_call:{name}:<client uuid>:<call id>):
--          the value deleted
-- ARGV[1]  call marker lifetime in ms (the retry window)
--
-- Returns the value, or nil when missing; a call resent after a lost reply
-- finds its marker and reports the value it deleted. A value that is no
-- finite number is an error and the key is unchanged (GET raises WRONGTYPE
-- for other types).
local done = redis.call('get', KEYS[2])
if done then
    return done
end
local cur = redis.call('get', KEYS[1])
if not cur then
    return false
end
local n = tonumber(cur)
if n == nil or n ~= n or n == math.huge or n == -math.huge then
    return redis.error_reply('ERR value is not a valid float')
end
redis.call('del', KEYS[1])
redis.call('set', KEYS[2], cur, 'px', ARGV[1])
return cur
