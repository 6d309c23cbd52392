-- prelude: localcache_notify
-- localcache_remove: delete a LocalCachedMap entry, returning its value, and
-- tell the other instances when it was present (Redisson's
-- RLocalCachedMap.remove).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- KEYS[2]  {name}:topic
-- KEYS[3]  redisson__cache_updates_log:{name}
-- ARGV[1]  encoded key
-- ARGV[2]  invalidate message
-- ARGV[3]  mode: '0' tell nobody, '1' publish, '2' publish and log
-- ARGV[4]  time, ms
-- ARGV[5]  log member
-- ARGV[6]  publish command
--
-- Returns the removed encoded value, or nil. A key of another type is a
-- WRONGTYPE error (from HGET), left unchanged.
notifyCheck(KEYS[3], ARGV[3])
local old = redis.call('hget', KEYS[1], ARGV[1])
if old then
  redis.call('hdel', KEYS[1], ARGV[1])
  notify(KEYS[2], KEYS[3], ARGV[6], ARGV[2], ARGV[3], ARGV[4], {ARGV[5]})
end
return old
