-- multimap_put: add values to one key of a ListMultimap or SetMultimap
-- (Redisson's put and putAll).
--
-- KEYS[1]  the index hash (prelude_multimap)
-- KEYS[2]  the key's values: {name}:<id>
-- ARGV[1]  'list' or 'set'
-- ARGV[2]  encoded key
-- ARGV[3]  id
-- ARGV[4..] encoded values (at least one)
--
-- Records the key in the index and appends (list) or adds (set) the values.
-- Returns how many values were added (a list adds them all). A key of
-- another type is a WRONGTYPE error before anything is written.
--
-- prelude: multimap
redis.call('hlen', KEYS[1])
mmLen(KEYS[2])
redis.call('hset', KEYS[1], ARGV[2], ARGV[3])
return mmAdd(KEYS[2], 4)
