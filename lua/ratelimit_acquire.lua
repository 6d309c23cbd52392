-- ratelimit_acquire: one decision of a Redisson-compatible RRateLimiter:
-- grant n permits if the sliding window has room for them.
--
-- KEYS[1]  config hash {rate, interval (ms), type (0 overall, 1 per client),
--          keepAliveTime (ms, 0 = none)}
-- KEYS[2]  available permits of the overall scope ({name}:value, string)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits, zset)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- ARGV[1]  permits wanted, n >= 1
-- ARGV[2]  16 random bytes naming this grant, chosen once per call
--
-- Returns {1, available, now} when the permits were granted (available =
-- permits left in the window, now = the grant's time), or {0, wait, now}
-- when not: wait = ms until enough logged permits leave the window.
-- Errors: NOTINIT (no config), EXCEEDS (n > rate), WRONGTYPE, BADENTRY (a
-- log member that is not Redisson's format); none writes anything.
--
-- Log member: byte 16, the 16 random bytes, n as uint32 little-endian (what
-- Redisson writes with struct.pack('Bc0I', 16, bytes, n)); score = time of
-- the grant in ms since the epoch. A grant at t counts while now < t +
-- interval, so at most rate permits are granted in any interval.
--
-- Clock: the Redis server's (TIME). The available count at KEYS[2|3] is
-- recomputed from the log on every call, never trusted: it is written only
-- for Redisson clients, which read it. The scope's keys expire when the
-- newest logged grant leaves the window; the config hash slides by
-- keepAliveTime when one is set.
local cfg = redis.call('hmget', KEYS[1], 'rate', 'interval', 'type', 'keepAliveTime')
local rate, interval = tonumber(cfg[1]), tonumber(cfg[2])
if not rate or not interval then
    return redis.error_reply('NOTINIT rate limiter is not initialized')
end
local valueKey, logKey = KEYS[2], KEYS[4]
if cfg[3] == '1' then
    valueKey, logKey = KEYS[3], KEYS[5]
end
local vt = redis.call('type', valueKey).ok
local lt = redis.call('type', logKey).ok
if (vt ~= 'none' and vt ~= 'string') or (lt ~= 'none' and lt ~= 'zset') then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local n = tonumber(ARGV[1])
if n > rate then
    return redis.error_reply('EXCEEDS requested permits exceed the rate')
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local member = string.char(16) .. ARGV[2] ..
    string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256, math.floor(n / 16777216) % 256)

-- Read the log: expired entries (score <= now - interval) and the live ones,
-- oldest first, with their permits.
local entries = redis.call('zrange', logKey, 0, -1, 'withscores')
local cutoff = now - interval
local expired, used, newest = 0, 0, nil
local scores, permits = {}, {}
for i = 1, #entries, 2 do
    local m, s = entries[i], tonumber(entries[i + 1])
    if #m ~= 21 or string.byte(m, 1) ~= 16 then
        return redis.error_reply('BADENTRY rate limiter log entry is not in Redisson format')
    end
    if m == member then
        -- A resend of this call after a lost reply: already granted.
        return {1, 0, s}
    end
    if s <= cutoff then
        expired = expired + 1
    else
        local b1, b2, b3, b4 = string.byte(m, 18, 21)
        local p = b1 + b2 * 256 + b3 * 65536 + b4 * 16777216
        used = used + p
        scores[#scores + 1] = s
        permits[#permits + 1] = p
        newest = s
    end
end

if expired > 0 then
    redis.call('zremrangebyscore', logKey, '-inf', cutoff)
end
local keepAlive = tonumber(cfg[4]) or 0
if keepAlive > 0 then
    redis.call('pexpire', KEYS[1], keepAlive)
end

local available = rate - used
if available >= n then
    redis.call('zadd', logKey, now, member)
    available = available - n
    redis.call('set', valueKey, available)
    local ttl = math.max(newest or now, now) + interval - now
    redis.call('pexpire', valueKey, ttl)
    redis.call('pexpire', logKey, ttl)
    return {1, available, now}
end

-- Denied: wait until the oldest entries free enough permits. The count
-- written may be negative (after the rate was lowered), so that Redisson
-- clients, which add expired permits to it, stay right.
local need, freed, wait = n - available, 0, interval
for i = 1, #scores do
    freed = freed + permits[i]
    if freed >= need then
        wait = scores[i] + interval - now
        break
    end
end
if redis.call('get', valueKey) ~= tostring(available) then
    redis.call('set', valueKey, available)
    redis.call('pexpire', valueKey, newest + interval - now)
    redis.call('pexpire', logKey, newest + interval - now)
end
return {0, wait, now}
