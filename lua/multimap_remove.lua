-- multimap_remove: remove one value of one key (Redisson's remove(key,
-- value)); the key leaves the index with its last value.
--
-- KEYS[1]  the index hash (prelude_multimap)
-- KEYS[2]  the key's values
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  encoded key
-- ARGV[3]  encoded value
--
-- Removes one occurrence of the value (the first, in a list). Returns 1 when
-- it removed one, else 0. A key of another type is a WRONGTYPE error before
-- anything is written.
--
-- prelude: multimap
redis.call('hlen', KEYS[1])
local n = mmRem(KEYS[2], ARGV[3])
if n > 0 and mmLen(KEYS[2]) == 0 then
    redis.call('hdel', KEYS[1], ARGV[2])
end
return n
