-- cached_get_keys: read some string keys for the client-side cache, each
-- with its remaining time to live, so that no cached value is served past
-- its key's expiry (Buckets.Get with WithClientSideCaching, for the names
-- the cache missed). On Redis Cluster the keys share one hash slot.
--
-- KEYS     the buckets (strings), one or more
--
-- Returns {value or false, PTTL (-1: no expiry), ...} two items per key in
-- KEYS's order; a key of another type answers false with PTTL -3 (MGET's
-- "missing", which the caller does not cache).
local out = {}
for i = 1, #KEYS do
    local v = redis.pcall('get', KEYS[i])
    if type(v) == 'table' then
        out[2 * i - 1] = false
        out[2 * i] = -3
    else
        out[2 * i - 1] = v
        out[2 * i] = redis.call('pttl', KEYS[i])
    end
end
return out
