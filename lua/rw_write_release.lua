-- rw_write_release: drop one write hold of a Redisson-compatible read-write
-- lock. The last one deletes the lock, or downgrades it to read mode when the
-- owner also holds reads; either way readers are woken (message 1).
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel redisson_rwlock:{name}
-- KEYS[3]  unlock latch of this hold (see lock_release.lua)
-- ARGV[1]  the owner's write field "<owner>:write"
-- ARGV[2]  the write hold count the owner had before this call (>= 1)
-- ARGV[3]  lease in ms to keep on the hash when holds remain
-- ARGV[4]  latch lifetime in ms
-- ARGV[5]  publish command: 'publish' or 'spublish'
--
-- Returns {count, receivers} as rw_read_release.
--
-- prelude: lease, release_latch
--          (uses its releaseHeld, dropHold, setLatch)
local held, reply = releaseHeld()
if not held then
    return reply
end
if held > 1 then
    return {dropHold(KEYS[2]), 0}
end
-- 'mode' and the write field alone: the lock goes (one DEL, no HDEL
-- first); otherwise the owner's read holds stay, in read mode.
if redis.call('hlen', KEYS[1]) == 2 then
    redis.call('del', KEYS[1])
else
    redis.call('hdel', KEYS[1], ARGV[1])
    redis.call('hset', KEYS[1], 'mode', 'read')
end
setLatch()
return {0, redis.call(ARGV[5], KEYS[2], 1)}
