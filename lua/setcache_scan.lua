-- setcache_scan: one ZSCAN page of a SetCache, without its expired members
-- (Redisson's RSetCache iterator).
--
-- KEYS[1]  the set cache (prelude_setcache)
-- ARGV[1]  ZSCAN cursor
-- ARGV[2]  ZSCAN COUNT
--
-- Returns {next cursor, {member, ...}} with the page's members that have not
-- expired. Read-only.
--
-- prelude: setcache
local now = scNow()
local page = redis.call('zscan', KEYS[1], ARGV[1], 'count', ARGV[2])
local ms, live = page[2], {}
for i = 1, #ms, 2 do
    if tonumber(ms[i + 1]) > now then
        live[#live + 1] = ms[i]
    end
end
return {page[1], live}
