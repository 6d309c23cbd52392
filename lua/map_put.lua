-- map_put: store a Map entry and return the previous value (Redisson's
-- RMap.put).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- ARGV[1]  encoded key
-- ARGV[2]  encoded value
--
-- Returns the previous encoded value, or nil. A key of another type is a
-- WRONGTYPE error (from HGET), left unchanged.
local old = redis.call('hget', KEYS[1], ARGV[1])
redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
return old
