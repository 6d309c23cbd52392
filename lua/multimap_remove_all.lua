-- multimap_remove_all: remove one key and return its values (Redisson's
-- removeAll(key)).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- KEYS[2]  the key's values
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  encoded key
--
-- Returns the values the key had (none when it was absent). A key of
-- another type is a WRONGTYPE error before anything is written.
--
-- prelude: multimap
redis.call('hlen', KEYS[1])
local old = mmAll(KEYS[2])
redis.call('hdel', KEYS[1], ARGV[2])
redis.call('del', KEYS[2])
return old
