-- prelude: rtopic
-- rtopic_publish: append one message to a reliable topic (Redisson's
-- RReliableTopic.publish), remove the subscribers whose time ran out, and
-- trim what every subscriber has consumed.
--
-- KEYS[1]  the topic's stream
-- KEYS[2]  {name}:timeout: zset of subscriber id -> expiry ms
-- ARGV[1]  encoded message (stored in field m)
-- ARGV[2]  retention without subscribers: at most this many entries (-1: no bound)
-- ARGV[3]  retention without subscribers: at most this old, in ms (0: no bound)
--
-- Returns the number of subscribers (consumer groups) after the append. A
-- key of another type is a WRONGTYPE error, and nothing is written.
local err, now = rtopicOpen(KEYS[1], KEYS[2])
if err then
    return err
end
redis.call('xadd', KEYS[1], '*', 'm', ARGV[1])
rtopicTrim(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), now)
return #redis.call('xinfo', 'groups', KEYS[1])
