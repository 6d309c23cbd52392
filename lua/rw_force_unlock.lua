-- rw_force_unlock: delete a read-write lock held in a given mode, whoever
-- holds it, and wake waiters.
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel redisson_rwlock:{name}
-- ARGV[1]  mode to release: 'read' or 'write'
-- ARGV[2]  publish command
-- ARGV[3]  message: 0 after readers, 1 after a writer
--
-- Returns 1 when the lock was held in that mode and deleted, 0 otherwise.
if redis.call('hget', KEYS[1], 'mode') == ARGV[1] then
    redis.call('del', KEYS[1])
    redis.call(ARGV[2], KEYS[2], ARGV[3])
    return 1
end
return 0
