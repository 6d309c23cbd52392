-- mapcache_read_all: every live MapCache entry (Redisson's
-- RMapCache.readAllMap).
--
-- KEYS     as prelude_mapcache says
-- ARGV[1]  publish command (unused: nothing is published)
--
-- Returns {key, entry, key, entry, ...} for the entries that have not
-- expired, whether or not the background eviction has removed the expired
-- ones yet (they are left to it). Each returned entry's access is recorded,
-- as by mapcache_get. Reads come first: a key of the wrong type fails the
-- script before anything is written.
--
-- prelude: mapcache
local now = mcNow()
local all = redis.call('hgetall', KEYS[1])
local o = mcOptions()
local live, states = {}, {}
for i = 1, #all, 2 do
    local s = mcState(all[i], o)
    if not mcDead(s, now) then
        live[#live + 1] = all[i]
        live[#live + 1] = all[i + 1]
        states[#states + 1] = s
    end
end
for j, s in ipairs(states) do
    mcTouch(live[2 * j - 1], s, now)
end
return live
