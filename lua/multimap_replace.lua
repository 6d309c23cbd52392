-- multimap_replace: replace the values of one key and return the old ones
-- (Redisson's replaceValues).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- KEYS[2]  the key's values
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  encoded key
-- ARGV[3]  id
-- ARGV[4..] encoded new values (none: the key is removed)
--
-- Returns the values the key had. A key of another type is a WRONGTYPE
-- error before anything is written.
--
-- prelude: multimap
redis.call('hlen', KEYS[1])
local old = mmAll(KEYS[2])
redis.call('del', KEYS[2])
if #ARGV >= 4 then
    redis.call('hset', KEYS[1], ARGV[2], ARGV[3])
    mmAdd(KEYS[2], 4)
else
    redis.call('hdel', KEYS[1], ARGV[2])
end
return old
