-- bqueue_offer: append elements to a bounded queue if it has room for all
-- of them, taking that much free capacity (Redisson's
-- RBoundedBlockingQueue.offer).
--
-- KEYS[1]  free-capacity counter, redisson_bqs:{name}
-- KEYS[2]  queue: list of encoded elements
-- ARGV     the encoded elements
--
-- Returns 1 when appended, 0 when the free capacity is too small (nothing
-- changed). An error REDISSON_NOT_INITIALIZED when the capacity was never
-- set; a key of another type is a WRONGTYPE error, nothing changed.
local free = redis.call('get', KEYS[1])
if not free then
    return redis.error_reply('REDISSON_NOT_INITIALIZED capacity not set')
end
local t = redis.call('type', KEYS[2]).ok
if t ~= 'none' and t ~= 'list' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
free = tonumber(free)
if not free then
    return redis.error_reply('WRONGTYPE the free-capacity counter is not an integer')
end
if free < #ARGV then
    return 0
end
redis.call('decrby', KEYS[1], #ARGV)
redis.call('rpush', KEYS[2], unpack(ARGV))
return 1
