-- multimap_size: the number of values of every key (Redisson's size).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  the values keys' prefix, {name}:
--
-- Returns the sum of the value counts. Read-only.
--
-- prelude: multimap
local all = redis.call('hgetall', KEYS[1])
local n = 0
for i = 2, #all, 2 do
    n = n + mmLen(ARGV[2] .. all[i])
end
return n
