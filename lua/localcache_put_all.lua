-- prelude: localcache_notify
-- localcache_put_all: store several LocalCachedMap entries and tell the
-- other instances in one message (Redisson's RLocalCachedMap.putAll).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- KEYS[2]  {name}:topic
-- KEYS[3]  redisson__cache_updates_log:{name}
-- ARGV[1]  message (invalidate or update, naming every key)
-- ARGV[2]  mode: '0' tell nobody, '1' publish, '2' publish and log
-- ARGV[3]  time, ms
-- ARGV[4]  publish command
-- ARGV[5..] triples: encoded key, encoded value, log member
--
-- Returns nothing. A key of another type is a WRONGTYPE error from the first
-- HSET, before anything is written.
notifyCheck(KEYS[3], ARGV[2])
local members = {}
for i = 5, #ARGV, 3 do
  redis.call('hset', KEYS[1], ARGV[i], ARGV[i + 1])
  members[#members + 1] = ARGV[i + 2]
end
notify(KEYS[2], KEYS[3], ARGV[4], ARGV[1], ARGV[2], ARGV[3], members)
return nil
