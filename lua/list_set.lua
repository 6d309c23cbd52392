-- list_set: replace the element at an index of a List and return the
-- previous one (Redisson's RList.set).
--
-- KEYS[1]  list: encoded elements
-- ARGV[1]  index, 0 <= index (checked by the caller)
-- ARGV[2]  encoded element
--
-- Returns the previous encoded element, or an error REDISSON_INDEX when
-- index is not below the size (nothing written). A key of another type is a
-- WRONGTYPE error (from LINDEX), left unchanged.
local old = redis.call('lindex', KEYS[1], ARGV[1])
if not old then
  return redis.error_reply('REDISSON_INDEX ' .. ARGV[1] .. ' not below the size')
end
redis.call('lset', KEYS[1], ARGV[1], ARGV[2])
return old
