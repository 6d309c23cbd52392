-- lock_release: drop one hold of a Redisson-compatible reentrant lock.
--
-- KEYS[1]  lock hash: field <owner> -> hold count
-- KEYS[2]  unlock channel (redisson_lock__channel:{name})
-- KEYS[3]  unlock latch of this hold (redisson_unlock_latch:{name}:<token>):
--          set by a full release, so that the same call resent after a lost
--          reply is recognised; lives for the retry window at most
-- ARGV[1]  owner field "<client uuid>:<owner number>"
-- ARGV[2]  the hold count the owner had before this call (>= 1)
-- ARGV[3]  lease in ms to keep on the hash when holds remain
-- ARGV[4]  latch lifetime in ms
-- ARGV[5]  publish command: 'publish' or 'spublish'
--
-- Returns {count, receivers}: count = the new hold count (0 = released: key
-- deleted and the unlock message 0 published to receivers clients), or -1
-- when the owner does not hold the lock.
--
-- Idempotent per call: a resent call finds either its latch (full release) or
-- the count already at ARGV[2] - 1 (partial release) and only reports it.
--
-- prelude: lease, release_latch
--          (uses its releaseHeld, dropHold, setLatch)
local held, reply = releaseHeld()
if not held then
    return reply
end
if held > 1 then
    return {dropHold(KEYS[2]), 0}
end
redis.call('del', KEYS[1])
local receivers = redis.call(ARGV[5], KEYS[2], 0)
setLatch()
return {0, receivers}
