-- fair_acquire: take or re-enter a Redisson-compatible fair lock, or wait in
-- its queue.
--
-- KEYS[1]  lock hash (as lock_acquire)
-- KEYS[2]  fencing counter
-- KEYS[3]  unused (the owner's channel; kept for the common argument shape)
-- KEYS[4]  queue redisson_lock_queue:{name}: owner fields in arrival order
-- KEYS[5]  zset redisson_lock_timeout:{name}: owner -> ms time after which a
--          waiter that has not shown up is dropped from the queue
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field
-- ARGV[3]  the hold count the owner had before this call
-- ARGV[4]  'wait' to join (or stay in) the queue when the lock is taken
-- ARGV[5]  unused
-- ARGV[6]  waiter lifetime in ms: a waiter must call again within it
--
-- Time is the Redis server's clock. Returns {count, token} when held, or
-- {0, pttl} when not (pttl of the holder, -1 for a queued turn without a
-- holder yet). Idempotent per call like lock_acquire.
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)

-- Drop waiters that stopped showing up (or have no timeout at all).
while true do
    local head = redis.call('lindex', KEYS[4], 0)
    if not head then
        break
    end
    local deadline = tonumber(redis.call('zscore', KEYS[5], head))
    if deadline ~= nil and deadline > now then
        break
    end
    redis.call('lpop', KEYS[4])
    redis.call('zrem', KEYS[5], head)
end

local pttl = redis.call('pttl', KEYS[1])
local held = 0
if pttl ~= -2 then
    held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
    if held > 0 and held == tonumber(ARGV[3]) + 1 then
        redis.call('pexpire', KEYS[1], ARGV[1])
        return {held, tonumber(redis.call('get', KEYS[2]) or 0)}
    end
end
local head = redis.call('lindex', KEYS[4], 0)
if held > 0 or (pttl == -2 and (head == false or head == ARGV[2])) then
    local token = redis.call('incr', KEYS[2])
    if held == 0 then
        if head == ARGV[2] then
            redis.call('lpop', KEYS[4])
        end
        redis.call('zrem', KEYS[5], ARGV[2])
        redis.call('hset', KEYS[1], ARGV[2], 1)
        held = 1
    else
        held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    end
    redis.call('pexpire', KEYS[1], ARGV[1])
    return {held, token}
end
if ARGV[4] == 'wait' then
    local deadline = now + tonumber(ARGV[6])
    if redis.call('zadd', KEYS[5], deadline, ARGV[2]) == 1 then
        redis.call('rpush', KEYS[4], ARGV[2])
    end
end
return {0, pttl}
