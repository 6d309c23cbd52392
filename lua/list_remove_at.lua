-- list_remove_at: remove the element at an index of a List and return it,
-- shifting the elements after it one place down (Redisson's
-- RList.remove(int index)).
-- prelude: list
--
-- KEYS[1]  list: encoded elements
-- ARGV[1]  index, 0 <= index (checked by the caller)
--
-- Returns the removed encoded element, or an error REDISSON_INDEX when
-- index is not below the size (nothing written). The shorter side of the
-- index is taken off and pushed back. A key of another type is a WRONGTYPE
-- error (from LLEN), left unchanged.
local n = redis.call('llen', KEYS[1])
local i = tonumber(ARGV[1])
if i >= n then
  return redis.error_reply('REDISSON_INDEX ' .. i .. ' not below size ' .. n)
end
if i == 0 then
  return redis.call('lpop', KEYS[1])
end
if i == n - 1 then
  return redis.call('rpop', KEYS[1])
end
local v = redis.call('lindex', KEYS[1], i)
if i <= n - 1 - i then
  local head = redis.call('lrange', KEYS[1], 0, i - 1)
  redis.call('ltrim', KEYS[1], i + 1, -1)
  push_all('lpush', KEYS[1], head)
else
  local tail = redis.call('lrange', KEYS[1], i + 1, -1)
  redis.call('ltrim', KEYS[1], 0, i - 1)
  push_all('rpush', KEYS[1], tail)
end
return v
