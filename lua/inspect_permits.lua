-- inspect_permits: read a permit-expirable semaphore (Redisson's
-- RPermitExpirableSemaphore layout). Writes nothing: permits whose lease
-- ended are reported, not returned to the count (the next call of a
-- semaphore client does that).
--
-- KEYS[1]  available permits (string)
-- KEYS[2]  held permits {name}:timeout (zset: permit id bytes -> expiry ms)
-- ARGV[1]  most held permits to return, soonest expiry first
--
-- Returns {countType, available, heldType, held, permits, now}: the Redis
-- types of both keys ('none' when absent), the count (false when absent),
-- the number of held permits, ZRANGE WITHSCORES of the first ARGV[1], and
-- the server's clock in ms. Errors: WRONGTYPE when a key holds another type.
local t1 = redis.call('type', KEYS[1])['ok']
local t2 = redis.call('type', KEYS[2])['ok']
if (t1 ~= 'none' and t1 ~= 'string') or (t2 ~= 'none' and t2 ~= 'zset') then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local now = redis.call('time')
return {t1, redis.call('get', KEYS[1]) or false, t2, redis.call('zcard', KEYS[2]),
    redis.call('zrange', KEYS[2], 0, tonumber(ARGV[1]) - 1, 'withscores'),
    tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)}
