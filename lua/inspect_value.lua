-- inspect_value: read a string-valued object (Bucket, Semaphore,
-- CountDownLatch) and, optionally, a hash beside it. Writes nothing.
--
-- KEYS[1]  the string key
-- KEYS[2]  optional: a hash to read as well (a semaphore's waiters)
--
-- Returns {type, value, pttl, hash}: type = KEYS[1]'s Redis type ('none' when
-- absent), value its bytes (false when absent), pttl its PTTL, hash the
-- HGETALL of KEYS[2] (empty without it). Errors: WRONGTYPE when KEYS[1] is
-- not a string (or KEYS[2] not a hash).
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local h = {}
if KEYS[2] then
    h = redis.call('hgetall', KEYS[2])
end
return {t, redis.call('get', KEYS[1]) or false, redis.call('pttl', KEYS[1]), h}
