-- mapcache_scan: one HSCAN page of a MapCache, without its expired entries
-- (Redisson's RMapCache iterator).
--
-- KEYS     as prelude_mapcache says
-- ARGV[1]  publish command (unused: nothing is published)
-- ARGV[2]  HSCAN cursor
-- ARGV[3]  HSCAN COUNT
--
-- Returns {next cursor, {key, entry, key, entry, ...}} with the page's
-- entries that have not expired. Read-only: an iteration is no access (idle
-- deadlines do not move) and expired entries are left to the eviction.
--
-- prelude: mapcache
local now = mcNow()
local page = redis.call('hscan', KEYS[1], ARGV[2], 'count', ARGV[3])
local kv, live = page[2], {}
for i = 1, #kv, 2 do
    local t = redis.call('zscore', KEYS[2], kv[i])
    local d = redis.call('zscore', KEYS[3], kv[i])
    if not ((t and tonumber(t) <= now) or (d and tonumber(d) <= now)) then
        live[#live + 1] = kv[i]
        live[#live + 1] = kv[i + 1]
    end
end
return {page[1], live}
