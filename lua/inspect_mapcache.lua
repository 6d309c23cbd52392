-- inspect_mapcache: a MapCache's size and one HSCAN page of its entries,
-- with each entry's expiry and idle deadline. Writes nothing.
--
-- KEYS[1]  the entries hash
-- KEYS[2]  redisson__timeout__set:{name}
-- KEYS[3]  redisson__idle__set:{name}
-- ARGV[1]  HSCAN cursor
-- ARGV[2]  HSCAN COUNT hint
--
-- Returns {type, size, cursor, entries, now}: type = the hash's Redis type
-- ('none' when absent), size its HLEN, cursor HSCAN's next cursor ('0' at
-- the end), entries the page as {field, entry, expiry, idle, ...} (expiry
-- and idle the zsets' scores in ms, nil without), now the server's clock in
-- ms. Errors: WRONGTYPE when the hash or a zset is of another type.
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local page = redis.call('hscan', KEYS[1], ARGV[1], 'count', ARGV[2])
local out = {}
for i = 1, #page[2], 2 do
    local f = page[2][i]
    out[#out + 1] = f
    out[#out + 1] = page[2][i + 1]
    out[#out + 1] = redis.call('zscore', KEYS[2], f)
    out[#out + 1] = redis.call('zscore', KEYS[3], f)
end
local now = redis.call('time')
return {t, redis.call('hlen', KEYS[1]), page[1], out, tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)}
