-- prelude: rtopic
-- rtopic_unsubscribe: remove a subscriber of a reliable topic for good
-- (Redisson's removeListener of the last listener): its consumer group and
-- its expiry; what only it had not consumed is trimmed.
--
-- KEYS[1]  the topic's stream
-- KEYS[2]  {name}:timeout: zset of subscriber id -> expiry ms
-- ARGV[1]  subscriber id (the group's name)
-- ARGV[2]  retention without subscribers: at most this many entries (-1: no bound)
-- ARGV[3]  retention without subscribers: at most this old, in ms (0: no bound)
--
-- Returns 1 when the subscriber was registered, 0 otherwise. A key of
-- another type is a WRONGTYPE error, and nothing is removed.
local err = rtopicWrongType(KEYS[1], KEYS[2])
if err then
    return err
end
local found = redis.call('zrem', KEYS[2], ARGV[1])
if redis.call('exists', KEYS[1]) == 1 then
    found = math.max(found, redis.call('xgroup', 'destroy', KEYS[1], ARGV[1]))
    rtopicTrim(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), rtopicNow())
end
return found
