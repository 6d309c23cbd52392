-- rw_read_release: drop one read hold of a Redisson-compatible read-write lock.
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel redisson_rwlock:{name}
-- KEYS[3]  unlock latch of this hold (see lock_release.lua)
-- KEYS[4]  this owner's read-hold timeout prefix
-- KEYS[5]  key prefix "{name}" of every owner's timeout keys
-- ARGV[1]  owner field
-- ARGV[2]  the read hold count the owner had before this call (>= 1)
-- ARGV[3]  unused (lease)
-- ARGV[4]  latch lifetime in ms
-- ARGV[5]  publish command: 'publish' or 'spublish'
--
-- Returns {count, receivers}: the owner's new read hold count (-1: it held
-- none), and how many clients got the unlock message 0 when the last hold of
-- the lock went (0 otherwise). While other holds remain, the hash lives as
-- long as the longest remaining read hold (Redisson's rule); when that
-- shortens its lease, the lease-change message is published (prelude_lease),
-- so that a waiting writer re-arms its bound.
--
-- prelude: lease, release_latch
--          (uses their setLease, releaseHeld, setLatch)
local held, reply = releaseHeld()
if not held then
    return reply
end
-- The owner's last read hold drops its field (no HINCRBY to 0 first).
local count = held - 1
if count == 0 then
    redis.call('hdel', KEYS[1], ARGV[1])
    setLatch()
else
    redis.call('hincrby', KEYS[1], ARGV[1], -1)
end
redis.call('del', KEYS[4] .. ':' .. held)
if redis.call('hlen', KEYS[1]) > 1 then
    local remain = -3
    for _, field in ipairs(redis.call('hkeys', KEYS[1])) do
        local n = tonumber(redis.call('hget', KEYS[1], field))
        if n ~= nil then
            for i = n, 1, -1 do
                remain = math.max(remain, redis.call('pttl', KEYS[5] .. ':' .. field .. ':rwlock_timeout:' .. i))
            end
        end
    end
    if remain > 0 then
        setLease(KEYS[1], remain, KEYS[2], ARGV[5])
        return {count, 0}
    end
    if redis.call('hget', KEYS[1], 'mode') == 'write' then
        return {count, 0}
    end
end
redis.call('del', KEYS[1])
return {count, redis.call(ARGV[5], KEYS[2], 0)}
