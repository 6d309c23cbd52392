-- queue_take: move up to ARGV[1] elements from the head of a queue to the
-- tail of an in-flight list, atomically, so that an element whose reply is
-- lost is still in Redis (queue_settle puts it back).
--
-- KEYS[1]  queue: list of encoded elements
-- KEYS[2]  in-flight list (same slot)
-- ARGV[1]  how many elements at most (>= 1)
--
-- Returns the moved elements, head first (an empty array when the queue is
-- empty). A key of another type is a WRONGTYPE error with nothing changed.
local t = redis.call('type', KEYS[2]).ok
if t ~= 'none' and t ~= 'list' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local want = tonumber(ARGV[1])
local moved = {}
while #moved < want do
    local chunk = redis.call('lpop', KEYS[1], math.min(want - #moved, 1000))
    if not chunk then
        break
    end
    redis.call('rpush', KEYS[2], unpack(chunk))
    for i = 1, #chunk do
        moved[#moved + 1] = chunk[i]
    end
end
return moved
