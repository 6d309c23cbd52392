-- map_put_if_absent: store a Map entry unless its key is present (Redisson's
-- RMap.putIfAbsent).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- ARGV[1]  encoded key
-- ARGV[2]  encoded value
--
-- Returns nil when stored, else the present encoded value (left in place).
if redis.call('hsetnx', KEYS[1], ARGV[1], ARGV[2]) == 1 then
    return false
end
return redis.call('hget', KEYS[1], ARGV[1])
