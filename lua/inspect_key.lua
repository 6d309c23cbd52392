-- inspect_key: what ListObjects needs to name one key's kind. Writes
-- nothing.
--
-- KEYS[1]   any key
-- KEYS[2..] the companion keys a MapCache called KEYS[1] would have
--           (its timeout, idle and last-access zsets and its options
--           hash), those of them in KEYS[1]'s slot; possibly none
--
-- Returns {type, pttl, shape}: the Redis type ('none' when it went away
-- meanwhile), the PTTL, and for a hash its shape: 'mapcache' (a companion
-- key exists, or every value of the first HSCAN page has MapCache's entry
-- encoding: an 8-byte max idle, an 8-byte little-endian length and that
-- many bytes), 'rwlock' (a field 'mode'), 'ratelimiter' (fields 'rate' and
-- 'interval'), 'lock' (at most 64 fields, each an owner "<id>:<n>" or
-- "<id>:<n>:write" with an integer count), else 'map'; for a string named
-- <name>:{<key>} with an expiry, keyedShape's 'gcra' or 'fixedwindow' (a
-- keyed limiter's identity); for a zset 'setcache' when its highest score
-- is a SetCache's no-TTL score or its first 16 scores are all whole
-- milliseconds between 2001 and 2286 (member expiries); '' otherwise.
--
-- prelude: keyed_shape
local t = redis.call('type', KEYS[1])['ok']
local shape = ''

-- isEntry tells whether v is a MapCache entry: 16 bytes of header, the
-- second 8 the little-endian length of the rest.
local function isEntry(v)
    if #v < 16 then
        return false
    end
    local n = 0
    for i = 16, 9, -1 do
        n = n * 256 + string.byte(v, i)
    end
    return n == #v - 16
end

local function isMapCache()
    for i = 2, #KEYS do
        if redis.call('exists', KEYS[i]) == 1 then
            return true
        end
    end
    local page = redis.call('hscan', KEYS[1], '0', 'COUNT', 16)[2]
    if #page == 0 then
        return false
    end
    for i = 2, #page, 2 do
        if not isEntry(page[i]) then
            return false
        end
    end
    return true
end

if t == 'hash' then
    if isMapCache() then
        shape = 'mapcache'
    elseif redis.call('hexists', KEYS[1], 'mode') == 1 then
        shape = 'rwlock'
    elseif redis.call('hexists', KEYS[1], 'rate') == 1 and redis.call('hexists', KEYS[1], 'interval') == 1 then
        shape = 'ratelimiter'
    elseif redis.call('hlen', KEYS[1]) <= 64 then
        shape = 'lock'
        local fields = redis.call('hgetall', KEYS[1])
        for i = 1, #fields, 2 do
            local f = string.gsub(fields[i], ':write$', '')
            if not string.find(f, '^.+:%d+$') or not string.find(fields[i + 1], '^%d+$') then
                shape = 'map'
                break
            end
        end
    else
        shape = 'map'
    end
end
if t == 'zset' then
    local top = redis.call('zrange', KEYS[1], -1, -1, 'WITHSCORES')
    if #top == 2 and tonumber(top[2]) >= 92231924252552169 then
        shape = 'setcache'
    else
        local page = redis.call('zrange', KEYS[1], 0, 15, 'WITHSCORES')
        if #page > 0 then
            shape = 'setcache'
        end
        for i = 2, #page, 2 do
            local v = tonumber(page[i])
            if v ~= math.floor(v) or v < 1e12 or v >= 1e13 then
                shape = ''
                break
            end
        end
    end
end
if t == 'string' then
    local s, _, pttl = keyedShape(KEYS[1])
    if pttl >= 0 then
        shape = s
    end
end
return {t, redis.call('pttl', KEYS[1]), shape}
