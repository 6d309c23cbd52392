-- Allocates the next block of ids of an id generator (Redisson's
-- RIdGenerator.nextId): the block starts at the counter, which advances by
-- the allocation size. A missing allocation size becomes 5000 and a missing
-- counter 1, as in Redisson.
-- KEYS[1] counter (name)
-- KEYS[2] allocation size ({name}:allocation)
-- Returns {first id of the block, allocation size}, both as strings; an
-- error, with nothing written, when either key holds another type or a
-- value that is not an integer, or the allocation size is not positive.
local value = redis.call('get', KEYS[1])
local stored = redis.call('get', KEYS[2])
local alloc = stored or '5000'
if not string.match(alloc, '^-?%d+$') then
    return redis.error_reply('ERR allocation size is not an integer')
end
if tonumber(alloc) < 1 then
    return redis.error_reply('ERR allocation size is not positive')
end
if value == false then
    redis.call('set', KEYS[1], 1)
    value = '1'
end
redis.call('incrby', KEYS[1], alloc)
if stored == false then
    redis.call('set', KEYS[2], alloc)
end
return {value, alloc}
