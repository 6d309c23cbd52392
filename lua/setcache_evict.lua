-- setcache_evict: one bounded batch of a SetCache's background eviction
-- (Redisson's EvictionScheduler task for RSetCache).
--
-- KEYS[1]  the set cache (prelude_setcache)
-- ARGV[1]  publish command (unused: nothing is published, as in Redisson)
-- ARGV[2]  batch: the most members deleted
--
-- Deletes up to ARGV[2] members whose expiry has passed, the earliest
-- first. Returns {deleted, more}: more is 1 when the batch was full, so that
-- another call may find more. A key of another type is a WRONGTYPE error
-- (from ZRANGEBYSCORE), left unchanged.
--
-- prelude: setcache
local batch = tonumber(ARGV[2])
local due = redis.call('zrangebyscore', KEYS[1], '-inf', string.format('%d', scNow()), 'limit', 0, batch)
if #due == 0 then
    return {0, 0}
end
redis.call('zrem', KEYS[1], unpack(due))
local more = 0
if #due == batch then
    more = 1
end
return {#due, more}
