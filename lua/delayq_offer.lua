-- prelude: delayq
-- delayq_offer: schedule elements of a delayed queue (Redisson's
-- RDelayedQueue.offer), all due the same delay after the server's time.
--
-- KEYS[1]  destination list (not touched: it names the slot, as in Redisson)
-- KEYS[2]  redisson_delay_queue_timeout:{dest}: zset of element -> due ms
-- KEYS[3]  redisson_delay_queue:{dest}: list of elements in offer order
-- KEYS[4]  redisson_delay_queue_channel:{dest}
-- ARGV[1]  delay in ms (>= 0)
-- ARGV[2..] elements (see prelude_delayq), each with its own random id
--
-- When the earliest pending element is one of these, publishes its due time
-- (decimal ms) on KEYS[4], as Redisson does, so that every client running
-- the queue re-arms its timer. Returns the due time. A key of another type
-- is a WRONGTYPE error, and nothing is written.
local err = delayqWrongType(KEYS[2], 'zset') or delayqWrongType(KEYS[3], 'list')
if err then
    return err
end
local due = delayqNow() + tonumber(ARGV[1])
local before = redis.call('zrange', KEYS[2], 0, 0)[1]
for i = 2, #ARGV do
    -- An element already pending is this call resent (its random id was
    -- chosen before the first send): it is not scheduled twice.
    if redis.call('zadd', KEYS[2], 'nx', due, ARGV[i]) == 1 then
        redis.call('rpush', KEYS[3], ARGV[i])
    end
end
if redis.call('zrange', KEYS[2], 0, 0)[1] ~= before then
    redis.call('publish', KEYS[4], string.format('%d', due))
end
return due
