-- fair_force_unlock: delete a fair lock whoever holds it and wake the first
-- waiter.
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel prefix redisson_lock__channel:{name}
-- KEYS[3]  queue redisson_lock_queue:{name}
-- ARGV[1]  publish command
--
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
    local head = redis.call('lindex', KEYS[3], 0)
    if head then
        redis.call(ARGV[1], KEYS[2] .. ':' .. head, 0)
    end
    return 1
end
return 0
