-- mapcache_get: read a MapCache entry unless it expired (Redisson's
-- RMapCache.get and containsKey).
--
-- KEYS     as prelude_mapcache says
-- ARGV[1]  publish command
-- ARGV[2]  encoded key
-- ARGV[3]  'value' (return the entry), 'exists' (return 1 or 0) or 'ttl'
--          (return {entry, its time to live in ms, -1 when it has none})
--
-- Returns the live entry (or 1, or {entry, ttl}), or false (or 0) when the
-- key is absent or expired. An entry found expired is deleted (published as expired), whether
-- or not the background eviction has reached it yet. A live entry's access is
-- recorded: its idle deadline moves to now + its max idle, and with a max
-- size its LRU time or LFU count. Reads come first: a key of the wrong type
-- fails the script before anything is written.
--
-- prelude: mapcache
local key = ARGV[2]
local now = mcNow()
local s = mcState(key)
local found = s.entry
if mcDead(s, now) then
    mcDrop(key)
    mcPublish(9, key, mcValue(s.entry))
    found = false
elseif found then
    mcTouch(key, s, now)
end
if ARGV[3] == 'exists' then
    return found and 1 or 0
end
if ARGV[3] == 'ttl' and found then
    return {found, s.timeout and (s.timeout - now) or -1}
end
return found
