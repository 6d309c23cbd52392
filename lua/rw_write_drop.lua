-- rw_write_drop: remove one owner's write holds from a read-write lock,
-- whatever their count, like a final write unlock (see lock_drop_owner.lua
-- for when the watchdog needs it).
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel redisson_rwlock:{name}
-- ARGV[1]  the owner's write field
-- ARGV[2]  publish command
--
-- Returns 1 when the field was removed, 0 when it was not there.
if redis.call('hexists', KEYS[1], ARGV[1]) == 0 then
    return 0
end
redis.call('hdel', KEYS[1], ARGV[1])
if redis.call('hlen', KEYS[1]) <= 1 then
    redis.call('del', KEYS[1])
else
    redis.call('hset', KEYS[1], 'mode', 'read')
end
redis.call(ARGV[2], KEYS[2], 1)
return 1
