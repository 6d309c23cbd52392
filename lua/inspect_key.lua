-- inspect_key: what ListObjects needs to name one key's kind. Writes
-- nothing.
--
-- KEYS[1]  any key
--
-- Returns {type, pttl, shape}: the Redis type ('none' when it went away
-- meanwhile), the PTTL, and for a hash its shape: 'rwlock' (a field 'mode'),
-- 'ratelimiter' (fields 'rate' and 'interval'), 'lock' (at most 64 fields,
-- each an owner "<id>:<n>" or "<id>:<n>:write" with an integer count), else
-- 'map'; '' for other types.
local t = redis.call('type', KEYS[1])['ok']
local shape = ''
if t == 'hash' then
    if redis.call('hexists', KEYS[1], 'mode') == 1 then
        shape = 'rwlock'
    elseif redis.call('hexists', KEYS[1], 'rate') == 1 and redis.call('hexists', KEYS[1], 'interval') == 1 then
        shape = 'ratelimiter'
    elseif redis.call('hlen', KEYS[1]) <= 64 then
        shape = 'lock'
        local fields = redis.call('hgetall', KEYS[1])
        for i = 1, #fields, 2 do
            local f = string.gsub(fields[i], ':write$', '')
            if not string.find(f, '^.+:%d+$') or not string.find(fields[i + 1], '^%d+$') then
                shape = 'map'
                break
            end
        end
    else
        shape = 'map'
    end
end
return {t, redis.call('pttl', KEYS[1]), shape}
