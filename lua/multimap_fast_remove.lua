-- multimap_fast_remove: remove keys with their values (Redisson's
-- fastRemove).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- KEYS[2..] the keys' values, in the order of ARGV[2..]
-- ARGV[1]  'list' or 'set'
-- ARGV[2..] encoded keys
--
-- Returns how many of the keys were in the index. A hash of another type is
-- a WRONGTYPE error before anything is written.
--
-- prelude: multimap
redis.call('hlen', KEYS[1])
local n = 0
for i = 2, #ARGV, 5000 do
    local j = math.min(i + 4999, #ARGV)
    n = n + redis.call('hdel', KEYS[1], unpack(ARGV, i, j))
    redis.call('del', unpack(KEYS, i, j))
end
return n
