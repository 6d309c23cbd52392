-- mapcache_evict: one bounded batch of a MapCache's background eviction
-- (Redisson's EvictionScheduler task for RMapCache).
--
-- KEYS     as prelude_mapcache says
-- ARGV[1]  publish command
-- ARGV[2]  batch: the most entries taken from each of the timeout and idle
--          zsets
--
-- Deletes up to ARGV[2] entries whose TTL ran out and up to ARGV[2] whose max
-- idle did (the earliest first), with their zset members, and publishes each
-- deleted entry as expired. Returns {deleted, more}: more is 1 when a zset
-- had a full batch due, so that another call may find more. A key of the
-- wrong type fails the script before anything is written.
--
-- prelude: mapcache
-- The types of every key written, before any write: a failed script leaves
-- the map as it was.
redis.call('hlen', KEYS[1])
for k = 2, 4 do
    redis.call('zcard', KEYS[k])
end
local now = mcNow()
local batch = tonumber(ARGV[2])
local deleted, more = 0, 0
for z = 2, 3 do
    local due = redis.call('zrangebyscore', KEYS[z], '-inf', now, 'limit', 0, batch)
    if #due > 0 then
        if #due == batch then
            more = 1
        end
        local entries = redis.call('hmget', KEYS[1], unpack(due))
        for i, key in ipairs(due) do
            local e = entries[i]
            if e then
                mcPublish(9, key, mcValue(e))
                deleted = deleted + 1
            end
        end
        redis.call('hdel', KEYS[1], unpack(due))
        for k = 2, 4 do
            redis.call('zrem', KEYS[k], unpack(due))
        end
    end
end
return {deleted, more}
