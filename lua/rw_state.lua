-- rw_state: read a read-write lock's state in one call.
--
-- KEYS[1]  lock hash
-- ARGV[1]  owner field (read side) or write field (write side)
--
-- Returns {readLocked, writeLocked, count, pttl}: readLocked = 1 when any
-- read hold exists (also under a writer that reads), writeLocked = 1 in
-- write mode, count = the field's hold count, pttl as PTTL.
local t = redis.call('type', KEYS[1])['ok']
if t == 'none' then
    return {0, 0, 0, -2}
end
if t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local mode = redis.call('hget', KEYS[1], 'mode')
local r, w = 0, 0
if mode == 'write' then
    w = 1
    if redis.call('hlen', KEYS[1]) > 2 then
        r = 1
    end
elseif mode == 'read' then
    r = 1
end
return {r, w, tonumber(redis.call('hget', KEYS[1], ARGV[1]) or 0), redis.call('pttl', KEYS[1])}
