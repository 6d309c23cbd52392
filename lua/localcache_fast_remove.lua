-- prelude: localcache_notify
-- localcache_fast_remove: delete LocalCachedMap entries without reading them
-- and tell the other instances when any was present (Redisson's
-- RLocalCachedMap.fastRemove).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- KEYS[2]  {name}:topic
-- KEYS[3]  redisson__cache_updates_log:{name}
-- ARGV[1]  invalidate message naming every key
-- ARGV[2]  mode: '0' tell nobody, '1' publish, '2' publish and log
-- ARGV[3]  time, ms
-- ARGV[4]  publish command
-- ARGV[5..] pairs: encoded key, log member
--
-- Returns how many keys were present. A key of another type is a WRONGTYPE
-- error from the first HDEL, before anything is deleted.
notifyCheck(KEYS[3], ARGV[2])
local n = 0
local members = {}
for i = 5, #ARGV, 2 do
  n = n + redis.call('hdel', KEYS[1], ARGV[i])
  members[#members + 1] = ARGV[i + 1]
end
if n > 0 then
  notify(KEYS[2], KEYS[3], ARGV[4], ARGV[1], ARGV[2], ARGV[3], members)
end
return n
