-- bqueue_poll: take the head of a bounded queue and release its capacity
-- (Redisson's RBoundedBlockingQueue.poll).
--
-- KEYS[1]  queue: list of encoded elements
-- KEYS[2]  free-capacity counter, redisson_bqs:{name}
-- KEYS[3]  its channel, redisson_sc:redisson_bqs:{name}
-- ARGV[1]  publish command: publish or spublish
--
-- Returns the element, or nil when the queue is empty; the new free
-- capacity is published.
local function counterOk(key)
    local t = redis.call('type', key).ok
    return t == 'none' or (t == 'string' and tonumber(redis.call('get', key)) ~= nil)
end
if not counterOk(KEYS[2]) then
    return redis.error_reply('WRONGTYPE the free-capacity counter is not an integer')
end
local v = redis.call('lpop', KEYS[1])
if v then
    local free = redis.call('incrby', KEYS[2], 1)
    redis.call(ARGV[1], KEYS[3], free)
end
return v
