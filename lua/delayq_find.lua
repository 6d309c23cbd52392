-- prelude: delayq
-- delayq_find: find the first pending element of a delayed queue, in offer
-- order, whose value is ARGV[1] (Redisson's RDelayedQueue.contains), and
-- with ARGV[2] = 1 remove it (Redisson's remove).
--
-- KEYS[1]  redisson_delay_queue:{dest}: list of elements in offer order
-- KEYS[2]  redisson_delay_queue_timeout:{dest}: zset of element -> due ms
-- ARGV[1]  encoded value
-- ARGV[2]  1 to remove the element found, 0 to only report it
--
-- Returns 1 when an element was found (and removed), 0 otherwise. A key of
-- another type is a WRONGTYPE error, and nothing is removed.
local err = delayqWrongType(KEYS[1], 'list') or delayqWrongType(KEYS[2], 'zset')
if err then
    return err
end
local n = redis.call('llen', KEYS[1])
for from = 0, n - 1, 100 do
    for _, e in ipairs(redis.call('lrange', KEYS[1], from, from + 99)) do
        if delayqValue(e) == ARGV[1] then
            if ARGV[2] == '1' then
                redis.call('zrem', KEYS[2], e)
                redis.call('lrem', KEYS[1], 1, e)
            end
            return 1
        end
    end
end
return 0
