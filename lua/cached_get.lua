-- cached_get: read a value for the client-side cache together with the
-- key's remaining time to live, so that a cached value is not served past
-- the key's expiry (Bucket.Get and Map.Get with WithClientSideCaching).
--
-- KEYS[1]  bucket (string) or map (hash)
-- ARGV[1]  absent for a bucket; the encoded map key for a map
--
-- Returns {value or false, PTTL of KEYS[1] (-1: no expiry)}; WRONGTYPE for
-- a key of another type.
local v
if ARGV[1] == nil then
    v = redis.call('get', KEYS[1])
else
    v = redis.call('hget', KEYS[1], ARGV[1])
end
return {v, redis.call('pttl', KEYS[1])}
