-- prelude_delayq: what the delayed queue scripts (delayq_offer,
-- delayq_transfer, delayq_find) share: the type check of their keys, the
-- server's clock, and the layout of one pending element as Redisson writes
-- it: one byte n, n bytes of random id, the value's length as 8 bytes
-- little-endian, then the value (the destination's codec's bytes).
--
-- Defines locals, and runs nothing itself:
--   delayqWrongType(key, want)  the WRONGTYPE error reply when key holds a
--                               type other than want (or none); else nil
--   delayqNow()                 the server's time in ms since the Unix epoch
--   delayqValue(e)              the value inside element e, or e itself when
--                               e does not have the layout (a foreign writer)
local function delayqWrongType(key, want)
    local t = redis.call('type', key).ok
    if t ~= 'none' and t ~= want then
        return redis.error_reply('WRONGTYPE ' .. key .. ' holds a ' .. t .. ', not a ' .. want)
    end
    return nil
end

local function delayqNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function delayqValue(e)
    local idLen = string.byte(e, 1)
    if not idLen or #e < idLen + 9 then
        return e
    end
    local n = 0
    for i = idLen + 9, idLen + 2, -1 do
        n = n * 256 + string.byte(e, i)
    end
    if n ~= #e - idLen - 9 then
        return e
    end
    return string.sub(e, idLen + 10)
end
