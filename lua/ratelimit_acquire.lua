-- ratelimit_acquire: one decision of a Redisson-compatible RRateLimiter:
-- grant n permits if the sliding window has room for them.
--
-- KEYS[1]  config hash {rate, interval (ms), type (0 overall, 1 per client),
--          keepAliveTime (ms, 0 = none)}
-- KEYS[2]  available permits of the overall scope ({name}:value, string)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits, zset)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- KEYS[6]  this library's checkpoint of the overall scope
--          ({name}:permits:sum, string "count|entries|used|newest member")
-- KEYS[7]  checkpoint of this client's scope ({name}:permits:<id>:sum)
-- ARGV[1]  permits wanted, n >= 1
-- ARGV[2]  16 random bytes naming this grant, chosen once per call
--
-- Returns {1, available, now} when the permits were granted (available =
-- permits left in the window, now = the grant's time), or {0, wait, now}
-- when not: wait = ms until enough logged permits leave the window.
-- Errors: NOTINIT (no config), EXCEEDS (n > rate), WRONGTYPE, BADENTRY (a
-- config field or log member not in Redisson's format: rate and interval
-- whole numbers >= 1, type 0 or 1, keepAliveTime a whole number); none
-- writes anything.
--
-- Log member: byte 16, the 16 random bytes, n as uint32 little-endian (what
-- Redisson writes with struct.pack('Bc0I', 16, bytes, n)); score = time of
-- the grant in ms since the epoch. A grant at t counts while now <= t +
-- interval: t and now are TIME floored to the ms, so the grant may have
-- been made up to 1ms after t, and counting it that ms longer keeps any
-- rate + 1 permits more than an interval apart by the server's clock.
--
-- Clock: the Redis server's (TIME).
--
-- The log is the truth. The permits it holds ("used") are kept in the
-- checkpoint with the count, the number of entries and the newest entry
-- this script left; when any of them differs, someone else wrote (a
-- Redisson client, whose count may have drifted) and used is recomputed
-- from the whole live log. Either way the count written is rate - used,
-- for Redisson clients, which read it.
--
-- Expiry: the scope's keys expire when the newest logged grant leaves the
-- window; the config hash slides by keepAliveTime when one is set.
--
-- prelude: ratelimit_config, ratelimit_log
--          (uses their rateConfig, badEntry, permitsOf, checkpointUsed,
--          windowUsed)
local rl, reply = rateConfig()
if not rl then
    return reply
end
local rate, interval = rl.rate, rl.interval
local valueKey, logKey, sumKey = rl.valueKey, rl.logKey, rl.sumKey
local n = tonumber(ARGV[1])
if n > rate then
    return redis.error_reply('EXCEEDS requested permits exceed the rate')
end
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local member = string.char(16) .. ARGV[2] ..
    string.char(n % 256, math.floor(n / 256) % 256, math.floor(n / 65536) % 256, math.floor(n / 16777216) % 256)
local mine = redis.call('zscore', logKey, member)
if mine then
    -- A resend of this call after a lost reply: already granted.
    return {1, 0, tonumber(mine)}
end

-- Permits of the log, checkpointed or recomputed; then expired entries out.
local value = redis.call('get', valueKey)
local entries = redis.call('zcard', logKey)
local sum = redis.call('get', sumKey)
local used = checkpointUsed(logKey, value, entries, sum)
local trusted = used ~= nil
-- span: the interval plus the ms that flooring TIME may have taken off t.
local span = interval + 1
local cutoff = now - span
local expired = redis.call('zrangebyscore', logKey, '-inf', cutoff)
used = windowUsed(logKey, cutoff, used, expired)
if not used then
    return redis.error_reply(badEntry)
end
if #expired > 0 then
    redis.call('zremrangebyscore', logKey, '-inf', cutoff)
    entries = entries - #expired
end
if rl.keepAlive > 0 then
    redis.call('pexpire', KEYS[1], rl.keepAlive)
end

-- save writes the count and the checkpoint and sets the scope's expiry:
-- when the newest entry leaves the window. (The log is not empty: a grant
-- just added to it, and a refusal means it holds permits.)
local function save(available)
    local newest = redis.call('zrange', logKey, -1, -1, 'withscores')
    local ttl = tonumber(newest[2]) + span - now
    redis.call('set', valueKey, available, 'px', ttl)
    redis.call('set', sumKey, string.format('%d|%d|%d|', available, entries, used) .. newest[1], 'px', ttl)
    redis.call('pexpire', logKey, ttl)
end

local available = rate - used
if available >= n then
    redis.call('zadd', logKey, now, member)
    entries = entries + 1
    used = used + n
    save(available - n)
    return {1, available - n, now}
end

-- Refused: wait until the oldest entries free enough permits (each entry
-- holds at least one, so at most need entries are read). The count may be
-- negative (after the rate was lowered), so that Redisson clients, which
-- add expired permits to it, stay right.
local need, freed, wait = n - available, 0, span
local oldest = redis.call('zrange', logKey, 0, need - 1, 'withscores')
for i = 1, #oldest, 2 do
    freed = freed + (permitsOf(oldest[i]) or 0)
    if freed >= need then
        wait = tonumber(oldest[i + 1]) + span - now
        break
    end
end
if #expired > 0 or not trusted or tonumber(value) ~= available then
    save(available)
end
return {0, wait, now}
