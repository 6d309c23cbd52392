-- ratelimit_set: configure a Redisson-compatible RRateLimiter.
--
-- KEYS[1]  config hash {rate, interval, type, keepAliveTime}
-- KEYS[2]  available permits of the overall scope ({name}:value)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- KEYS[6]  checkpoint of the overall scope ({name}:permits:sum)
-- KEYS[7]  checkpoint of this client's scope ({name}:permits:<id>:sum)
-- ARGV[1]  'try' (only when the limiter has no config) or 'set' (replace
--          the config and reset the state of KEYS[2..7])
-- ARGV[2]  rate (permits per interval)
-- ARGV[3]  interval in ms
-- ARGV[4]  type: 0 overall, 1 per client
-- ARGV[5]  keepAliveTime in ms, 0 = none: the config expires after that
--          long without a decision
--
-- Returns 1 when the config was written, 0 when 'try' found one. A config
-- key of another type fails with WRONGTYPE and writes nothing.
local t = redis.call('type', KEYS[1]).ok
if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
if ARGV[1] == 'try' and t == 'hash' then
    return 0
end
redis.call('hset', KEYS[1], 'rate', ARGV[2], 'interval', ARGV[3], 'type', ARGV[4], 'keepAliveTime', ARGV[5])
if tonumber(ARGV[5]) > 0 then
    redis.call('pexpire', KEYS[1], ARGV[5])
else
    redis.call('persist', KEYS[1])
end
if ARGV[1] == 'set' then
    redis.call('del', KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7])
end
return 1
