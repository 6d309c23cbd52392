-- prelude_release_latch: the release latch protocol of the lock releases
-- (lock_release, fair_release, rw_write_release, rw_read_release). A full
-- release sets the hold's latch key, so that the same call resent after a
-- lost reply finds it and only reports the release; a partial release is
-- recognised by the hold count, already one less than the caller had. It
-- comes after prelude_lease, whose setLease dropHold uses.
--
-- Why a key per hold, deleted by the client's janitor once the call has
-- returned: a key per name holding the last released token would be
-- overwritten by the next holder's release, on a contended lock within the
-- milliseconds before go-redis resends, and the resend would report a lost
-- lease. Nor can the lease deadline stand in for it: a field gone within
-- its lease is what our own earlier send leaves, but also what a forced
-- unlock or lost data leave, and those must be reported as lost. Only a
-- mark written by this release tells them apart.
--
-- KEYS[1]  lock hash: field <owner> -> hold count
-- KEYS[3]  unlock latch of this hold (redisson_unlock_latch:{name}:<token>)
-- ARGV[1]  the owner's field
-- ARGV[2]  the hold count the owner had before this call (>= 1)
-- ARGV[3]  lease in ms to keep on the hash when holds remain (dropHold)
-- ARGV[4]  latch lifetime in ms
-- ARGV[5]  publish command (dropHold's lease-change message)
--
-- Defines local functions, and runs nothing itself:
--   releaseHeld()  returns the owner's hold count (>= 1) when this call is to
--                  drop one; else nil and the reply to return: {0, 0} (the
--                  latch: a resent full release), {-1, 0} (not held), or
--                  {held, 0} (a resent partial release).
--   dropHold(ch)   drops one of several holds and keeps the lease on the
--                  hash; when that shortens it, the lease-change message
--                  goes to channel ch (nil: none; a fair lock passes its
--                  queue head's own channel); returns the new hold count.
--   setLatch()     marks this call's full release.
local function releaseHeld()
    local held = tonumber(redis.call('hget', KEYS[1], ARGV[1]) or 0)
    if held == 0 then
        if redis.call('exists', KEYS[3]) == 1 then
            return nil, {0, 0}
        end
        return nil, {-1, 0}
    end
    if held == tonumber(ARGV[2]) - 1 then
        return nil, {held, 0}
    end
    return held
end

local function dropHold(ch)
    local held = redis.call('hincrby', KEYS[1], ARGV[1], -1)
    if ch then
        setLease(KEYS[1], ARGV[3], ch, ARGV[5])
    else
        redis.call('pexpire', KEYS[1], ARGV[3])
    end
    return held
end

local function setLatch()
    redis.call('set', KEYS[3], 1, 'px', ARGV[4])
end

