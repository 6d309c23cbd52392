-- prelude: rtopic
-- rtopic_subscribe: register a subscriber of a reliable topic: its expiry in
-- the timeout zset and its consumer group, created at the start of the
-- stream as Redisson creates it, or kept when it exists (a subscriber
-- resuming under its id within its timeout).
--
-- KEYS[1]  the topic's stream
-- KEYS[2]  {name}:timeout: zset of subscriber id -> expiry ms
-- ARGV[1]  subscriber id (the group's name)
-- ARGV[2]  subscriber timeout in ms
--
-- Returns 1 when the subscriber's group existed (it resumes), 0 when it was
-- created. A key of another type is a WRONGTYPE error, and nothing is
-- written.
local err, now = rtopicOpen(KEYS[1], KEYS[2])
if err then
    return err
end
local resumed = 0
if redis.call('exists', KEYS[1]) == 1 then
    for _, g in ipairs(redis.call('xinfo', 'groups', KEYS[1])) do
        if g[2] == ARGV[1] then
            resumed = 1
        end
    end
end
if resumed == 0 then
    redis.call('xgroup', 'create', KEYS[1], ARGV[1], '0', 'MKSTREAM')
end
redis.call('zadd', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
return resumed
