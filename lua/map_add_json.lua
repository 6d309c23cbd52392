-- map_add_json: add to a JSON-encoded integer in a Map (AddAndGet with
-- JSONCodec and an integer value type). Redis does the arithmetic (HINCRBY
-- on the bare digits), so the whole int64 range is exact.
--
-- KEYS[1]  map: hash of encoded key -> JSON value
-- ARGV[1]  encoded key
-- ARGV[2]  delta, decimal
-- ARGV[3]  value type: 'long' (a Go int/int64: stored as Jackson writes a
--          java.lang.Long, ["java.lang.Long",n]) or 'int' (int8..int32: a
--          bare integer, a Java Integer)
--
-- Returns the new encoded value (a missing entry counts as 0). A stored
-- value that is not a JSON integer, bare or wrapped with a Java integer type
-- id, or a sum outside int64, is an error starting 'REDISSON_CODEC' and
-- nothing changes.
local cur = redis.call('hget', KEYS[1], ARGV[1])
local digits = '0'
if cur then
    digits = string.match(cur, '^%s*(-?%d+)%s*$')
    if not digits then
        local id, d = string.match(cur, '^%s*%[%s*"([%w%.]+)"%s*,%s*(-?%d+)%s*%]%s*$')
        if id == 'java.lang.Long' or id == 'java.lang.Integer' or id == 'java.lang.Short'
            or id == 'java.lang.Byte' or id == 'java.math.BigInteger' then
            digits = d
        end
    end
    if not digits then
        return redis.error_reply('REDISSON_CODEC stored value is not a JSON integer')
    end
end
redis.call('hset', KEYS[1], ARGV[1], digits)
if not pcall(redis.call, 'hincrby', KEYS[1], ARGV[1], ARGV[2]) then
    if cur then
        redis.call('hset', KEYS[1], ARGV[1], cur)
    else
        redis.call('hdel', KEYS[1], ARGV[1])
    end
    return redis.error_reply('REDISSON_CODEC stored value is not an int64 or the sum overflows')
end
local sum = redis.call('hget', KEYS[1], ARGV[1])
local packed = sum
if ARGV[3] == 'long' then
    packed = '["java.lang.Long",' .. sum .. ']'
end
redis.call('hset', KEYS[1], ARGV[1], packed)
return packed
