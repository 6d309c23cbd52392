-- prelude_setcache: what every SetCache script shares (Redisson's RSetCache
-- layout), used by setcache_add, setcache_contains, setcache_size,
-- setcache_read_all, setcache_scan and setcache_evict.
--
-- KEYS[1] is the set cache: a zset of encoded members, each scored by its
-- expiry time in ms (92231924252552169, stored as 92231924252552176, for a
-- member without TTL, as Redisson writes it). A member is live while its
-- score is above now.
--
-- Clock: the Redis server's (TIME), in ms.
--
-- Defines local functions, and runs nothing itself:
--   scNow()  the server time in ms
local function scNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
