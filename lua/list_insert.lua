-- list_insert: insert an element at an index of a List, shifting the
-- elements from there on one place up (Redisson's RList.add(index, e)).
-- prelude: list
--
-- KEYS[1]  list: encoded elements
-- ARGV[1]  index, 0 <= index (checked by the caller)
-- ARGV[2]  encoded element
--
-- Returns the list's new size, or an error REDISSON_INDEX when index is
-- above the size (nothing written). The shorter side of the index is taken
-- off and pushed back around the element. A key of another type is a
-- WRONGTYPE error (from LLEN), left unchanged.
local n = redis.call('llen', KEYS[1])
local i = tonumber(ARGV[1])
if i > n then
  return redis.error_reply('REDISSON_INDEX ' .. i .. ' above size ' .. n)
end
if i == n then
  return redis.call('rpush', KEYS[1], ARGV[2])
end
if i == 0 then
  return redis.call('lpush', KEYS[1], ARGV[2])
end
if i <= n - i then
  local head = redis.call('lrange', KEYS[1], 0, i - 1)
  redis.call('ltrim', KEYS[1], i, -1)
  redis.call('lpush', KEYS[1], ARGV[2])
  push_all('lpush', KEYS[1], head)
else
  local tail = redis.call('lrange', KEYS[1], i, -1)
  redis.call('ltrim', KEYS[1], 0, i - 1)
  redis.call('rpush', KEYS[1], ARGV[2])
  push_all('rpush', KEYS[1], tail)
end
return n + 1
