-- setcache_contains: whether a member of a SetCache is live (Redisson's
-- RSetCache.contains).
--
-- KEYS[1]  the set cache (prelude_setcache)
-- ARGV[1]  encoded member
--
-- Returns 1 when the member is there and has not expired, else 0. Read-only.
--
-- prelude: setcache
local score = redis.call('zscore', KEYS[1], ARGV[1])
if score and tonumber(score) > scNow() then
    return 1
end
return 0
