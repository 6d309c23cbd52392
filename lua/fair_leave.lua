-- fair_leave: take a waiter out of a fair lock's queue (it gave up) and, if
-- it was first while the lock is free, wake the next one.
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel prefix redisson_lock__channel:{name}
-- KEYS[3]  queue redisson_lock_queue:{name}
-- KEYS[4]  zset redisson_lock_timeout:{name}
-- KEYS[5]  zset redisson_lock_alive:{name}
-- ARGV[1]  owner field
-- ARGV[2]  publish command
-- ARGV[3]  Redisson's wait allowance in ms: the waiters behind move up by it
--
-- Returns 1 when the waiter was queued, 0 otherwise.
local queue = redis.call('lrange', KEYS[3], 0, -1)
local behind = false
for i = 1, #queue do
    if behind then
        redis.call('zincrby', KEYS[4], -tonumber(ARGV[3]), queue[i])
    elseif queue[i] == ARGV[1] then
        behind = true
    end
end
local was = redis.call('zrem', KEYS[4], ARGV[1])
redis.call('zrem', KEYS[5], ARGV[1])
redis.call('lrem', KEYS[3], 0, ARGV[1])
if redis.call('exists', KEYS[1]) == 0 then
    local head = redis.call('lindex', KEYS[3], 0)
    if head then
        redis.call(ARGV[2], KEYS[2] .. ':' .. head, 0)
    end
end
return was
