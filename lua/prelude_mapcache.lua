-- prelude_mapcache: what every MapCache script shares (Redisson's RMapCache
-- layout), used by mapcache_put, mapcache_get, mapcache_remove,
-- mapcache_read_all, mapcache_scan and mapcache_evict.
--
-- Every MapCache script takes the same KEYS:
--   KEYS[1]  the map: hash of encoded key -> entry, where an entry is an
--            8-byte little-endian IEEE double (max idle in ms, 0 = none), an
--            8-byte little-endian unsigned length n, then the n bytes of the
--            encoded value (Lua struct's 'dLc0', as Redisson packs it)
--   KEYS[2]  redisson__timeout__set:{name}: zset key -> absolute expiry (ms)
--   KEYS[3]  redisson__idle__set:{name}: zset key -> last access + max idle (ms)
--   KEYS[4]  redisson__map_cache__last_access__set:{name}: zset key -> last
--            access (ms, LRU) or access count (LFU), kept only with a max size
--   KEYS[5]  {name}:redisson_options: hash max-size, mode (LRU, LFU),
--            has-listeners
--   KEYS[6..9] the channels redisson_map_cache_created, _updated, _removed
--            and _expired:{name}
-- and ARGV[1] is the publish command ('publish' or 'spublish').
--
-- Event payloads (Redisson's): for each of key, value[, old value] an 8-byte
-- little-endian length and the encoded bytes. Created, updated and removed
-- are published only once has-listeners is set (as Redisson does); expired
-- always (as Redisson's eviction does).
--
-- Written without Lua's struct library, so that the scripts also run where it
-- is missing (an embedded Redis).
--
-- Clock: the Redis server's (TIME), in ms.
--
-- Defines local functions, and runs nothing itself:
--   mcNow()                 the server time in ms
--   mcValue(entry)          the encoded value inside an entry (the whole
--                           entry when it is too short to have a header)
--   mcMaxIdle(entry)        the entry's max idle in ms (0: none or unreadable)
--   mcPublish(i, ...)       publishes the payload of the strings ... on
--                           channel KEYS[i]
--   mcOptions()             the options: max (max-size, 0 = none), lfu
--                           (mode LFU) and listening (has-listeners); it
--                           also reads the last-access zset's type
--   mcState(key[, o])       reads what decides an entry's fate, before any
--                           write (so a key of the wrong type fails the script
--                           first): the entry (or false), its timeout and
--                           idle scores (numbers or false), and the options
--                           (o, or read now)
--   mcDead(s, now)          reports whether state s is an entry that expired
--   mcDrop(key)             deletes key's entry and its zset members
--   mcTouch(key, s, now)    records an access of a live entry: moves its idle
--                           deadline, and its LRU time or LFU count
--   mcTrim(key, s, now)     with a max size, evicts least used entries (not
--                           key) until the map fits, publishing removed
--   mcPut(key, mode, entry, ttl, idle[, expect])  mapcache_put's write (see there):
--                           returns {stored, previous live entry or false}
--   mcRemove(key)           mapcache_remove's (see there): returns the
--                           removed live entry or false
--
-- The functions read the keys and the publish command through mcK (KEYS) and
-- mcPub (ARGV[1]): a script with another layout (tx_commit) points them at
-- its own before each call.
local mcK, mcPub = KEYS, ARGV[1]

local function mcNow()
    local t = redis.call('time')
    return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

local function mcU64(s, at)
    local n = 0
    for i = at + 7, at, -1 do
        n = n * 256 + string.byte(s, i)
    end
    return n
end

local function mcLen8(n)
    local f = math.floor
    return string.char(n % 256, f(n / 256) % 256, f(n / 65536) % 256, f(n / 16777216) % 256,
        f(n / 4294967296) % 256, f(n / 1099511627776) % 256, 0, 0)
end

local function mcValue(entry)
    if #entry < 16 then
        return entry
    end
    local n = mcU64(entry, 9)
    return string.sub(entry, 17, 16 + n)
end

local function mcMaxIdle(entry)
    if #entry < 16 then
        return 0
    end
    local b = {string.byte(entry, 1, 8)}
    local exp = (b[8] % 128) * 16 + math.floor(b[7] / 16)
    if b[8] >= 128 or exp == 2047 then
        return 0 -- negative, infinite or NaN: no max idle
    end
    local mant = b[7] % 16
    for i = 6, 1, -1 do
        mant = mant * 256 + b[i]
    end
    if exp == 0 then
        return 0 -- zero or subnormal: below 1 ms
    end
    return math.floor((1 + mant / 4503599627370496) * 2 ^ (exp - 1023))
end

local function mcPublish(i, ...)
    local parts = {}
    for _, s in ipairs({...}) do
        parts[#parts + 1] = mcLen8(#s)
        parts[#parts + 1] = s
    end
    redis.call(mcPub, mcK[i], table.concat(parts))
end

local function mcOptions()
    local o = redis.call('hmget', mcK[5], 'max-size', 'mode', 'has-listeners')
    -- mcDrop writes the last-access zset with or without a max size: its
    -- type, before any write.
    redis.call('zcard', mcK[4])
    return {max = tonumber(o[1]) or 0, lfu = o[2] == 'LFU', listening = o[3] ~= false}
end

local function mcState(key, o)
    o = o or mcOptions()
    local s = {max = o.max, lfu = o.lfu, listening = o.listening}
    s.entry = redis.call('hget', mcK[1], key)
    local t = redis.call('zscore', mcK[2], key)
    local i = redis.call('zscore', mcK[3], key)
    s.timeout = t and tonumber(t)
    s.idle = i and tonumber(i)
    return s
end

local function mcDead(s, now)
    return s.entry ~= false and ((s.timeout and s.timeout <= now) or (s.idle and s.idle <= now))
end

local function mcDrop(key)
    redis.call('hdel', mcK[1], key)
    redis.call('zrem', mcK[2], key)
    redis.call('zrem', mcK[3], key)
    redis.call('zrem', mcK[4], key)
end

local function mcTouch(key, s, now)
    local idle = mcMaxIdle(s.entry)
    if idle > 0 and s.idle then
        redis.call('zadd', mcK[3], now + idle, key)
    end
    if s.max > 0 then
        if s.lfu then
            redis.call('zincrby', mcK[4], 1, key)
        else
            redis.call('zadd', mcK[4], now, key)
        end
    end
end

local function mcTrim(key, s, now)
    if s.max <= 0 then
        return
    end
    local excess = redis.call('hlen', mcK[1]) - s.max
    if excess <= 0 then
        return
    end
    for _, k in ipairs(redis.call('zrange', mcK[4], 0, excess)) do
        if excess == 0 then
            break
        end
        if k ~= key then
            local e = redis.call('hget', mcK[1], k)
            mcDrop(k)
            if e then
                if s.listening then
                    mcPublish(8, k, mcValue(e))
                end
                excess = excess - 1
            end
        end
    end
end

local function mcPut(key, mode, entry, ttl, idle, expect)
    local now = mcNow()
    local s = mcState(key)
    if mcDead(s, now) then
        mcDrop(key)
        mcPublish(9, key, mcValue(s.entry))
        s.entry = false
        s.timeout, s.idle = false, false
    end
    local old = s.entry
    if mode == 'absent' and old then
        mcTouch(key, s, now)
        return {0, old}
    end
    if mode == 'same' and old ~= expect then
        return {0, old}
    end
    if ttl > 0 then
        redis.call('zadd', mcK[2], now + ttl, key)
    elseif s.timeout then
        redis.call('zrem', mcK[2], key)
    end
    if idle > 0 then
        redis.call('zadd', mcK[3], now + idle, key)
    elseif s.idle then
        redis.call('zrem', mcK[3], key)
    end
    redis.call('hset', mcK[1], key, entry)
    if s.max > 0 then
        s.entry = entry
        s.idle = false -- just set: no idle move
        mcTouch(key, s, now)
        mcTrim(key, s, now)
    end
    if s.listening then
        if old then
            mcPublish(7, key, mcValue(entry), mcValue(old))
        else
            mcPublish(6, key, mcValue(entry))
        end
    end
    return {1, old}
end

local function mcRemove(key)
    local now = mcNow()
    local s = mcState(key)
    if not s.entry then
        return false
    end
    mcDrop(key)
    if mcDead(s, now) then
        mcPublish(9, key, mcValue(s.entry))
        return false
    end
    if s.listening then
        mcPublish(8, key, mcValue(s.entry))
    end
    return s.entry
end
