-- inspect_map: a map's size and one HSCAN page of its entries. Writes
-- nothing.
--
-- KEYS[1]  map hash
-- ARGV[1]  HSCAN cursor
-- ARGV[2]  HSCAN COUNT hint
--
-- Returns {type, size, pttl, cursor, entries}: type = the key's Redis type
-- ('none' when absent), size its HLEN, pttl its PTTL, cursor HSCAN's next
-- cursor ('0' at the end), entries the page as {field, value, ...}. Errors:
-- WRONGTYPE when the key is not a hash.
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local page = redis.call('hscan', KEYS[1], ARGV[1], 'count', ARGV[2])
return {t, redis.call('hlen', KEYS[1]), redis.call('pttl', KEYS[1]), page[1], page[2]}
