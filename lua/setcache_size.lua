-- setcache_size: the number of live members of a SetCache (Redisson's
-- RSetCache.size).
--
-- KEYS[1]  the set cache (prelude_setcache)
--
-- Returns how many members have not expired. Read-only.
--
-- prelude: setcache
return redis.call('zcount', KEYS[1], string.format('(%d', scNow()), '+inf')
