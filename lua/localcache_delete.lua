-- localcache_delete: delete a LocalCachedMap's hash and updates log and tell
-- every instance to clear its local cache (Redisson's RLocalCachedMap.clear
-- and delete).
--
-- KEYS[1]  map hash
-- KEYS[2]  {name}:topic
-- KEYS[3]  redisson__cache_updates_log:{name}
-- ARGV[1]  clear message (flag 0: no acknowledgement asked)
-- ARGV[2]  publish command
--
-- Returns 1 if the map existed, 0 otherwise.
local existed = redis.call('exists', KEYS[1])
redis.call('del', KEYS[1], KEYS[3])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return existed
