-- fair_release: drop one hold of a Redisson-compatible fair lock; the last one
-- deletes the lock and wakes the first live waiter on its own channel.
--
-- KEYS[1]  lock hash
-- KEYS[2]  channel prefix redisson_lock__channel:{name}; a waiter listens on
--          "<prefix>:<owner>"
-- KEYS[3]  unlock latch of this hold (see lock_release.lua)
-- KEYS[4]  queue redisson_lock_queue:{name}
-- KEYS[5]  zset redisson_lock_timeout:{name}
-- KEYS[6]  zset redisson_lock_alive:{name} (see fair_acquire.lua)
-- ARGV[1]  owner field
-- ARGV[2]  the hold count the owner had before this call (>= 1)
-- ARGV[3]  lease in ms to keep on the hash when holds remain
-- ARGV[4]  latch lifetime in ms
-- ARGV[5]  publish command
--
-- Returns {count, receivers} as lock_release.
--
-- prelude: lease, release_latch
--          (uses its releaseHeld, dropHold, setLatch)
local held, reply = releaseHeld()
if not held then
    return reply
end
if held > 1 then
    -- A shorter lease is news for the head of the queue, on its own channel.
    local head = redis.call('lindex', KEYS[4], 0)
    if head then
        return {dropHold(KEYS[2] .. ':' .. head), 0}
    end
    return {dropHold(), 0}
end
redis.call('del', KEYS[1])
setLatch()
-- The clock is read only when someone waits: most releases find no queue.
local head = redis.call('lindex', KEYS[4], 0)
if not head then
    return {0, 0}
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
while true do
    local alive = tonumber(redis.call('zscore', KEYS[6], head))
    local deadline = tonumber(redis.call('zscore', KEYS[5], head))
    if (alive ~= nil and alive > now) or (alive == nil and deadline ~= nil and deadline > now) then
        return {0, redis.call(ARGV[5], KEYS[2] .. ':' .. head, 0)}
    end
    redis.call('lpop', KEYS[4])
    redis.call('zrem', KEYS[5], head)
    redis.call('zrem', KEYS[6], head)
    head = redis.call('lindex', KEYS[4], 0)
    if not head then
        return {0, 0}
    end
end
