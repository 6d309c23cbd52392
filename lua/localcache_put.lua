-- prelude: localcache_notify
-- localcache_put: store a LocalCachedMap entry and tell the other instances
-- (Redisson's RLocalCachedMap.put and fastPut).
--
-- KEYS[1]  map: hash of encoded key -> encoded value
-- KEYS[2]  {name}:topic, the channel of the map's instances
-- KEYS[3]  redisson__cache_updates_log:{name}, the updates log (zset)
-- ARGV[1]  encoded key
-- ARGV[2]  encoded value
-- ARGV[3]  message (invalidate or update)
-- ARGV[4]  mode: '0' tell nobody, '1' publish, '2' publish and log
-- ARGV[5]  time, ms (the log's score)
-- ARGV[6]  log member
-- ARGV[7]  publish command
-- ARGV[8]  'fast': return whether the key was new instead of the old value;
--          'absent': store only when the key is absent (a read-through
--          load's result), else return the present value untouched;
--          'replace': store only when the present value is ARGV[9] (a
--          refresh's result), else return the present value untouched
-- ARGV[9]  'replace' only: the value the refresh read before loading
--
-- Returns the previous encoded value (or nil), or with 'fast' 1 for a new
-- key and 0 otherwise. A key of another type is a WRONGTYPE error before
-- anything is written or published.
notifyCheck(KEYS[3], ARGV[4])
local old = false
if ARGV[8] ~= 'fast' then
  old = redis.call('hget', KEYS[1], ARGV[1])
end
if ARGV[8] == 'absent' and old then
  return old
end
if ARGV[8] == 'replace' and old ~= ARGV[9] then
  return old
end
local n = redis.call('hset', KEYS[1], ARGV[1], ARGV[2])
notify(KEYS[2], KEYS[3], ARGV[7], ARGV[3], ARGV[4], ARGV[5], {ARGV[6]})
if ARGV[8] == 'fast' then
  return n
end
return old
