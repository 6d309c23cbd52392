-- prelude_lease: setting a held lock's lease where it may get shorter (a
-- re-entry with a shorter lease, a partial release, the last long read hold
-- leaving), used by lock_acquire, fair_acquire, rw_write_acquire and the
-- releases.
--
-- Waiters bound each wait by the remaining lease their last try reported, so
-- a lease that shrinks without a message would let them sleep past a free
-- lock. setLease tells them with the lease-change message: a negative number,
-- -1 - <the new lease in ms>. Redisson's lock listeners act on 0 and 1 only,
-- and this library's older clients on 0, 1 and n >= 2 ("taken") only: both
-- ignore it; this library's waiters try again and re-arm their bound (see
-- lockWakePolicy).
--
-- A lease shorter by at most 10 ms is no news: expiries that one script
-- (ours or Redisson's) sets with separate commands differ by a millisecond
-- when the server's clock ticks between them, so a read hold leaving can
-- leave the hash 1 ms shorter than it was; a waiter that sleeps up to 10 ms
-- past such a lease only tries that much later.
--
-- Defines local functions, and runs nothing itself:
--   setLease(key, ms, channel, pub)  PEXPIREs key to ms (a string or a
--       number); when that shortens its lease by more than 10 ms (or gives
--       an expiry to a key without one) and pub is a publish command
--       ('publish' or 'spublish'; '' or nil: none), publishes the
--       lease-change message on channel.
local function setLease(key, ms, channel, pub)
    local before = redis.call('pttl', key)
    ms = tonumber(ms)
    redis.call('pexpire', key, ms)
    if pub and pub ~= '' and (before == -1 or before > ms + 10) then
        redis.call(pub, channel, string.format('%d', -1 - ms))
    end
end
