-- lock_acquire: take or re-enter a Redisson-compatible reentrant lock.
--
-- KEYS[1]  lock hash: field <owner> -> hold count, PEXPIRE'd to the lease
-- KEYS[2]  fencing counter (string), INCR'd on every acquisition
-- KEYS[3]  this owner's unlock latch (see lock_release.lua), deleted when ARGV[4] == '1'
-- KEYS[4]  unlock channel (redisson_lock__channel:{name})
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field "<client uuid>:<owner number>"
-- ARGV[3]  the hold count the owner had before this call
-- ARGV[4]  '1' when the owner's previous release left an unlock latch to delete
-- ARGV[5]  publish command ('publish' or 'spublish') to announce a new hold on
--          the channel, or '' for no announcement
-- ARGV[6]  the announcement: a number >= 2 (a waiter took the lock after
--          waiting ARGV[6] - 2 ms; other clients cancel their deferred
--          wake-ups; Redisson's lock listeners act on 0 and 1 only)
--
-- Returns {count, token} when held (count = new hold count, token = fencing
-- token), or {0, pttl} when another owner holds the lock (pttl = its remaining
-- lease in ms, -1 when the key has no expiry).
--
-- Idempotent per call: when go-redis resends this call after a lost reply, the
-- hold count is already ARGV[3] + 1 and the script only reports it.
local held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
local before = tonumber(ARGV[3])
if ARGV[4] == '1' then
    redis.call('del', KEYS[3])
end
if held > 0 and held == before + 1 then
    return {held, tonumber(redis.call('get', KEYS[2]) or 0)}
end
if held == 0 and redis.call('exists', KEYS[1]) == 1 then
    return {0, redis.call('pttl', KEYS[1])}
end
held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
redis.call('pexpire', KEYS[1], ARGV[1])
if held == 1 and ARGV[5] ~= '' then
    redis.call(ARGV[5], KEYS[4], ARGV[6])
end
return {held, redis.call('incr', KEYS[2])}
