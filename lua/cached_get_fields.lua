-- cached_get_fields: read some fields of a hash for the client-side cache
-- together with the key's remaining time to live, so that no cached value
-- is served past the key's expiry (Map.GetAll with WithClientSideCaching,
-- for the fields the cache missed).
--
-- KEYS[1]  map (hash)
-- ARGV     the encoded map keys (fields), one or more
--
-- Returns {value or false for each field in ARGV's order, PTTL of KEYS[1]
-- (-1: no expiry)}; WRONGTYPE for a key of another type.
local out = {}
for i = 1, #ARGV do
    out[i] = redis.call('hget', KEYS[1], ARGV[i])
end
out[#ARGV + 1] = redis.call('pttl', KEYS[1])
return out
