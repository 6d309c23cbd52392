-- queue_settle: end a hand-over. The elements handed to takers leave the
-- in-flight list for good; every other element in it goes back to the
-- head of the queue in its order, and the list is deleted. Running it
-- again (a resend after a lost reply) finds no list and does nothing.
--
-- KEYS[1]  queue: list of encoded elements
-- KEYS[2]  in-flight list (same slot)
-- KEYS[3]  (bounded queue) free-capacity counter, redisson_bqs:{name}
-- KEYS[4]  (bounded queue) its channel, redisson_sc:redisson_bqs:{name}
-- ARGV[1]  publish command: publish or spublish (with KEYS[3])
-- ARGV[2..] the encoded elements handed over
--
-- Returns how many elements went back to the queue. With KEYS[3], the
-- counter grows by the number handed over and its new value is published,
-- as Redisson's take releases capacity.
local function counterOk(key)
    local t = redis.call('type', key).ok
    return t == 'none' or (t == 'string' and tonumber(redis.call('get', key)) ~= nil)
end
if KEYS[3] and not counterOk(KEYS[3]) then
    return redis.error_reply('WRONGTYPE the free-capacity counter is not an integer')
end
if redis.call('exists', KEYS[2]) == 0 then
    return 0
end
local handed = 0
for i = 2, #ARGV do
    handed = handed + redis.call('lrem', KEYS[2], 1, ARGV[i])
end
local back = redis.call('lrange', KEYS[2], 0, -1)
for i = #back, 1, -1 do
    redis.call('lpush', KEYS[1], back[i])
end
redis.call('del', KEYS[2])
if KEYS[3] and handed > 0 then
    local free = redis.call('incrby', KEYS[3], handed)
    redis.call(ARGV[1], KEYS[4], free)
end
return #back
