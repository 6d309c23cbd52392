-- prelude_ratelimit_log: reading the grant log of the RRateLimiter scripts
-- (ratelimit_acquire, ratelimit_available); see ratelimit_acquire for the
-- log member's format and the checkpoint.
--
-- Reads no KEYS or ARGV itself: the scope's log key is passed in.
--
-- Defines locals, and runs nothing itself:
--   badEntry        the BADENTRY message of a log member not in Redisson's
--                   format
--   permitsOf(m)    the permits of log member m, or nil when it is not in
--                   Redisson's format (byte 16, 16 bytes, uint32 LE)
--   sumPermits(ms)  the permits of the members ms together, or nil when one
--                   is not in Redisson's format
--   checkpointUsed(logKey, value, entries, sum)
--                   the permits the checkpoint sum says the log holds, when
--                   it still describes the log (the count value, the number
--                   of entries and the newest member are those it recorded),
--                   else nil
--   windowUsed(logKey, cutoff, used, expired)
--                   the permits the log holds after cutoff: used (the
--                   checkpoint's, from checkpointUsed) less those of the
--                   entries at or before cutoff (expired, when the caller
--                   has read them, else read here), or, with no checkpoint
--                   (used nil), the sum of the entries after cutoff; nil
--                   when a member it reads is not in Redisson's format
local badEntry = 'BADENTRY rate limiter log entry is not in Redisson format'

local function permitsOf(m)
    if #m ~= 21 or string.byte(m, 1) ~= 16 then
        return nil
    end
    local b1, b2, b3, b4 = string.byte(m, 18, 21)
    return b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
end

local function sumPermits(ms)
    local total = 0
    for i = 1, #ms do
        local p = permitsOf(ms[i])
        if not p then
            return nil
        end
        total = total + p
    end
    return total
end

local function checkpointUsed(logKey, value, entries, sum)
    if sum and value and entries > 0 then
        local sv, se, su, sm = string.match(sum, '^(-?%d+)|(%d+)|(%d+)|(.*)$')
        if tonumber(sv) == tonumber(value) and tonumber(se) == entries and
            redis.call('zrange', logKey, -1, -1)[1] == sm then
            return tonumber(su)
        end
    end
    return nil
end

local function windowUsed(logKey, cutoff, used, expired)
    if used then
        local gone = sumPermits(expired or redis.call('zrangebyscore', logKey, '-inf', cutoff))
        return gone and used - gone
    end
    return sumPermits(redis.call('zrangebyscore', logKey, '(' .. cutoff, '+inf'))
end

