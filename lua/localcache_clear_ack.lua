-- localcache_clear_ack: acknowledge a clearLocalCache request of another
-- LocalCachedMap instance, once this instance has cleared its cache.
--
-- KEYS[1]  <name>:clear:<request id hex>, the request's acknowledgement count
-- KEYS[2]  redisson_sc:{<name>:clear:<request id hex>}, its channel
-- ARGV[1]  publish command
--
-- Returns the new count, or nil when the request is gone (answered or timed
-- out).
if redis.call('exists', KEYS[1]) == 0 then
  return nil
end
local n = redis.call('incrby', KEYS[1], 1)
redis.call(ARGV[1], KEYS[2], n)
return n
