-- prelude_keyed_shape: tell a keyed limiter's identity state from other
-- strings (inspect_key, inspect_keyed). The state of identity <key> of the
-- limiter <name> is the string <name>:{<key>}: a FixedWindowLimiter's
-- count, or a GCRALimiter's TAT in µs since the epoch, whose expiry is set
-- at the TAT (so that TAT/1000 and now + PTTL agree to a few ms).
--
-- Defines local functions, and runs nothing itself:
--   keyedShape(key)  returns shape, value, pttl, now: shape is 'gcra' (a
--       TAT that agrees with the PTTL within 10ms), 'fixedwindow' (any
--       other decimal string of at most 16 digits below 2^53) or '' (not
--       named <name>:{<key>}, not a string, or not digits); value the
--       string (false when absent or not read), pttl its PTTL, now the
--       server clock in µs. A string is read only when the name has the
--       shape and the value is at most 16 bytes.
local function keyedShape(key)
    local t = redis.call('time')
    local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
    local pttl = redis.call('pttl', key)
    if string.sub(key, -1) ~= '}' or not string.find(key, ':{', 1, true) then
        return '', false, pttl, now
    end
    if redis.call('type', key)['ok'] ~= 'string' or redis.call('strlen', key) > 16 then
        return '', false, pttl, now
    end
    local v = redis.call('get', key)
    if not string.match(v, '^%d+$') or tonumber(v) >= 9007199254740992 then
        return '', v, pttl, now
    end
    if pttl >= 0 and math.abs(tonumber(v) / 1000 - (math.floor(now / 1000) + pttl)) <= 10 then
        return 'gcra', v, pttl, now
    end
    return 'fixedwindow', v, pttl, now
end
