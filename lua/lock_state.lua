-- lock_state: read a lock's state in one call, refusing keys of another type.
--
-- KEYS[1]  lock hash
-- ARGV[1]  owner field
--
-- Returns {locked, count, pttl}: locked = 1 when anyone holds the lock, count =
-- the owner's hold count (0 when it holds none), pttl = remaining lease in ms
-- (-2 when free, -1 when the key has no expiry).
local t = redis.call('type', KEYS[1])['ok']
if t == 'none' then
    return {0, 0, -2}
end
if t ~= 'hash' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
return {1, tonumber(redis.call('hget', KEYS[1], ARGV[1]) or 0), redis.call('pttl', KEYS[1])}
