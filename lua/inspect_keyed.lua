-- inspect_keyed: read one identity's state of a keyed limiter
-- (FixedWindowLimiter, GCRALimiter) without knowing its configuration.
-- Writes nothing.
--
-- KEYS[1]  identity state <name>:{<key>}
--
-- Returns {type, value, pttl, now, shape}: the key's Redis type ('none'
-- when absent), its value (false when absent), PTTL, the server clock in
-- µs, and keyedShape's shape ('gcra', 'fixedwindow' or ''). Errors:
-- WRONGTYPE when the key holds another type, or a string that is not a
-- limiter's state.
--
-- prelude: keyed_shape
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local shape, v, pttl, now = keyedShape(KEYS[1])
if t == 'string' and shape == '' then
    return redis.error_reply('WRONGTYPE keyed limiter state is not a count or a time')
end
return {t, v, pttl, now, shape}
