-- prelude: rtopic
-- rtopic_settle: a live subscriber's acknowledgement of the entries it
-- handled, the refresh of its expiry, the removal of subscribers whose time
-- ran out, and the trim of what every subscriber has consumed.
--
-- KEYS[1]  the topic's stream
-- KEYS[2]  {name}:timeout: zset of subscriber id -> expiry ms
-- ARGV[1]  subscriber id (the group's name)
-- ARGV[2]  subscriber timeout in ms
-- ARGV[3]  retention without subscribers: at most this many entries (-1: no bound)
-- ARGV[4]  retention without subscribers: at most this old, in ms (0: no bound)
-- ARGV[5..] entry ids to acknowledge
--
-- Returns the number of entries acknowledged, or -1 when the subscriber is
-- no longer registered (its time ran out, or it was removed): then nothing
-- is acknowledged or refreshed. A key of another type is a WRONGTYPE error.
local err, now = rtopicOpen(KEYS[1], KEYS[2])
if err then
    return err
end
if not redis.call('zscore', KEYS[2], ARGV[1]) or redis.call('exists', KEYS[1]) == 0 then
    return -1
end
redis.call('zadd', KEYS[2], 'XX', now + tonumber(ARGV[2]), ARGV[1])
local acked = 0
for i = 5, #ARGV, 100 do
    acked = acked + redis.call('xack', KEYS[1], ARGV[1], unpack(ARGV, i, math.min(i + 99, #ARGV)))
end
rtopicTrim(KEYS[1], tonumber(ARGV[3]), tonumber(ARGV[4]), now)
return acked
