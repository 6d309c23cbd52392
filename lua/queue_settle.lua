-- queue_settle: end a hand-over. The elements handed to takers leave the
-- in-flight list for good; every other element in it goes back to the
-- head of the queue in its order, and the list is deleted and leaves the
-- queue's registry of in-flight lists. Running it again (a resend after a
-- lost reply) finds no list and does nothing. A tail taker's list (its name
-- ends in ":last") goes back to the tail instead (see queue_take).
-- prelude: list
--
-- KEYS[1]  queue: list of encoded elements
-- KEYS[2]  in-flight list (same slot)
-- KEYS[3]  registry of in-flight lists (see queue_take)
-- KEYS[4]  (bounded queue) free-capacity counter, redisson_bqs:{name}
-- KEYS[5]  (bounded queue) its channel, redisson_sc:redisson_bqs:{name}
-- ARGV[1]  publish command: publish or spublish (with KEYS[4])
-- ARGV[2..] the encoded elements handed over
--
-- Returns how many elements went back to the queue; -1 when elements were
-- handed over but another client had put the list back (its registration
-- had expired; queue_take left the mark recovered:<list key>, removed here).
-- A list gone without that mark was settled by an earlier run of this call.
-- With KEYS[4], the counter grows by the number handed over and its new
-- value is published, as Redisson's take releases capacity.
local function counterOk(key)
    local t = redis.call('type', key).ok
    return t == 'none' or (t == 'string' and tonumber(redis.call('get', key)) ~= nil)
end
if KEYS[4] and not counterOk(KEYS[4]) then
    return redis.error_reply('WRONGTYPE the free-capacity counter is not an integer')
end
local rt = redis.call('type', KEYS[3]).ok
if rt ~= 'none' and rt ~= 'zset' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
redis.call('zrem', KEYS[3], KEYS[2])
if redis.call('exists', KEYS[2]) == 0 then
    if #ARGV > 1 and redis.call('zrem', KEYS[3], 'recovered:' .. KEYS[2]) == 1 then
        return -1
    end
    return 0
end
local handed = 0
for i = 2, #ARGV do
    handed = handed + redis.call('lrem', KEYS[2], 1, ARGV[i])
end
local back = redis.call('lrange', KEYS[2], 0, -1)
queue_put_back(KEYS[2], KEYS[1], back)
redis.call('del', KEYS[2])
if KEYS[4] and handed > 0 then
    local free = redis.call('incrby', KEYS[4], handed)
    redis.call(ARGV[1], KEYS[5], free)
end
return #back
