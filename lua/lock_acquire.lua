-- lock_acquire: take or re-enter a Redisson-compatible reentrant lock.
--
-- KEYS[1]  lock hash: field <owner> -> hold count, PEXPIRE'd to the lease
-- KEYS[2]  fencing counter (string), advanced on every acquisition (see
--          prelude_fencing)
-- KEYS[3]  unlock channel (redisson_lock__channel:{name})
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field "<client uuid>:<owner number>"
-- ARGV[3]  the hold count the owner had before this call
-- ARGV[4]  publish command ('publish' or 'spublish'), for the announcement
--          and the lease-change message; '' for neither
-- ARGV[5]  the announcement of a new hold, or '' for none: 2 (taken by a
--          caller that had not waited) or 3 + the ms a waiter waited; other
--          clients cancel their deferred wake-ups (Redisson's lock listeners
--          act on 0 and 1 only)
-- ARGV[6]  the fencing counter's idle lifetime in ms ('0': no expiry)
--
-- Returns {count, token} when held (count = new hold count, token = fencing
-- token), or {0, pttl} when another owner holds the lock (pttl = its remaining
-- lease in ms, -1 when the key has no expiry). A re-entry that shortens the
-- lease publishes the lease-change message (prelude_lease).
--
-- Idempotent per call: when go-redis resends this call after a lost reply, the
-- hold count is already ARGV[3] + 1 and the script only reports it.
--
-- prelude: fencing, lease
--          (uses their nextToken, setLease)
local pttl = redis.call('pttl', KEYS[1])
local held = 0
if pttl ~= -2 then
    held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
    if held == 0 then
        return {0, pttl}
    end
    if held == tonumber(ARGV[3]) + 1 then
        -- A resend: report it. The expiry is set again, so that a field the
        -- caller adopts this way always carries the lease it asked for.
        setLease(KEYS[1], ARGV[1], KEYS[3], ARGV[4])
        return {held, tonumber(redis.call('get', KEYS[2]) or 0)}
    end
end
-- The counter first: if its key has the wrong type, nothing is written.
local token = nextToken(KEYS[2], ARGV[6])
if held == 0 then
    held = 1
    redis.call('hset', KEYS[1], ARGV[2], 1)
    redis.call('pexpire', KEYS[1], ARGV[1])
else
    held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    setLease(KEYS[1], ARGV[1], KEYS[3], ARGV[4])
end
if held == 1 and ARGV[5] ~= '' then
    redis.call(ARGV[4], KEYS[3], ARGV[5])
end
return {held, token}
