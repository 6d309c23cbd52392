-- keyed_reset: forget one identity of a keyed limiter (FixedWindowLimiter,
-- GCRALimiter), so that its next decision sees a full allowance. Only a
-- key holding such a limiter's state is deleted.
--
-- KEYS[1]  identity state <name>:{<key>}: a string of decimal digits (a
--          fixed window's count or a GCRA TAT)
--
-- Returns 1 when the state was deleted, 0 when there was none. A key holding
-- another type, or a string that is not digits, is an error starting with
-- WRONGTYPE and is left unchanged.
local t = redis.call('type', KEYS[1])['ok']
if t == 'none' then
    return 0
end
if t ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local v = redis.call('get', KEYS[1])
if not string.match(v, '^%d+$') then
    return redis.error_reply('WRONGTYPE keyed limiter state is not a count or a time')
end
redis.call('del', KEYS[1])
return 1
