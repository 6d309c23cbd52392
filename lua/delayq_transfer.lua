-- prelude: delayq
-- delayq_transfer: move the due elements of a delayed queue into its
-- destination, at most ARGV[1] of them, in due order (Redisson's transfer
-- task). Due means a due time at or before the server's time. Each element
-- leaves the zset and the list in the same call that appends its value to
-- the destination, so an element is moved once however many clients run
-- this at the same time.
--
-- KEYS[1]  destination list
-- KEYS[2]  redisson_delay_queue_timeout:{dest}: zset of element -> due ms
-- KEYS[3]  redisson_delay_queue:{dest}: list of elements in offer order
-- ARGV[1]  most elements to move (>= 1)
--
-- Returns {elements moved, the earliest due time left (ms; -1 when none),
-- the server's time (ms)}. A key of another type is a WRONGTYPE error, and
-- nothing is moved.
local err = delayqWrongType(KEYS[1], 'list') or delayqWrongType(KEYS[2], 'zset')
    or delayqWrongType(KEYS[3], 'list')
if err then
    return err
end
local now = delayqNow()
local due = redis.call('zrangebyscore', KEYS[2], '-inf', now, 'limit', 0, tonumber(ARGV[1]))
if #due > 0 then
    local values = {}
    for i, e in ipairs(due) do
        values[i] = delayqValue(e)
        redis.call('lrem', KEYS[3], 1, e)
    end
    redis.call('rpush', KEYS[1], unpack(values))
    redis.call('zrem', KEYS[2], unpack(due))
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
local nextDue = -1
if first[2] then
    nextDue = tonumber(first[2])
end
return {#due, nextDue, now}
