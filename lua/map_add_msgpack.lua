-- map_add_msgpack: add to a MessagePack-encoded number in a Map (AddAndGet
-- with MsgpackCodec), decoding and re-encoding it with Redis's cmsgpack.
-- Lua numbers are doubles, so integers are refused outside +-(2^53 - 1).
--
-- KEYS[1]  map: hash of encoded key -> MessagePack value
-- ARGV[1]  encoded key
-- ARGV[2]  delta, decimal
-- ARGV[3]  value type: 'long' (a Go int/int64: stored as Jackson writes a
--          java.lang.Long, [type id, n] with n in the smallest integer form),
--          'int' (int8..int32: the bare smallest integer form, a Java
--          Integer), 'float64' (float 64, as Jackson writes a Double) or
--          'float32' (float 32, a Float)
--
-- Returns the new encoded value (a missing entry counts as 0). A stored
-- integer may be bare or wrapped with a Java integer type id (Long, Integer,
-- Short, Byte, BigInteger). A stored value that is not one MessagePack
-- number, a number of the other kind (a float for an integer type, an
-- integer for a float type), or an integer result out of range, is an error
-- starting 'REDISSON_CODEC' and nothing changes.
local isInt = ARGV[3] == 'int' or ARGV[3] == 'long'
local javaInts = {['java.lang.Long'] = true, ['java.lang.Integer'] = true,
    ['java.lang.Short'] = true, ['java.lang.Byte'] = true, ['java.math.BigInteger'] = true}
local cur = redis.call('hget', KEYS[1], ARGV[1])
local n = 0
if cur then
    local res = {pcall(cmsgpack.unpack, cur)}
    if not res[1] or #res ~= 2 then
        return redis.error_reply('REDISSON_CODEC stored value is not one msgpack number')
    end
    local v = res[2]
    if type(v) == 'table' then
        -- [type id, n]: the number starts after the fixarray and fixstr headers.
        local id = v[1]
        if #v ~= 2 or type(id) ~= 'string' or not javaInts[id] or type(v[2]) ~= 'number' or not isInt then
            return redis.error_reply('REDISSON_CODEC stored value is not one msgpack number of the value type ' .. ARGV[3])
        end
        local b = string.byte(cur, 3 + #id)
        if b == 0xca or b == 0xcb then
            return redis.error_reply('REDISSON_CODEC stored number is not of the value type ' .. ARGV[3])
        end
        v = v[2]
    elseif type(v) ~= 'number' then
        return redis.error_reply('REDISSON_CODEC stored value is not one msgpack number')
    else
        -- The stored number must be of V's kind: an integer for the integer
        -- types, a float 32/64 for the float types; otherwise the sum would
        -- silently turn a Java Double into an Integer or a Long into a Double.
        local b = string.byte(cur, 1)
        if (b == 0xca or b == 0xcb) == isInt then
            return redis.error_reply('REDISSON_CODEC stored number is not of the value type ' .. ARGV[3])
        end
    end
    n = v
end
local r = n + tonumber(ARGV[2])
if isInt then
    local lim = 9007199254740992
    if n ~= math.floor(n) or math.abs(n) >= lim or math.abs(r) >= lim then
        return redis.error_reply('REDISSON_CODEC integer outside +-(2^53 - 1) or not an integer')
    end
end
local packed
if ARGV[3] == 'float64' then
    packed = string.char(0xcb) .. struct.pack('>d', r)
elseif ARGV[3] == 'float32' then
    packed = string.char(0xca) .. struct.pack('>f', r)
elseif ARGV[3] == 'long' then
    packed = string.char(0x92, 0xae) .. 'java.lang.Long' .. cmsgpack.pack(r)
else
    packed = cmsgpack.pack(r)
end
redis.call('hset', KEYS[1], ARGV[1], packed)
return packed
