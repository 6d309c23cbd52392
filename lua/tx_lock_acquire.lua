-- tx_lock_acquire: take a transaction's lock on one object (or map key), as
-- Redisson's RTransaction does: the plain reentrant lock of lock_acquire,
-- without the fencing counter (Redisson's transaction locks take none, and a
-- counter per locked map key would outlive the transaction by a day).
--
-- KEYS[1]  lock hash (<bucket>:transaction_lock, {<map>}:<key id>:lock):
--          field <owner> -> hold count, PEXPIRE'd to the lease
-- KEYS[2]  not read (the lock kinds share one KEYS layout)
-- KEYS[3]  unlock channel (redisson_lock__channel:{<lock hash>})
-- ARGV[1]  lease in milliseconds (the transaction's timeout)
-- ARGV[2]  owner field "<client uuid>:<owner number>:<transaction id>"
-- ARGV[3]  the hold count the owner had before this call
-- ARGV[4]  publish command ('publish' or 'spublish'), or '' for none
-- ARGV[5]  the announcement of a new hold (see lock_acquire), or ''
--
-- Returns {count, 0} when held, or {0, pttl} when another owner holds the
-- lock (pttl = its remaining lease in ms, -1 when the key has no expiry).
-- Idempotent per call, as lock_acquire is.
--
-- prelude: lease
--          (uses its setLease)
local pttl = redis.call('pttl', KEYS[1])
local held = 0
if pttl ~= -2 then
    held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
    if held == 0 then
        return {0, pttl}
    end
    if held == tonumber(ARGV[3]) + 1 then
        setLease(KEYS[1], ARGV[1], KEYS[3], ARGV[4])
        return {held, 0}
    end
end
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
return {held, 0}
