-- semaphore_acquire: try to take permits of a Redisson-compatible semaphore,
-- leaving enough for the reservation of the longest-waiting acquirer.
--
-- KEYS[1]  semaphore: string, the available permits (missing = 0)
-- KEYS[2]  reservation hash (redisson_sc_reservation:{name}): id, n, since;
--          held by the longest-waiting acquirer of this library
-- KEYS[3]  call marker (redisson_sc_call:{name}:<call id>): '1' once this
--          call took its permits, '0' once the call was cancelled
-- KEYS[4]  channel (redisson_sc:{name})
-- ARGV[1]  permits wanted (>= 1)
-- ARGV[2]  call id "<client uuid>:<n>"
-- ARGV[3]  ms this call has waited, or -1 when it may not reserve (it has
--          not waited yet)
-- ARGV[4]  call marker lifetime in ms (the retry window)
-- ARGV[5]  reservation lifetime in ms after this try
-- ARGV[6]  publish command: 'publish' or 'spublish'
--
-- Returns {1, left} when the permits were taken (left = permits still
-- available; 0 for a resent call), {0, available, reserved} when not (reserved = 1 when this call
-- holds the reservation now), {-1, 0} when the call was cancelled before.
--
-- Idempotent per call: a call resent after a lost reply finds its marker and
-- only reports the first result.
local done = redis.call('get', KEYS[3])
if done then
    if done == '1' then
        return {1, 0}
    end
    return {-1, 0}
end
-- GET first: a key of another type fails here, before any write.
local v = redis.call('get', KEYS[1])
if v then
    v = tonumber(v)
    if not v then
        return redis.error_reply('ERR value is not an integer or out of range')
    end
else
    v = 0
end
local n = tonumber(ARGV[1])
local waited = tonumber(ARGV[3])
local r = redis.call('hmget', KEYS[2], 'id', 'n', 'since')
local mine = r[1] == ARGV[2]
-- The reservation belongs to the acquirer that started waiting first
-- (Redis's clock, so client clocks do not matter): a waiter older than the
-- holder takes it over.
local since = tonumber(r[3])
if waited >= 0 and not mine then
    local t = redis.call('time')
    local started = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - waited
    if not r[1] or not since or started < since then
        mine, since = true, started
    end
end
local need = n
if r[1] and not mine then
    need = n + (tonumber(r[2]) or 0)
end
if v >= need then
    redis.call('decrby', KEYS[1], n)
    redis.call('set', KEYS[3], '1', 'px', ARGV[4])
    if r[1] and mine then
        -- The permits held back for a reservation are free again.
        redis.call('del', KEYS[2])
        if v - n > 0 then
            redis.call(ARGV[6], KEYS[4], v - n)
        end
    end
    return {1, v - n}
end
if not mine then
    return {0, v, 0}
end
if waited >= 0 then
    redis.call('hset', KEYS[2], 'id', ARGV[2], 'n', n, 'since', since)
    redis.call('pexpire', KEYS[2], ARGV[5])
end
return {0, v, 1}
