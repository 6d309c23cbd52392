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
local held = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or 0)
if held == 0 then
    if redis.call('exists', KEYS[3]) == 1 then
        return {0, 0}
    end
    return {-1, 0}
end
if held == tonumber(ARGV[2]) - 1 then
    return {held, 0}
end
if held > 1 then
    held = redis.call('hincrby', KEYS[1], ARGV[1], -1)
    redis.call('pexpire', KEYS[1], ARGV[3])
    return {held, 0}
end
redis.call('hdel', KEYS[1], ARGV[1])
redis.call('set', KEYS[3], 1, 'px', ARGV[4])
if redis.call('hlen', KEYS[1]) == 1 then
    redis.call('del', KEYS[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
end
return {0, redis.call(ARGV[5], KEYS[2], 1)}
