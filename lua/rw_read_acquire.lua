-- rw_read_acquire: take or re-enter the read side of a Redisson-compatible
-- read-write lock.
--
-- KEYS[1]  lock hash: 'mode' -> 'read' | 'write', <owner> -> read holds,
--          <owner>:write -> write holds
-- KEYS[2]  this owner's read-hold timeout prefix "{name}:<owner>:rwlock_timeout":
--          one string key "<prefix>:<n>" with the lease per re-entry level n
-- KEYS[3]  channel redisson_rwlock:{name} (unused here: readers do not announce)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field
-- ARGV[3]  the read hold count the owner had before this call
-- ARGV[4]  unused ('')
-- ARGV[5]  unused ('')
-- ARGV[6]  the owner's write field "<owner>:write" (a writer may also read)
--
-- Returns {count, 0} when held, or {0, pttl} when a writer (another owner)
-- holds the lock. Idempotent per call like lock_acquire.
local mode = redis.call('hget', KEYS[1], 'mode')
local lease = tonumber(ARGV[1])
if mode == false then
    redis.call('hset', KEYS[1], 'mode', 'read', ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':1', 1, 'px', lease)
    redis.call('pexpire', KEYS[1], lease)
    return {1, 0}
end
local held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
if held > 0 and held == tonumber(ARGV[3]) + 1 then
    -- A resend: report it, with the lease it asked for.
    redis.call('set', KEYS[2] .. ':' .. held, 1, 'px', lease)
    if redis.call('pttl', KEYS[1]) < lease then
        redis.call('pexpire', KEYS[1], lease)
    end
    return {held, 0}
end
if mode == 'read' or (mode == 'write' and redis.call('hexists', KEYS[1], ARGV[6]) == 1) then
    held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    redis.call('set', KEYS[2] .. ':' .. held, 1, 'px', lease)
    if redis.call('pttl', KEYS[1]) < lease then
        redis.call('pexpire', KEYS[1], lease)
    end
    return {held, 0}
end
return {0, redis.call('pttl', KEYS[1])}
