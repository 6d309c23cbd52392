-- prelude_permits: what the RPermitExpirableSemaphore scripts share
-- (permit_acquire, permit_available, permit_release, permit_update,
-- permit_leave; permit_add for isPermits): the permits' format, giving
-- permits back, and a lease's expiry. Joined after prelude_semqueue, whose
-- queue keys giveBack's scripts name with semQueueKeys.
--
-- KEYS[1]  available permits (string; missing = 0; may be negative)
-- KEYS[3]  channel redisson_sc:{name} (giveBack only; not permit_add's)
--
-- Defines locals, and runs nothing itself:
--   NONEXPIRING      the expiry score of a permit that never expires
--   notPermits       the WRONGTYPE message of permits that are not an integer
--   isPermits(raw)   reports whether raw (GET KEYS[1]) is missing or an
--                    integer
--   giveBack(n, publish)
--                    adds n permits to KEYS[1] and, when some are available
--                    then, publishes their number on KEYS[3] with the publish
--                    command, signed as the Semaphore's ('+3': Redisson
--                    reads the number, this library's waiters leave the
--                    wake-ups to the wake channels), and wakes the queued
--                    waiters they serve (semServe); returns the available
--                    permits
--   leaseExpiry(now, lease)
--                    the expiry score of a permit leased at now for lease ms
--                    (a string; 0 = never expires)
local NONEXPIRING = 922337203685477
local notPermits = 'WRONGTYPE semaphore permits are not an integer'

local function isPermits(raw)
    return not raw or string.match(raw, '^%-?%d+$') ~= nil
end

local function giveBack(n, publish)
    local available = redis.call('incrby', KEYS[1], n)
    if available > 0 then
        redis.call(publish, KEYS[3], '+' .. available)
        semServe(available, semNow(), publish)
    end
    return available
end

local function leaseExpiry(now, lease)
    local ms = tonumber(lease)
    if ms > 0 then
        return now + ms
    end
    return NONEXPIRING
end

