-- prelude_multimap: what every ListMultimap and SetMultimap script shares
-- (Redisson's RListMultimap and RSetMultimap layout), used by the
-- multimap_*.lua scripts.
--
-- Layout: KEYS[1] is the multimap's index, a hash of encoded key -> id, the
-- id being the 22-character Base64 of the key's 128-bit HighwayHash; the
-- values of a key are at {name}:<id> (name:<id> when name has a hash tag), a
-- list (ListMultimap: insertion order, duplicates kept) or a set
-- (SetMultimap). Every script takes ARGV[1] = 'list' or 'set'.
--
-- Scripts that visit every key (size, entries, delete) build the values keys
-- from the prefix {name}: and the ids in the hash, as Redisson's do: those
-- keys are not in KEYS, but they share the hash's slot, so the scripts run
-- on a Cluster.
--
-- Defines local functions, and runs nothing itself:
--   mmList          true for a ListMultimap
--   mmLen(key)      the number of values at key (LLEN or SCARD)
--   mmAll(key)      the values at key (LRANGE 0 -1 or SMEMBERS)
--   mmAdd(key, at)  appends (RPUSH) or adds (SADD) ARGV[at..], in chunks;
--                   returns how many were added (pushed, for a list)
--   mmRem(key, v)   removes one occurrence of v (LREM 1 or SREM); returns 1
--                   when it removed one
local mmList = ARGV[1] == 'list'

local function mmLen(key)
    if mmList then
        return redis.call('llen', key)
    end
    return redis.call('scard', key)
end

local function mmAll(key)
    if mmList then
        return redis.call('lrange', key, 0, -1)
    end
    return redis.call('smembers', key)
end

local function mmAdd(key, at)
    local n = 0
    for i = at, #ARGV, 5000 do
        local j = math.min(i + 4999, #ARGV)
        if mmList then
            redis.call('rpush', key, unpack(ARGV, i, j))
            n = n + j - i + 1
        else
            n = n + redis.call('sadd', key, unpack(ARGV, i, j))
        end
    end
    return n
end

local function mmRem(key, v)
    if mmList then
        return redis.call('lrem', key, 1, v)
    end
    return redis.call('srem', key, v)
end
