-- queue_take: move up to ARGV[1] elements from the head of a queue to the
-- tail of an in-flight list, atomically, so that an element whose reply is
-- lost is still in Redis (queue_settle puts it back). The in-flight list is
-- registered first, with a deadline, in the queue's registry of in-flight
-- lists; and one list whose deadline has passed (its client died between a
-- move and its settle) is first put back at the head of the queue, in its
-- order, so that the elements this call moves include it.
-- prelude: list
--
-- An in-flight list whose name ends in ":last" is a tail taker's (a
-- BlockingDeque's TakeLast): its elements come from the tail of the queue,
-- the first taken first in the list, and go back to the tail in their
-- order, so that the first taken is the tail again.
--
-- KEYS[1]  queue: list of encoded elements
-- KEYS[2]  in-flight list (same slot)
-- KEYS[3]  registry: zset in-flight list key -> deadline (server ms), and
--          recovered:<list key> -> when the mark of a put-back list ends
-- ARGV[1]  how many elements at most (>= 0: 0 registers and recovers only)
-- ARGV[2]  the registration's lease (ms): its deadline is now + lease
--
-- Returns the moved elements, head first (an empty array when the queue is
-- empty). A key of another type is a WRONGTYPE error with nothing changed.
local function typeIs(key, want)
    local t = redis.call('type', key).ok
    return t == 'none' or t == want
end
if not (typeIs(KEYS[1], 'list') and typeIs(KEYS[2], 'list') and typeIs(KEYS[3], 'zset')) then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local now = redis.call('time')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local dead = redis.call('zrangebyscore', KEYS[3], '-inf', ms, 'limit', 0, 1)[1]
if dead and string.sub(dead, 1, 10) == 'recovered:' then
    redis.call('zrem', KEYS[3], dead) -- an old mark: its list's client is gone
elseif dead then
    -- The mark tells a settle of that list, should its client be alive
    -- after all, that its elements went back (it lasts 10 leases).
    redis.call('zadd', KEYS[3], ms + 10 * tonumber(ARGV[2]), 'recovered:' .. dead)
    if typeIs(dead, 'list') then
        queue_put_back(dead, KEYS[1], redis.call('lrange', dead, 0, -1))
        redis.call('del', dead)
    end
    redis.call('zrem', KEYS[3], dead)
end
redis.call('zadd', KEYS[3], ms + tonumber(ARGV[2]), KEYS[2])
local want = tonumber(ARGV[1])
local pop = 'lpop'
if string.sub(KEYS[2], -5) == ':last' then
    pop = 'rpop'
end
local moved = {}
while #moved < want do
    local chunk = redis.call(pop, KEYS[1], math.min(want - #moved, 1000))
    if not chunk then
        break
    end
    redis.call('rpush', KEYS[2], unpack(chunk))
    for i = 1, #chunk do
        moved[#moved + 1] = chunk[i]
    end
end
return moved
