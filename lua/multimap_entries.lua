-- multimap_entries: every key with its values (Redisson's entries, read at
-- once).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  the values keys' prefix, {name}:
--
-- Returns {encoded key, {encoded values}, ...}; a key whose values key is
-- gone has none. Read-only.
--
-- prelude: multimap
local all = redis.call('hgetall', KEYS[1])
local out = {}
for i = 1, #all, 2 do
    out[#out + 1] = all[i]
    out[#out + 1] = mmAll(ARGV[2] .. all[i + 1])
end
return out
