-- setcache_read_all: every live member of a SetCache, the earliest expiry
-- first (Redisson's RSetCache.readAll).
--
-- KEYS[1]  the set cache (prelude_setcache)
--
-- Returns the encoded members that have not expired. Read-only.
--
-- prelude: setcache
return redis.call('zrangebyscore', KEYS[1], string.format('(%d', scNow()), '+inf')
