-- semaphore_cancel: end an acquire call that did not return its permits to
-- the caller: give back the permits it took if a reply was lost, forbid a
-- late resend of it, and give up its place in the queue.
--
-- prelude: semqueue
--          (uses its semNow, semServe)
--
-- KEYS[1..5]  as in prelude_semqueue: semaphore, queue, waiters, channel,
--             wake channel prefix
-- KEYS[6]     call marker (redisson_sc_call:{name}:<call id>)
-- ARGV[1]     permits the call asked for
-- ARGV[2]     call id
-- ARGV[3]     call marker lifetime in ms, or 0 when no acquire of the call can
--             still be in flight (no marker is then written)
-- ARGV[4]     publish command: 'publish' or 'spublish'
--
-- Returns 1 when permits taken by the call were given back, 0 otherwise.
local undone = 0
local v
if redis.call('get', KEYS[6]) == '1' then
    v = redis.call('incrby', KEYS[1], ARGV[1])
    redis.call(ARGV[4], KEYS[4], '+' .. v)
    undone = 1
end
if tonumber(ARGV[3]) > 0 then
    redis.call('set', KEYS[6], '0', 'px', ARGV[3])
end
local left = redis.call('zrem', KEYS[2], ARGV[2]) + redis.call('hdel', KEYS[3], ARGV[2])
if undone == 1 or left > 0 then
    -- The permits given back, or those this call's place held back from
    -- the waiters behind it, may serve them now.
    v = v or tonumber(redis.pcall('get', KEYS[1]))
    if v then
        semServe(v, semNow(), ARGV[4])
    end
end
return undone
