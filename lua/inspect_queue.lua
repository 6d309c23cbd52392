-- inspect_queue: a queue's length, head and bounded capacity. Writes
-- nothing.
--
-- KEYS[1]  queue list
-- KEYS[2]  redisson_bqs:{name}, the bounded queue's free capacity
--
-- Returns {type, length, head, capacity}: type = the list's Redis type
-- ('none' when absent), length its LLEN, head its first element (false when
-- empty), capacity the counter's value (false when it does not exist).
-- Errors: WRONGTYPE when the list key or the counter is of another type.
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'list' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local ct = redis.call('type', KEYS[2])['ok']
if ct ~= 'none' and ct ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
return {t, redis.call('llen', KEYS[1]), redis.call('lindex', KEYS[1], 0), redis.call('get', KEYS[2])}
