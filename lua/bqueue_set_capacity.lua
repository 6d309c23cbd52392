-- bqueue_set_capacity: set a bounded queue's capacity once (Redisson's
-- RBoundedBlockingQueue.trySetCapacity).
--
-- KEYS[1]  free-capacity counter, redisson_bqs:{name}
-- KEYS[2]  its channel, redisson_sc:redisson_bqs:{name}
-- ARGV[1]  the capacity
-- ARGV[2]  publish command: publish or spublish
--
-- Returns 1 when it set the counter (and published it), 0 when the
-- counter exists already (left alone); a key of another type is a
-- WRONGTYPE error.
if redis.call('get', KEYS[1]) then
    return 0
end
redis.call('set', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], ARGV[1])
return 1
