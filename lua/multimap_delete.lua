-- multimap_delete: delete a multimap, its index and every values key
-- (Redisson's delete).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  the values keys' prefix, {name}:
--
-- Returns how many Redis keys it deleted. A key of another type at the index
-- is deleted as it is (whatever its type, like Redisson's delete).
--
-- prelude: multimap
local keys = {KEYS[1]}
if redis.call('type', KEYS[1]).ok == 'hash' then
    local all = redis.call('hgetall', KEYS[1])
    for i = 2, #all, 2 do
        keys[#keys + 1] = ARGV[2] .. all[i]
    end
end
local n = 0
for i = 1, #keys, 5000 do
    n = n + redis.call('del', unpack(keys, i, math.min(i + 4999, #keys)))
end
return n
