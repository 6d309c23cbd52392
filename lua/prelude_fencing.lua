-- prelude_fencing: the fencing counter of the exclusive locks (lock_acquire,
-- fair_acquire, rw_write_acquire): Redisson's redisson_lock_token:{name},
-- which Java's RFencedLock INCRs.
--
-- Defines local functions, and runs nothing itself:
--   nextToken(key, ttl, t)  sets the counter at key to the next token and
--       returns it: max(counter + 1, the server clock in microseconds). A
--       counter created anew (its key expired, or was lost to a restart
--       without persistence or to a FLUSHALL) thus starts above every token
--       handed out before, as long as the server clock did not step back by
--       more than the time the name stayed idle. ttl is the key's idle
--       lifetime in ms, renewed on every call; '0' makes the key permanent
--       (a SET without expiry, or PERSIST after INCR). A key of another
--       type, or a string that is no integer, fails (WRONGTYPE, or INCR's
--       error) before anything is written. t is the script's TIME reply
--       when it took one already (nil: nextToken takes it). Usually three
--       commands: GET, TIME, SET with PX.
local function nextToken(key, ttl, t)
    local cur = redis.call('get', key)
    t = t or redis.call('time')
    local sec, us = t[1], t[2]
    -- Below 2^53 (until the year 2255): exact in a Lua number.
    local now = tonumber(sec) * 1000000 + tonumber(us)
    if cur and (tonumber(cur) == nil or tonumber(cur) + 1 >= now) then
        -- Ahead of the clock (or no integer: INCR fails, nothing written).
        local token = redis.call('incr', key) -- INCR keeps the key's expiry
        if ttl == '0' then
            redis.call('persist', key)
        else
            redis.call('pexpire', key, ttl)
        end
        return token
    end
    -- The usual case, the clock ahead: one SET writes the token and renews
    -- the idle lifetime (without PX, SET drops any expiry, as PERSIST
    -- would). The decimal form is TIME's two fields joined, us padded to
    -- six digits: cheaper than string.format, exact at any size.
    local v = sec .. string.sub('000000', #us + 1) .. us
    if ttl == '0' then
        redis.call('set', key, v)
    else
        redis.call('set', key, v, 'px', ttl)
    end
    return now
end
