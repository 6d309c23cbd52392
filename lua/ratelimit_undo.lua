-- ratelimit_undo: take back a grant whose reply the caller never got (its
-- context ended, or the connection broke, while the call was in flight).
--
-- KEYS[1]  config hash {rate, interval, type, keepAliveTime}
-- KEYS[2]  available permits of the overall scope ({name}:value)
-- KEYS[3]  available permits of this client ({name}:value:<client id>)
-- KEYS[4]  grant log of the overall scope ({name}:permits)
-- KEYS[5]  grant log of this client ({name}:permits:<client id>)
-- KEYS[6]  checkpoint of the overall scope ({name}:permits:sum)
-- KEYS[7]  checkpoint of this client's scope ({name}:permits:<id>:sum)
-- ARGV[1]  the log member the call would have written (byte 16, its 16
--          random bytes, its permits as uint32 little-endian)
--
-- Returns 1 when the grant was found and removed, 0 otherwise. Only that
-- one entry is removed: it names exactly the call being undone. The
-- count goes up by its permits (capped at the rate) for Redisson clients,
-- and the checkpoint is dropped, so the next decision sums the log.
--
-- prelude: ratelimit_config
--          (uses its rateScope; the config is read here as it is, unchecked)
local cfg = redis.call('hmget', KEYS[1], 'rate', 'type')
local valueKey, logKey, sumKey = rateScope(cfg[2])
if redis.call('type', logKey).ok ~= 'zset' or redis.call('zrem', logKey, ARGV[1]) == 0 then
    return 0
end
redis.call('del', sumKey)
local b1, b2, b3, b4 = string.byte(ARGV[1], 18, 21)
local rate, v = tonumber(cfg[1]), nil
if redis.call('type', valueKey).ok == 'string' then
    v = tonumber(redis.call('get', valueKey))
end
if v and rate then
    redis.call('set', valueKey, math.min(v + b1 + b2 * 256 + b3 * 65536 + b4 * 16777216, rate), 'keepttl')
end
return 1
