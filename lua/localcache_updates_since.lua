-- localcache_updates_since: the updates log of a LocalCachedMap since a time,
-- read by an instance with ReconnectionStrategy Load after a reconnect; it
-- also trims the entries older than the log's retention.
--
-- KEYS[1]  redisson__cache_updates_log:{name} (zset: member = 16-byte key
--          hash .. ':' .. 8 random bytes, score = writer's time in ms)
-- ARGV[1]  since, ms
-- ARGV[2]  oldest time kept, ms
--
-- Returns the members logged since ARGV[1]. A key of another type is a
-- WRONGTYPE error.
redis.call('zremrangebyscore', KEYS[1], '-inf', '(' .. ARGV[2])
return redis.call('zrangebyscore', KEYS[1], ARGV[1], '+inf')
