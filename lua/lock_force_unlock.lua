-- lock_force_unlock: delete a lock whoever holds it and wake one waiter.
--
-- KEYS[1]  lock hash
-- KEYS[2]  unlock channel
-- ARGV[1]  publish command: 'publish' or 'spublish'
--
-- Returns 1 when a lock was deleted, 0 when there was none.
if redis.call('del', KEYS[1]) == 1 then
    redis.call(ARGV[1], KEYS[2], 0)
    return 1
end
return 0
