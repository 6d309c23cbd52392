-- bucket_set: store a Bucket's encoded value, refusing keys of another type
-- (Set, SetWithTTL, SetIfAbsent, SetIfExists, GetAndSet).
--
-- KEYS[1]  bucket: string, the encoded value
-- ARGV[1]  encoded value
-- ARGV[2]  time to live in ms; '0' for none (the key loses any expiry)
-- ARGV[3]  mode: 'set' always, 'nx' only when missing, 'xx' only when
--          present, 'get' always and return the previous value
--
-- Returns 1 when stored, 0 when the mode's condition failed; in mode 'get',
-- the previous value or nil.
local t = redis.call('type', KEYS[1])['ok']
if t ~= 'none' and t ~= 'string' then
    return redis.error_reply('WRONGTYPE Operation against a key holding the wrong kind of value')
end
local mode = ARGV[3]
if (mode == 'nx' and t ~= 'none') or (mode == 'xx' and t == 'none') then
    return 0
end
local old = false
if mode == 'get' then
    old = redis.call('get', KEYS[1])
end
if ARGV[2] ~= '0' then
    redis.call('set', KEYS[1], ARGV[1], 'px', ARGV[2])
else
    redis.call('set', KEYS[1], ARGV[1])
end
if mode == 'get' then
    return old
end
return 1
