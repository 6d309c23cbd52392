-- rw_write_acquire: take or re-enter the write side of a Redisson-compatible
-- read-write lock.
--
-- KEYS[1]  lock hash ('mode', <owner>, <owner>:write)
-- KEYS[2]  fencing counter (string), advanced on every write acquisition
--          (see prelude_fencing)
-- KEYS[3]  channel redisson_rwlock:{name}
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  the owner's write field "<owner>:write"
-- ARGV[3]  the write hold count the owner had before this call
-- ARGV[4]  publish command, or '' (see lock_acquire)
-- ARGV[5]  the announcement of a new hold, or '' (see lock_acquire)
-- ARGV[6]  the fencing counter's idle lifetime in ms ('0': no expiry)
--
-- Returns {count, token} when held, or {0, pttl} when readers or another
-- writer hold the lock. A re-entry that shortens the lease publishes the
-- lease-change message (prelude_lease). Idempotent per call like
-- lock_acquire.
--
-- prelude: fencing, lease
--          (uses their nextToken, setLease)
local mode = redis.call('hget', KEYS[1], 'mode')
local held = 0
if mode ~= false then
    held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
    if held == 0 then
        return {0, redis.call('pttl', KEYS[1])}
    end
    if held == tonumber(ARGV[3]) + 1 then
        setLease(KEYS[1], ARGV[1], KEYS[3], ARGV[4])
        return {held, tonumber(redis.call('get', KEYS[2]) or 0)}
    end
end
local token = nextToken(KEYS[2], ARGV[6])
if mode == false then
    held = 1
    redis.call('hset', KEYS[1], 'mode', 'write', ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
else
    held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    setLease(KEYS[1], ARGV[1], KEYS[3], ARGV[4])
end
if held == 1 and ARGV[5] ~= '' then
    redis.call(ARGV[4], KEYS[3], ARGV[5])
end
return {held, token}
