-- setcache_add: add a member to a SetCache with its expiry (Redisson's
-- RSetCache.add, with or without a TTL).
--
-- KEYS[1]  the set cache (prelude_setcache)
-- ARGV[1]  TTL in ms, 0 for none
-- ARGV[2]  encoded member
--
-- Sets the member's expiry to now + TTL (or to Redisson's no-TTL score),
-- whether or not it was there. Returns 1 when the member was absent or had
-- expired, 0 when it was live. A key of another type is a WRONGTYPE error
-- (from ZSCORE), left unchanged.
--
-- prelude: setcache
local now = scNow()
local old = redis.call('zscore', KEYS[1], ARGV[2])
local ttl = tonumber(ARGV[1])
local score = '92231924252552169'
if ttl > 0 then
    score = string.format('%d', now + ttl)
end
redis.call('zadd', KEYS[1], score, ARGV[2])
if old and tonumber(old) > now then
    return 0
end
return 1
