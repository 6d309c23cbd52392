-- mapcache_remove: remove a MapCache entry and return it (Redisson's
-- RMapCache.remove).
--
-- KEYS     as prelude_mapcache says
-- ARGV[1]  publish command
-- ARGV[2]  encoded key
--
-- Returns the removed live entry, or false when the key was absent or
-- expired (an expired entry is deleted all the same and published as
-- expired). Publishes removed when listeners are registered. Reads come
-- first: a key of the wrong type fails the script before anything is written.
--
-- prelude: mapcache
local key = ARGV[2]
local now = mcNow()
local s = mcState(key)
if not s.entry then
    return false
end
mcDrop(key)
if mcDead(s, now) then
    mcPublish(9, key, mcValue(s.entry))
    return false
end
if s.listening then
    mcPublish(8, key, mcValue(s.entry))
end
return s.entry
