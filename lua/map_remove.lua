-- map_remove: remove a Map entry and return its value (Redisson's
-- RMap.remove).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- ARGV[1]  encoded key
--
-- Returns the removed encoded value, or nil when the key was absent.
local old = redis.call('hget', KEYS[1], ARGV[1])
if old then
    redis.call('hdel', KEYS[1], ARGV[1])
end
return old
