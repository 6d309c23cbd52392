-- lock_release: drop one hold of a Redisson-compatible reentrant lock.
--
-- KEYS[1]  lock hash: field <owner> -> hold count
-- KEYS[2]  unlock channel (redisson_lock__channel:{name})
-- KEYS[3]  this owner's unlock latch: remembers the last full release for a
--          resent call (string = request id, PX = retry window)
-- ARGV[1]  owner field "<client uuid>:<owner number>"
-- ARGV[2]  the hold count the owner had before this call (>= 1)
-- ARGV[3]  lease in ms to keep on the hash when holds remain
-- ARGV[4]  request id of this call
-- ARGV[5]  latch lifetime in ms
-- ARGV[6]  publish command: 'publish' or 'spublish'
--
-- Returns the new hold count (0 = released: key deleted and the unlock message
-- 0 published), or -1 when the owner does not hold the lock.
--
-- Idempotent per call: a resent call finds either its latch (full release) or
-- the count already at ARGV[2] - 1 (partial release) and only reports it.
local held = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or 0)
if held == 0 then
    if redis.call('get', KEYS[3]) == ARGV[4] then
        return 0
    end
    return -1
end
if held == tonumber(ARGV[2]) - 1 then
    return held
end
if held > 1 then
    held = redis.call('hincrby', KEYS[1], ARGV[1], -1)
    redis.call('pexpire', KEYS[1], ARGV[3])
    return held
end
redis.call('del', KEYS[1])
redis.call(ARGV[6], KEYS[2], 0)
redis.call('set', KEYS[3], ARGV[4], 'px', ARGV[5])
return 0
